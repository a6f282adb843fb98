"""Run one probe command so that none of its descendants outlives it (Linux; run as a script).

Usage (by :mod:`benchwright.core.probes.runner`, never by hand)::

    python -I -S _supervise.py PARENT_PID -- ARGV...

The supervisor marks itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4+), so every
process the command starts that loses its parent (``setsid``, a double fork, a daemon) is reparented to
the supervisor rather than to init: whatever the command leaves behind stays a descendant of the
supervisor, and nothing else is. It then runs ARGV, waits for it, and kills (SIGKILL) and reaps every
remaining descendant, found by walking ``/proc``, until it has no children left. It exits as the command
did: with its exit code, or killed by the same signal.

It does the same cleanup when it gets SIGTERM, SIGHUP or SIGINT (the runner's timeout and cancellation
send SIGTERM), and when the process that started it dies, even by SIGKILL (``PR_SET_PDEATHSIG`` sends it
SIGTERM). Only stdlib modules are imported, so it can start with ``-I -S`` (no site, no user environment).

Exit codes of its own: 126 when ARGV cannot be run (the reason is printed on stderr), 125 on a usage error.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


class _Stop(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, _frame) -> None:
    raise _Stop(signum)


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Pids of every live process below ``root`` (walks ``/proc/*/stat``); empty when ``/proc`` is missing."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _kill_all_and_reap(me: int) -> None:
    """SIGKILL every descendant and reap children until there are none left."""
    while True:
        for pid in descendants(me):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: _supervise.py PARENT_PID -- ARGV...", file=sys.stderr)
        return 125
    parent, argv = int(args[0]), args[2:]
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _on_signal)
    me = os.getpid()
    stopped: int | None = None
    status = 0
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the runner died before PDEATHSIG was armed
            return 128 + signal.SIGTERM
        try:
            child = os.posix_spawnp(argv[0], argv, os.environ)
        except OSError as error:
            print(f"cannot run {argv[0]}: {error.strerror or error}", file=sys.stderr)
            return 126
        while True:
            pid, status = os.waitpid(-1, 0)
            if pid == child:
                break  # other children are orphans reparented here; they die below
    except _Stop as stop:
        stopped = stop.signum
    finally:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        _kill_all_and_reap(me)
    if stopped is not None:
        return 128 + stopped
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            if signum != signal.SIGKILL:
                signal.signal(signum, signal.SIG_DFL)
            os.kill(me, signum)  # die the way the command died, so the runner sees the same status
        except (OSError, ValueError):
            pass
        return 128 + signum
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
