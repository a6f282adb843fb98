"""``benchwright funnel``: the curation funnel (RepoProbe §3.2) as a table: per stage the pairs in, out, dropped
by reason, failed and not yet run. The rules are :mod:`benchwright.core.funnel`'s; reasons come from data (an
importer's filter reasons, reviewers' reject reasons), so every cell is shown literally."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from benchwright.core.funnel import FUNNEL_COLUMNS, stage_lines
from benchwright.core.text import printable

from .common import friendly, open_store, write_json_file

if TYPE_CHECKING:
    from rich.table import Table


def _table(title: str, stages) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(printable(title)), title_justify="left", show_edge=False)
    for i, col in enumerate(FUNNEL_COLUMNS):
        table.add_column(col, justify="left" if i == 0 else "right")
    for row in stage_lines(stages):
        table.add_row(*(Text(printable(c)) for c in row), style="dim" if row[0].startswith("  ") else None)
    return table


@click.command("funnel")
@click.option("--by", "by", type=click.Choice(["repository"]), help="Also one funnel per repository.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False),
              help="Also write the funnel as JSON to this file.")
@click.pass_context
@friendly
def funnel(ctx, by, json_file) -> None:
    """The curation funnel (RepoProbe §3.2): per stage, pairs in, out, dropped by reason, failed and not yet run.

    Stages: harvested (records the imports read, those filtered at import included), imported, images, classify,
    enrich, refine, checklist, verify, human QA (out: accepted), released (in the latest release). A pair enters
    a stage when it came out of the last gating stage before it (images, classify and verify drop pairs; enrich,
    refine and checklist do not), so in = out + dropped + failed + not yet run.
    """
    from rich.console import Console
    from rich.text import Text

    from ..services.funnel import project_funnel

    with open_store(ctx) as store:
        stages, per_repo, record = project_funnel(store, by_repository=by == "repository")
    out = Console(highlight=False, soft_wrap=True)
    release = (f"latest release: {record['name']} {record['version']}" if record is not None
               else "no release made yet")
    out.print(_table(f"Funnel ({release})", stages))
    if stages[-1].unknown:
        out.print(Text(f"  released: the folder of {record['name']} {record['version']} ({printable(record['path'])}) "
                       "cannot be read, so its pairs are not counted"))
    for name, repo_stages in (per_repo or {}).items():
        out.print()
        out.print(_table(f"Repository {name}", repo_stages))
    if json_file is not None:
        data = {"release": None if record is None else {k: record[k] for k in ("name", "version")},
                "stages": [s.to_dict() for s in stages]}
        if per_repo is not None:
            data["by_repository"] = {name: [s.to_dict() for s in st] for name, st in per_repo.items()}
        write_json_file(json_file, data)
