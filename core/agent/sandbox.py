"""A second wall around the agent's CommandLine tool: each command runs under bubblewrap (``bwrap``, Linux).

The argument checks of :func:`benchwright.core.agent.tools.check_command` are the first wall (an allowlist, no
shell, no path out of the workspace). Should they miss something (an option nobody thought of, a link followed
out), the command still sees only this (:func:`agent_sandbox`)::

    bwrap --die-with-parent --new-session --unshare-all            # no network, own pid/ipc/uts namespaces
          --ro-bind /usr /usr  --symlink usr/bin /bin ...           # the system's programs (/bin, /lib, /lib64,
                                                                    #  /sbin as links or folders, as they exist)
          --ro-bind /etc/ld.so.cache ... /etc/localtime /etc/passwd /etc/group
          --dev /dev  --ro-bind WS WS  [--tmpfs WS/.git --remount-ro WS/.git]
          --remount-ro /dev --remount-ro /  --chdir WS
          --clearenv --setenv PATH ... --setenv LANG C.UTF-8 --setenv LC_ALL C.UTF-8  -- PROGRAM ARGS

Only the system's programs and the workspace ``WS`` are visible, all read-only (the root and ``/dev`` are
remounted read-only after the binds, so nothing is writable, not even a private ``/tmp``); no ``/proc``, no home,
no network; the environment is exactly the command's (no API keys). ``/etc/passwd`` and ``/etc/group`` (account
names, no passwords) and ``/etc/localtime`` are bound so that ``ls -l`` and ``stat`` show the same owners and
times as an unconfined command: a run's tool outputs do not depend on the mode it ran under. A workspace under
``/tmp`` works (it is bound at its own path; nothing replaces ``/tmp`` first). An allowed program that is a link
to a file outside the system folders (``/usr/local/bin/rg`` into ``/opt``) gets that file bound read-only.

The mode comes from ``$BENCHWRIGHT_AGENT_SANDBOX``, else ``[agent] sandbox`` of benchwright.toml
(``AgentSettings.sandbox``), else ``auto`` (the modes of :data:`benchwright.core.sandbox.SANDBOX_MODES`):

* ``auto``: bubblewrap when a one-time trial with these options works; otherwise commands run unconfined, under
  the argument checks only, and the run records :data:`UNAVAILABLE`;
* ``required``: without a working bubblewrap no command runs: the run fails with :data:`REQUIRED_MISSING`;
* ``off``: commands run unconfined and the run records :data:`OFF`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import BenchwrightError
from ..sandbox import DEFAULT_SANDBOX_MODE, MISSING, Sandbox, checked_mode, working_bwrap

ENV_SANDBOX = "BENCHWRIGHT_AGENT_SANDBOX"
"""The environment variable that sets the agent's sandbox mode (over ``[agent] sandbox``)."""

SANDBOXED = "sandboxed (bubblewrap: the workspace read-only, no network, nothing else visible)"
UNAVAILABLE = "not sandboxed (bubblewrap unavailable): commands ran unconfined, under the argument checks only"
OFF = 'not sandboxed (agent sandbox = "off"): commands ran unconfined, under the argument checks only'
REQUIRED_MISSING = ('cannot run here: missing bubblewrap (agent sandbox = "required"); install bubblewrap, or set '
                    f'[agent] sandbox (or {ENV_SANDBOX}) to "auto" or "off"')
