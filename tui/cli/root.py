"""The ``benchwright`` command line (click): the top-level group, whose commands are named in :data:`COMMANDS`
and imported on use (``benchwright --help``, ``--version`` and shell completion load no command module and no
heavy library; ``tests/tui/test_cli_startup.py`` checks it). It owns no logic: every command calls core, db,
exports or the services.

Errors benchwright raises on purpose are printed as ``error: ...`` on stderr with exit code 1 (usage
errors: click's exit code 2); no traceback. Command modules never import this module (a contract in
pyproject.toml); what they share is in ``common.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from gettext import gettext

import click

from ..signals import interrupt_exit_code, received_signal, report_interrupt, signals_as_interrupt

COMMANDS: dict[str, tuple[str, str]] = {
    # name: ("module:attribute" under benchwright.tui.cli, the short help `benchwright --help` lists: the first
    # sentence of the command's help; tests/tui/test_cli_lazy.py checks both against the command itself)
    "adjudication": ("adjudication:adjudication",
                     "Pairs whose reviews or checklist edits disagree, and their final decisions."),
    "agreement": ("annotators:agreement",
                  "Inter-annotator agreement: Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha "
                  "for the decision and each QA criterion; key-point and weight agreement of checklists."),
    "answers": ("answers:answers",
                "Model answers to Q&A pairs: generate, import, list, runs, show (with trajectory and judgments)."),
    "assign": ("annotators:assign",
               "Give every pair, or a QA sample of them, to OVERLAP annotators, balanced and reproducible (replaces "
               "earlier assignments)."),
    "batches": ("batches:batches",
                "Provider batch jobs (Anthropic Message Batches, the OpenAI Batch API): list, resume, collect, cancel, import."),
    "blind": ("annotators:blind", "Turn blind mode on or off for the project."),
    "calibrate": ("calibration:calibrate",
                  "Difficulty calibration from direct answers (SWE-QA-Pro §2.3): z-scores per model, too-easy pairs."),
    "calibration": ("judge_calibration:calibration",
                    "Agreement of each LLM judge with the humans' scores of the same answers, per checklist item and "
                    "overall."),
    "calls": ("ledger:calls", "The LLM call ledger: every call with model, tokens, cost, latency and status."),
    "checklists": ("checklists:checklists",
                   "Checklists (RepoProbe §4.1): schema, import, export, show, diff, history, restore."),
    "config": ("config:config_group",
               "Show the LLM configuration (benchwright.toml in the project folder, then the user folder)."),
    "curation": ("curation:curation", "The curation pipeline (RepoProbe §3.2): run a step over the project's pairs."),
    "dedup": ("dedup:dedup",
              "Semantic dedup of questions (SWE-QA-Pro §2.3): find duplicate groups, list and resolve them."),
    "demo": ("project:demo",
             "Open the app on a bundled sample project about click (created once in the user data folder)."),
    "embeddings": ("embeddings:embeddings",
                   "Text embeddings (the embedder role): compute them into the cache, show what is cached."),
    "failure-modes": ("failure_modes:failure_modes",
                      "Failure-mode labels of low-scoring answers (RepoProbe §5.4, Table 7): classify, set, show."),
    "funnel": ("funnel:funnel",
               "The curation funnel (RepoProbe §3.2): per stage, pairs in, out, dropped by reason, failed and not yet "
               "run."),
    "generate": ("generate:generate",
                 "Answer-first generation (Code-QA-Bench): documentation chunks, gold answers, their code-only audit, "
                 "and the questions derived from them, which become Q&A pairs."),
    "init": ("project:init", "Create an empty project file (or upgrade an existing one in place)."),
    "issues": ("issues:issues", "Issue texts (SWE-QA-Pro §2.1): import them as taxonomy seeds, list them."),
    "items": ("items:items",
              "Item statistics across a model panel: mean, spread, share passing, flags, discrimination."),
    "judgments": ("judgments:judgments", "Judgments of answers: run a judge over them, override one score."),
    "links": ("links:links",
              "The link store: saved contents of external URLs that the enrich step resolves (runs are often "
              "offline)."),
    "merge": ("annotators:merge",
              "Bring another copy's reviews, notes, checklist versions and adjudications into this project."),
    "pairs": ("pairs:pairs",
              "Candidate Q&A pairs: import them from a file, print a pair's audit trail, show, edit, revert and accept "
              "its text versions, check rewritten questions for leaked terms."),
    "probes": ("probes:probes", "NITR probes: import, scaffold, run against variants, sign the oracle off."),
    "qa-report": ("qa:qa_report_command",
                  "The human QA pass (RepoProbe §3.2): accepted and rejected pairs, the discard rate (rejected / "
                  "decided), rejects by reason, criteria pass / fail, by repository and by annotator."),
    "releases": ("releases:releases", "Frozen, versioned, checksummed benchmark releases."),
    "report": ("report:report",
               "Paper metrics of the judged answers: Overall %, Knowledge %, Clarity %, Perfect Solve Rate (RepoProbe "
               "§5.1.3), optionally by language, category, theme, QA type, cluster, repository or QA subtype, per "
               "model and across models (mean and sample sd, RepoProbe Table 4); scalar judges per dimension "
               "(SWE-QA-Pro §4.1, Code-QA-Bench); judge stability over runs (RepoProbe Table 5); answers whose "
               "scalar-judge runs spread widely while the checklist runs agree (RepoProbe Table 6); unscored runs and "
               "overrides used; failure modes below 60% (RepoProbe Table 7); direct against agent answers per model "
               "(SWE-QA-Pro Table 2) and the agents' tool calls (SWE-QA-Pro Figure 4)."),
    "repos": ("repos:repos", "Register and list the repositories questions are about."),
    "review": ("project:review", "Open the review app on the project."),
    "sample": ("sampling:sample",
               "A balanced sample over clusters and QA types (SWE-QA-Pro §2.4), written as a named selection."),
    "serve": ("serve:serve",
              "Serve the review app in a browser: each visitor gets their own app process on this project, as the "
              "annotator their token (or the login form) names."),
    "selections": ("sampling:selections",
                   "Named selections (``sample``): list them, show one's members and coverage."),
    "status": ("project:status", "Print the project's counts and this annotator's progress."),
    "taxonomy": ("taxonomy:taxonomy",
                 "Topic taxonomies (SWE-QA-Pro §2.1): build, label, edit, assign pairs to leaves, show."),
}
"""Every visible command of ``benchwright``: its module is imported only when the command runs, completes or
shows its own help, so ``benchwright --help``, ``--version`` and completion of a command name import none."""

ALIAS_NAMES: tuple[str, ...] = (
    "import", "history", "repo", "checklist", "answer", "judge", "override", "failure-mode", "adjudicate", "release",
    "probe",
)
"""The hidden old spellings (``aliases.ALIASES``, loaded when one of them is used)."""


def _load(name: str) -> click.Command | None:
    """The command ``name`` of :data:`COMMANDS` or :data:`ALIAS_NAMES`, importing its module; ``None`` for a name
    that is neither, or whose module is not there (a table entry ahead of its module)."""
    if name in COMMANDS:
        module, attr = COMMANDS[name][0].split(":")
        try:
            cmd = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise
            return None
        if name == "generate":  # its old spelling ``generate STEP`` is in aliases, imported only if used
            cmd.load_fallback = _load_aliases
        return cmd
    if name in ALIAS_NAMES:
        return next((a for a in _load_aliases() if a.name == name), None)
    return None


def _load_aliases() -> tuple[click.Command, ...]:
    """``aliases.ALIASES``, importing the module (which also sets ``generate``'s fallback)."""
    from .aliases import ALIASES

    return ALIASES


def _present(name: str) -> bool:
    """Whether the module of :data:`COMMANDS`' ``name`` exists (found without importing it)."""
    return importlib.util.find_spec(f"{__package__}.{COMMANDS[name][0].split(':')[0]}") is not None


class _ProjectGroup(click.Group):
    """The top-level group: ``--db PATH`` is accepted anywhere on the line (``benchwright init --db x.db`` as
    well as ``benchwright --db x.db init``); it is moved before the command name before parsing.

    Its commands are :data:`COMMANDS` (and the hidden :data:`ALIAS_NAMES`), each imported on first use; the
    command list of ``--help`` and the completion of a command name come from the table, importing nothing.
    Commands added with ``add_command`` are listed too."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *(name for name in COMMANDS if _present(name))})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.get(cmd_name) or _load(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        try:
            return super().resolve_command(ctx, args)
        except click.NoSuchCommand as exc:  # suggest among every name, as click does for eager commands
            raise click.NoSuchCommand(exc.command_name, possibilities=[*self.list_commands(ctx), *ALIAS_NAMES],
                                      ctx=ctx) from None

    def _listed(self, ctx: click.Context) -> list[tuple[str, click.Command]]:
        """The visible commands as ``(name, command)``; a lazy command is a stand-in carrying its short help."""
        out = []
        for name in self.list_commands(ctx):
            cmd = self.commands.get(name) or click.Command(name, help=COMMANDS[name][1])
            if not cmd.hidden:
                out.append((name, cmd))
        return out

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = self._listed(ctx)
        if commands:  # as click.Group.format_commands
            limit = formatter.width - 6 - max(len(name) for name, _cmd in commands)
            with formatter.section(gettext("Commands")):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in commands])

    def shell_complete(self, ctx: click.Context, incomplete: str):
        from click.shell_completion import CompletionItem

        results = [CompletionItem(name, help=cmd.get_short_help_str())
                   for name, cmd in self._listed(ctx) if name.startswith(incomplete)]
        return results + click.Command.shell_complete(self, ctx, incomplete)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["benchwright.argv"] = list(args)  # the command line as given (batch mode records it for resume)
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
    from benchwright.core.config import resolve_db_path

    ctx.ensure_object(dict)
    ctx.obj["db"] = resolve_db_path(db_path)

