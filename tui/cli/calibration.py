"""``benchwright calibrate``: difficulty calibration from direct answers (SWE-QA-Pro §2.3)."""

from __future__ import annotations

import click


@click.command("calibrate")
def calibrate() -> None:
    """Difficulty calibration from direct answers (SWE-QA-Pro §2.3): z-scores per model, too-easy pairs."""
    raise click.ClickException("not built yet")