"""The reason of a run refused because its ``required`` sandbox does not work here."""

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Folders of the system's programs, visible read-only (a link such as Debian's ``/bin -> usr/bin`` is recreated
as the same link)."""
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group")
"""Files of ``/etc`` visible read-only (when they exist): the dynamic linker's cache, the time zone, and the account
and group names ``ls -l`` and ``stat`` show."""


def agent_sandbox_mode(configured: str | None = None) -> str:
    """The agent's sandbox mode: ``$BENCHWRIGHT_AGENT_SANDBOX``, else ``configured`` (``[agent] sandbox``), else
    ``auto``.

    Raises:
        BenchwrightError: the value is not a sandbox mode (the message names where it came from).
    """
    if os.environ.get(ENV_SANDBOX):
        return checked_mode(os.environ[ENV_SANDBOX], ENV_SANDBOX)
    if configured is not None:
        return checked_mode(configured, "[agent] sandbox")
    return DEFAULT_SANDBOX_MODE


def _system_options() -> list[str]:
    out: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            out += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            out += ["--ro-bind", folder, folder]
    for name in SYSTEM_FILES:
        if os.path.exists(name):
            out += ["--ro-bind", name, name]
    return out


def _outside_programs(programs: Iterable[str], path: str) -> list[str]:
    """``--ro-bind REAL REAL`` for each program found on ``path`` whose real file lies outside the system folders."""
    system = [Path(os.path.realpath(d)) for d in SYSTEM_DIRS if os.path.isdir(d)]
    out: list[str] = []
    for program in programs:
        found = shutil.which(program, path=path)
        if found is None:
            continue
        real = Path(os.path.realpath(found))
        if not any(real.is_relative_to(d) for d in system) and str(real) not in out:
            out += ["--ro-bind", str(real), str(real)]
    return out


def sandbox_options(root: Path, env: Mapping[str, str], *, programs: Iterable[str] = (),
                    path: str = "/usr/bin:/bin") -> list[str]:
    """The bubblewrap options (before ``-- PROGRAM ARGS``) confining a command to the workspace ``root`` with
    exactly the environment ``env`` (see the module docstring); ``programs`` (found on ``path``) that live outside
    the system folders are bound read-only too."""
    root_text = str(root)
    git = root / ".git"
    # git's metadata is hidden under an empty read-only tmpfs (its config may hold a remote URL with a token)
    hide = ["--tmpfs", str(git), "--remount-ro", str(git)] if git.is_dir() and not git.is_symlink() else []
    options = ["--die-with-parent", "--new-session", "--unshare-all", *_system_options(),
               *_outside_programs(programs, path), "--dev", "/dev", "--ro-bind", root_text, root_text, *hide,
               "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", root_text, "--clearenv"]
    for key, value in env.items():
        options += ["--setenv", key, value]
    return options


def agent_sandbox(root: Path, mode: str | None, env: Mapping[str, str], *, programs: Iterable[str] = (),
                  path: str = "/usr/bin:/bin") -> Sandbox:
    """The confinement of the CommandLine commands of a run in the workspace ``root``: under ``mode`` (resolved by
    :func:`agent_sandbox_mode`: the environment variable first), with the command environment ``env``. The
    prefix ends with ``--``; the program name and its arguments follow.

    Returns:
        ``prefix`` empty and ``note`` :data:`OFF` or :data:`UNAVAILABLE` when commands run unconfined (with
        ``missing`` set when the mode is ``required``), else the bwrap argv and :data:`SANDBOXED`.

    Raises:
        BenchwrightError: an unknown mode.
    """
    mode = agent_sandbox_mode(mode)
    if mode == "off":
        return Sandbox(note=OFF)
    options = sandbox_options(Path(root), env, programs=programs, path=path)
    trial = sandbox_options(Path("/usr"), env)  # the same walls around a folder that always exists
    bwrap = working_bwrap(tuple(trial))
    if bwrap is None:
        return Sandbox(note=UNAVAILABLE, missing=MISSING if mode == "required" else None)
    return Sandbox(prefix=(bwrap, *options, "--"), note=SANDBOXED)


def require_sandbox(mode: str | None) -> None:
    """Refuse early (before a job starts) when ``mode`` resolves to ``required`` and bubblewrap does not work here.

    Raises:
        BenchwrightError: :data:`REQUIRED_MISSING`; or an unknown mode.
    """
    if agent_sandbox_mode(mode) == "required" and agent_sandbox(Path("/usr"), "required", {}).missing:
        raise BenchwrightError(REQUIRED_MISSING)
