"""The ``benchwright`` command line (click): the top-level group, with every command group added by
``add_command``. It owns no logic: every command calls core, db, exports or the services.

Errors benchwright raises on purpose are printed as ``error: ...`` on stderr with exit code 1 (usage
errors: click's exit code 2); no traceback. Command modules never import this module (a contract in
pyproject.toml); what they share is in ``common.py``.
"""

from __future__ import annotations

import sys

import click

from benchwright.core.config import resolve_db_path

from ..signals import interrupt_exit_code, received_signal, report_interrupt, signals_as_interrupt
from . import (
    adjudication,
    aliases,
    annotators,
    answers,
    calibration,
    checklists,
    config,
    curation,
    dedup,
    embeddings,
    failure_modes,
    funnel,
    generate,
    issues,
    items,
    judgments,
    ledger,
    links,
    pairs,
    probes,
    project,
    qa,
    releases,
    report,
    repos,
    sampling,
    taxonomy,
)


class _ProjectGroup(click.Group):
    """The top-level group: ``--db PATH`` is accepted anywhere on the line (``benchwright init --db x.db`` as
    well as ``benchwright --db x.db init``); it is moved before the command name before parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        hoisted: list[str] = []
        rest: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                rest += args[i:]
                break
            if a == "--db" and i + 1 < len(args):
                hoisted += [a, args[i + 1]]
                i += 2
                continue
            if a.startswith("--db="):
                hoisted.append(a)
            else:
                rest.append(a)
            i += 1
        return super().parse_args(ctx, hoisted + rest)

    def invoke(self, ctx: click.Context):
        """Run the command with SIGTERM and SIGHUP acting as Ctrl+C (``tui/signals.py``); an interrupted
        command says so on stderr and exits with 128 + the signal number (130 for Ctrl+C)."""
        with signals_as_interrupt():
            try:
                result = super().invoke(ctx)
            except KeyboardInterrupt:
                report_interrupt()
                sys.exit(interrupt_exit_code())
            if received_signal() is not None:  # the command (the app) ended itself on the signal: not a success
                report_interrupt()
                sys.exit(interrupt_exit_code())
            return result


@click.group(cls=_ProjectGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db_path", type=click.Path(dir_okay=False), envvar="BENCHWRIGHT_DB",
              help="Project file (default: ./benchwright.db; env BENCHWRIGHT_DB).")
@click.version_option(package_name="benchwright")
@click.pass_context
def main(ctx: click.Context, db_path: str | None) -> None:
    """benchwright: build repository-level code-comprehension benchmarks."""
    ctx.ensure_object(dict)
    ctx.obj["db"] = resolve_db_path(db_path)


for command in (
    # project-wide one-shots
    project.init, project.review, project.status, project.demo, annotators.assign, annotators.blind,
    annotators.merge, annotators.agreement, funnel.funnel, qa.qa_report_command, report.report, ledger.calls,
    config.config_group,
    # one group per noun, verbs inside
    pairs.pairs, repos.repos, checklists.checklists, answers.answers, judgments.judgments, curation.curation,
    failure_modes.failure_modes, adjudication.adjudication, releases.releases, probes.probes, links.links,
    # SWE-QA-Pro's data methods (issue 17)
    issues.issues, embeddings.embeddings, taxonomy.taxonomy, dedup.dedup, calibration.calibrate, sampling.sample,
    sampling.selections, items.items,
    # Code-QA-Bench's answer-first generation (issue 18)
    generate.generate,
    # the spellings before the groups, hidden, for one release
    *aliases.ALIASES,
):
    main.add_command(command)
