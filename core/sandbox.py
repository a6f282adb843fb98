"""What confining commands with bubblewrap (``bwrap``, Linux) shares between its users: the modes of a ``sandbox``
setting, the confinement a run gets (:class:`Sandbox`), and finding a ``bwrap`` that works here.

Two kinds of commands are confined, each with its own bubblewrap options: a probe's build and test commands
(:mod:`benchwright.core.probes.sandbox`: the filesystem read-only, the workspace writable) and the agent's
CommandLine tool (:mod:`benchwright.core.agent.sandbox`: only the system's programs and the workspace visible, both
read-only, no network).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass

from .errors import BenchwrightError

SANDBOX_MODES = ("auto", "required", "off")
"""The values of a ``sandbox`` setting: ``auto`` (bubblewrap when it works here, else unconfined and said so),
``required`` (without a working bubblewrap nothing runs) and ``off`` (unconfined, said so)."""

DEFAULT_SANDBOX_MODE = "auto"

MISSING = "bubblewrap"
"""What a ``required`` sandbox lacks when bubblewrap does not work here ("cannot run here: missing bubblewrap")."""


@dataclass(frozen=True)
class Sandbox:
    """How a run's commands are confined.

    Attributes:
        prefix: the argv put before each command (empty: unconfined).
        note: what the run says of its confinement (e.g. ``sandboxed (bubblewrap: ...)``, ``not sandboxed
            (bubblewrap unavailable)``); shown with the run and recorded with it.
        missing: :data:`MISSING` when the mode is ``required`` and bubblewrap does not work here, else None.
    """

    prefix: tuple[str, ...] = ()
    note: str = ""
    missing: str | None = None

    @property
    def confined(self) -> bool:
        """True when commands run under bubblewrap."""
        return bool(self.prefix)


def mode_problem(value: object) -> str | None:
    """Why ``value`` is not a sandbox mode (naming the modes), or None when it is one of :data:`SANDBOX_MODES`."""
    if value in SANDBOX_MODES:
        return None
    return f"{value!r} is not a sandbox mode; use one of {', '.join(SANDBOX_MODES)}"


def checked_mode(value: object, source: str) -> str:
    """``value`` when it is one of :data:`SANDBOX_MODES`.

    Raises:
        BenchwrightError: it is not; the message names ``source`` (where the value came from) and the modes.
    """
    problem = mode_problem(value)
    if problem:
        raise BenchwrightError(f"{source}: {problem}")
    return str(value)


@functools.cache
def _trial(bwrap: str, options: tuple[str, ...]) -> bool:
    try:
        trial = subprocess.run([bwrap, *options, "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return trial.returncode == 0


def working_bwrap(options: tuple[str, ...]) -> str | None:
    """The path of ``bwrap`` on PATH when ``bwrap OPTIONS true`` succeeds (tried once per path and options, so a
    kernel or container that forbids what the options ask, e.g. a network namespace, counts as not working), or
    None."""
    found = shutil.which("bwrap")
    return found if found is not None and _trial(found, tuple(options)) else None
