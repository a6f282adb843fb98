"""SIGTERM and SIGHUP handled like Ctrl+C, for every command of the CLI (one mechanism, installed by the
top-level group around whichever command runs).

While a command runs, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` in the main thread exactly where Ctrl+C
would, so the cleanup Ctrl+C already gets runs for them too: a probe's command and everything it started are
killed and its workspace removed, a judging or curation job is cancelled (what finished stays stored), an
import's or a release's transaction is rolled back. Inside ``asyncio.run`` the signal is handed to asyncio's own
Ctrl+C handler, which cancels the main task first (so ``finally`` blocks and client shutdown run) and raises
``KeyboardInterrupt`` afterwards. The command then exits with ``128 + signal number``: 130 after Ctrl+C, 143
after SIGTERM, 129 after SIGHUP (:func:`interrupt_exit_code`).

Further SIGTERM or SIGHUP signals are ignored once the first one is being handled, so they cannot break the
cleanup half-way (a second Ctrl+C still interrupts it; SIGKILL cannot be handled by anyone). A SIGHUP that was
ignored when benchwright started (``nohup``) stays ignored. After SIGHUP, standard streams that are a terminal
are pointed at ``/dev/null`` first: the terminal is gone, and writing to it would fail during cleanup.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals treated like Ctrl+C (SIGINT) while a command runs."""

_received: list[int] = []
_all_or_nothing: list[str] = []  # set by a command whose writes are one transaction (see declare_all_or_nothing)


def _detach_from_terminal() -> None:
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            if os.isatty(fd):
                os.dup2(null, fd)
    os.close(null)


def _handler(signum: int, frame) -> None:
    if _received:
        return  # the first signal's cleanup is under way; let it finish
    _received.append(signum)
    if signum == signal.SIGHUP:
        _detach_from_terminal()
    current = signal.getsignal(signal.SIGINT)
    if callable(current) and current is not signal.default_int_handler:
        current(signal.SIGINT, frame)  # asyncio.run's Ctrl+C handler: cancel the main task, like Ctrl+C
        return
    loop = _running_loop()
    if loop is not None:
        # asyncio.run installed no Ctrl+C handler (SIGINT was ignored, as for a script's background job): raise
        # between two steps of the loop, never inside a task's code (a reply that has arrived is still
        # recorded); asyncio.run then cancels every task at its next await, as after Ctrl+C.
        loop.call_soon_threadsafe(_raise_interrupt)
        return
    raise KeyboardInterrupt


def _running_loop():
    asyncio = sys.modules.get("asyncio")  # not imported: no event loop can be running
    return asyncio.events._get_running_loop() if asyncio is not None else None


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP act as Ctrl+C (see the module docstring); the previous
    handlers are restored after it. Does nothing outside the main thread (signals can only be handled
    there)."""
    _received.clear()
    _all_or_nothing.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, object] = {}
    for signum in HANDLED_SIGNALS:
        current = signal.getsignal(signum)
        if signum == signal.SIGHUP and current is signal.SIG_IGN:
            continue  # nohup: the user asked to survive the terminal closing
        previous[signum] = current
        signal.signal(signum, _handler)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def received_signal() -> int | None:
    """The SIGTERM or SIGHUP that interrupted the current command, or None (none, or Ctrl+C)."""
    return _received[0] if _received else None


def interrupt_exit_code() -> int:
    """The exit code of an interrupted command: 128 + the signal's number (130 for Ctrl+C)."""
    return 128 + (received_signal() or signal.SIGINT)


def interrupt_message() -> str:
    """One line for stderr: which signal interrupted the command and what that left."""
    signum = received_signal()
    name = signal.Signals(signum).name if signum else "Ctrl+C"
    if _all_or_nothing:
        return f"interrupted ({name}): nothing was {_all_or_nothing[-1]} (all or nothing); run the command again"
    return f"interrupted ({name}): what finished is saved; the step in progress was stopped and not recorded"


def declare_all_or_nothing(done: str = "imported") -> None:
    """Say that the running command writes in one transaction, so an interrupt leaves nothing: the
    :func:`interrupt_message` then says "nothing was ``done``" instead of "what finished is saved". Reset by
    :func:`signals_as_interrupt` at the start of each command."""
    _all_or_nothing.append(done)


def report_interrupt() -> None:
    """Print :func:`interrupt_message` on stderr (ignoring a terminal that is gone)."""
    with contextlib.suppress(OSError, ValueError):
        print(interrupt_message(), file=sys.stderr, flush=True)
