"""Keeping a probe's commands inside their workspace: bubblewrap (``bwrap``) on Linux.

Every command of a run (configure, ``build``, ``unit_test``, ``customized_check``) runs as
``bwrap --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /var/tmp
--bind WS WS CMD``: the whole filesystem read-only, ``/tmp`` and ``/var/tmp`` private and empty, and only the
workspace ``WS`` writable (bwrap mounts in the order given, so the workspace is bound after ``/tmp`` is
replaced, also when the workspace lies under ``/tmp``). HOME and TMPDIR stay inside the workspace.

The mode comes from ``BENCHWRIGHT_PROBE_SANDBOX``, else ``[probes] sandbox`` in the user configuration file
(:func:`benchwright.core.config.config_path`), else ``auto``:

* ``auto``: bubblewrap when ``bwrap`` is on PATH and a one-time trial (``bwrap --ro-bind / / ... true``)
  works; otherwise commands run unconfined and the run says :data:`UNAVAILABLE`;
* ``required``: without a working bubblewrap the run is "cannot run here: missing bubblewrap";
* ``off``: commands run unconfined (:data:`OFF`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import load_user_config
from ..sandbox import DEFAULT_SANDBOX_MODE, MISSING, SANDBOX_MODES, Sandbox, checked_mode, working_bwrap

__all__ = ["DEFAULT_SANDBOX_MODE", "ENV_SANDBOX", "MISSING", "OFF", "SANDBOXED", "SANDBOX_MODES", "UNAVAILABLE",
           "Sandbox", "bubblewrap", "sandbox_for", "sandbox_mode"]

ENV_SANDBOX = "BENCHWRIGHT_PROBE_SANDBOX"

SANDBOXED = "sandboxed (bubblewrap: only the workspace is writable)"
UNAVAILABLE = "not sandboxed (bubblewrap unavailable)"
OFF = "not sandboxed (probes sandbox = \"off\")"


_PRIVATE = (Path("/tmp"), Path("/var/tmp"))


def _kept_readable() -> list[Path]:
    """What must stay readable although it lies under a private folder: this Python (a virtual environment
    in a checkout under /tmp, as in a fresh CI clone) and benchwright's own files (the bundled probes)."""
    import sys

    found: list[Path] = []
    for raw in (sys.prefix, sys.base_prefix, sys.exec_prefix, Path(sys.executable).resolve().parent,
                Path(__file__).resolve().parents[2]):
        path = Path(raw).resolve()
        if any(path.is_relative_to(private) for private in _PRIVATE) and path not in found and path.exists():
            found.append(path)
    return found


def _options(writable: Path) -> list[str]:
    kept = [arg for path in _kept_readable() for arg in ("--ro-bind", str(path), str(path))]
    return ["--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", *kept, "--bind", str(writable), str(writable)]


def sandbox_mode(explicit: str | None = None) -> str:
    """The sandbox mode: ``explicit``, else ``$BENCHWRIGHT_PROBE_SANDBOX``, else ``[probes] sandbox`` of the user
    configuration, else ``auto``.

    Raises:
        BenchwrightError: the value is not one of :data:`SANDBOX_MODES` (naming where it came from), or the user
            configuration cannot be read.
    """
    if explicit is not None:
        value, source = explicit, "sandbox"
    elif os.environ.get(ENV_SANDBOX):
        value, source = os.environ[ENV_SANDBOX], ENV_SANDBOX
    else:
        probes = load_user_config().get("probes", {})
        value = probes.get("sandbox", DEFAULT_SANDBOX_MODE) if isinstance(probes, dict) else DEFAULT_SANDBOX_MODE
        source = "[probes] sandbox in the user configuration"
    return checked_mode(value, source)


def bubblewrap() -> str | None:
    """The path of a working ``bwrap`` on PATH (tried once per path with ``true``), or None."""
    return working_bwrap(tuple(_options(Path("/"))))


def sandbox_for(workspace_root: Path, mode: str | None = None) -> Sandbox:
    """The confinement of the commands of a run whose workspace is ``workspace_root`` under ``mode`` (default:
    :func:`sandbox_mode`).

    Raises:
        BenchwrightError: an unknown mode (:func:`sandbox_mode`).
    """
    mode = sandbox_mode(mode)
    if mode == "off":
        return Sandbox(note=OFF)
    bwrap = bubblewrap()
    if bwrap is None:
        return Sandbox(note=UNAVAILABLE, missing=MISSING if mode == "required" else None)
    return Sandbox(prefix=(bwrap, *_options(Path(workspace_root))), note=SANDBOXED)
