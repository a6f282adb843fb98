"""The CLI progress bar's label (a step and a model name the user typed) is shown as text: no markup, no escapes."""

import io

from rich.console import Console

from benchwright.core.llm.jobs import JobProgress
from benchwright.tui.cli.common import run_with_progress


def test_the_progress_label_is_shown_as_typed_with_controls_made_visible():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)

    async def go(on_progress):
        p = JobProgress(total=1)
        on_progress(p)
        return p

    run_with_progress(go, 1, "agent (m[bold]x \x1b[31mred, agentic)", console=console)
    out = buf.getvalue()
    assert "agent (m[bold]x ␛[31mred, agentic)" in out
    assert "\x1b[31m" not in out
