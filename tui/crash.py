"""Running the app so that a crash is never taken for success.

Textual catches an exception no handler caught, leaves the terminal, prints a traceback with local variables
and returns from ``App.run()``, so a caller that does nothing more exits 0. :func:`run_app` runs the app,
writes the traceback to a file in the user log folder (:func:`benchwright.core.config.log_dir`) instead of the
terminal, says where on stderr (``benchwright: the app crashed; the traceback is in PATH``) and returns 1.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from textual.app import App

from benchwright.core.config import log_dir

CRASH_MESSAGE = "benchwright: the app crashed; the traceback is in {path}"
"""What stderr says after a crash (one line; the traceback is in the file)."""


def write_crash_log(error: BaseException | None, report: str = "", directory: Path | None = None) -> Path:
    """Write the traceback of ``error`` (and Textual's own ``report`` of it, with local variables) to
    ``crash-<UTC time>-<pid>.log`` in ``directory`` (default: the user log folder; the temp folder when that
    cannot be written). Returns the file's path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    parts = [f"benchwright crashed at {stamp} (pid {os.getpid()}, {sys.argv[0]} {' '.join(sys.argv[1:])})\n"]
    if error is not None:
        parts.append("".join(traceback.format_exception(error)))
    if report.strip():
        parts.append("\nTextual's report:\n" + report)
    text = "\n".join(parts)
    for folder in (directory or log_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"crash-{stamp}-{os.getpid()}.log"
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return path
        except OSError:
            continue
    raise OSError("cannot write a crash log in the log folder nor in the temp folder")


def run_app(app: App, **run_options) -> int:
    """Run ``app`` (``run_options`` go to ``App.run``). Returns 0 when it ended normally; after an unhandled
    exception (Textual's or one raised by ``App.run`` itself), writes the crash log, prints
    :data:`CRASH_MESSAGE` on stderr and returns 1."""
    report = io.StringIO()
    # Textual prints its traceback (with locals) on this console once the terminal is restored: keep it for the
    # log rather than the user's terminal.
    app.error_console = Console(file=report, width=120, markup=False, highlight=False, color_system=None,
                                force_terminal=False)
    error: BaseException | None = None
    try:
        app.run(**run_options)
    except Exception as e:  # anything that escaped Textual is a crash too
        error = e
    else:
        # Textual 8 keeps the first unhandled exception in ``_exception`` and sets ``return_code`` to 1.
        error = getattr(app, "_exception", None)
        if error is None and not app.return_code:
            return 0
    path = write_crash_log(error, report.getvalue())
    print(CRASH_MESSAGE.format(path=path), file=sys.stderr)
    return 1
