"""What every command module of the ``benchwright`` command line shares: the error wrapper, opening the project,
plural nouns, ``--where`` filters, the ``--as`` option, progress bars for LLM jobs and how they end.

Nothing here imports a command module or the root group (``root.py``), so any command module may import it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from typing import TYPE_CHECKING

import click

from benchwright.core.errors import BenchwrightError, Remedy
from benchwright.core.registry import or_list as or_list
from benchwright.core.text import plural as plural_text
from benchwright.core.text import printable
from benchwright.core.vocabulary import normalize_task_set

from ..signals import interrupt_exit_code

if TYPE_CHECKING:  # loaded where used: a command's --help imports neither Rich nor the store (issue 19)
    from rich.console import Console

    from benchwright.core.llm.jobs import JobProgress
    from benchwright.db import QueueFilter, Store


def friendly(fn):
    """Turn BenchwrightError into a message on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BenchwrightError as e:
            click.echo(printable(f"error: {e}{remedy_text(e)}"), err=True)
            sys.exit(1)
        except OverflowError as e:  # an option such as --version or --limit past SQLite's INTEGER
            if "SQLite INTEGER" not in str(e):
                raise
            click.echo(f"error: a number given is too large (the project file holds whole numbers up to "
                       f"{2**63 - 1:,})", err=True)
            sys.exit(1)

    return wrapper


_REMEDIES = {
    Remedy.GIVE_MODEL: "\n\nor pass --model MODEL (or --model PROVIDER:MODEL).",
    Remedy.GIVE_REASON: " (--reason TEXT)",
    Remedy.SEE_PREFLIGHT: " (see benchwright releases preflight --list)",
    Remedy.GIVE_PREVIOUS: ", or pass --previous DIR",
    Remedy.IMPORT_UNDER_OTHER_NAMES: "\nImport them under another --model or --condition, or pass --skip-invalid "
                                     "to import the rest.",
    Remedy.NAME_ANSWER_MODEL: " (--model NAME)",
    Remedy.NAME_JUDGE_MODEL: " (--judge-model NAME)",
    Remedy.GIVE_SCALE: " (--scale N)",
    Remedy.GIVE_VERSION_OR_COMMIT: "; give --version LABEL (e.g. 3.1.1) or --commit SHA",
    Remedy.CREATE_PROJECT: "; create one with: benchwright init (or pass --db PATH)",
    Remedy.IMPORT_SCORES_UNDER_OTHER_NAMES: "\nImport them under another --model or --condition (or other scores "
                                            "under another --judge-model), or pass --skip-invalid to import the rest.",
}
"""How the command line words each :class:`benchwright.core.errors.Remedy` (appended to the message)."""


def remedy_text(error: BenchwrightError) -> str:
    """What the user can do about ``error``, in this front end's words (its options); empty if nothing."""
    return _REMEDIES.get(error.remedy, "") if error.remedy else ""


def open_store(ctx: click.Context, *, create: bool = False) -> Store:
    """The project named by ``--db`` (``ctx.obj["db"]``, set by the root group).

    Raises:
        BenchwrightError: no project there (unless ``create``), or a newer or damaged one."""
    from benchwright.db import Store

    return Store.open(ctx.obj["db"], create=create)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 pair``, ``2 pairs`` (:func:`benchwright.core.text.plural`)."""
    return plural_text(count, noun, many)


NAME_CHARS = 80
"""A name from data (an annotator, a repository, a category) is cut at this many characters in a summary line or
table cell (:func:`shown_name`): a 1 MB name is not printed whole."""


def shown_name(name: str, limit: int = NAME_CHARS) -> str:
    """``name`` made printable (:func:`benchwright.core.text.printable`) and cut at ``limit`` characters, marked
    ``…``; print it without markup parsing."""
    return printable(name if len(name) <= limit else name[:limit] + "…")


def note_deprecated(old: str, new: str) -> None:
    """Say on stderr that ``benchwright OLD`` is an old spelling, kept as a hidden alias for one release, and name
    the new one (the command then runs as before)."""
    click.echo(f"note: 'benchwright {old}' is deprecated and goes in the next release; use 'benchwright {new}'",
               err=True)


def annotator_option(help: str = "Who does it (default: configuration, then the OS user)."):
    """The ``--as NAME`` option (parameter ``annotator``), resolved by ``core.config.resolve_annotator``."""
    return click.option("--as", "annotator", help=help)


def run_app(store: Store, annotator: str, title: str | None = None) -> None:
    """Run the app; after a crash exit 1, saying where the traceback is (see ``tui/crash.py``)."""
    from ..app import BenchwrightApp
    from ..crash import run_app as run_guarded

    if run_guarded(BenchwrightApp(store, annotator, title=title)):
        sys.exit(1)


# --------------------------------------------------------------------------------------------- --where
WHERE_KEYS = ("repository", "qa_type", "category", "status", "checklist", "curation", "evidence", "text",
              "assigned_to", "dedup", "difficulty", "item", "leakage", "selection", "split", "task_set")
"""The keys of ``--where KEY=VALUE`` (fields of :class:`benchwright.db.QueueFilter`); ``curation`` takes one of
:data:`benchwright.db.CURATION_FILTERS`, among them the funnel's ``passed`` and ``dropped:STEP`` (STEP a gating
step: images, classify, verify); ``dedup``, ``difficulty``, ``item``, ``leakage`` take the values of
:mod:`benchwright.core.vocabulary` (SWE-QA-Pro's data methods), ``selection`` the name of a selection, ``task_set`` one of
:data:`benchwright.core.vocabulary.TASK_SETS` (spelled as :func:`~benchwright.core.vocabulary.normalize_task_set`
forgives)."""


def parse_where(values: tuple[str, ...], *, facets: dict[str, list[str]] | None = None) -> QueueFilter:
    """``--where KEY=VALUE`` options as a :class:`QueueFilter` (keys: :data:`WHERE_KEYS`; ``-`` may replace ``_``).

    With ``facets`` (``Store.facets()``), ``repository``, ``qa_type`` and ``category`` values are matched to the
    project's values without regard to case (``qa_type=what`` finds ``What``); a value no pair has is an error
    that lists the values there are; so is a ``selection`` that is not the name of a selection.

    Raises:
        BenchwrightError: an option without ``=``, an unknown key, a key given twice, or an unknown value.
    """
    from benchwright.db import QueueFilter

    fields: dict[str, str] = {}
    for v in values:
        key, sep, value = v.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not value:
            raise BenchwrightError(f"--where {v!r}: write KEY=VALUE, e.g. --where category=architecture")
        if key not in WHERE_KEYS:
            raise BenchwrightError(f"--where {v!r}: unknown key {key!r}; keys are {', '.join(WHERE_KEYS)}")
        if key in fields:
            raise BenchwrightError(f"--where {key} given twice")
        fields[key] = value
    if facets is not None:
        for key in ("repository", "qa_type", "category"):
            if key not in fields:
                continue
            known = {v.casefold(): v for v in facets.get(key, [])}
            value = known.get(fields[key].casefold())
            if value is None:
                shown = ", ".join(facets.get(key, [])) or "none yet"
                raise BenchwrightError(f"--where {key}={fields[key]}: no pair has it; values: {shown}")
            fields[key] = value
        if "selection" in fields and fields["selection"] not in facets.get("selection", []):
            shown = ", ".join(facets.get("selection", [])) or "none yet (make one with benchwright sample)"
            raise BenchwrightError(f"--where selection={shown_name(fields['selection'])}: no selection of that name; "
                                   f"selections: {shown}")
    if "task_set" in fields:
        try:
            fields["task_set"] = normalize_task_set(fields["task_set"])
        except ValueError as e:
            raise BenchwrightError(f"--where task_set={shown_name(fields['task_set'])}: {e}") from None
    flt = QueueFilter(**fields)
    flt.sql("")  # unknown status / checklist / curation values fail here, before any call
    return flt


def where_option(fn):
    """The repeatable ``--where KEY=VALUE`` option (parameter ``where``; read it with :func:`parse_where`)."""
    return click.option("--where", "where", multiple=True, metavar="KEY=VALUE",
                        help=f"Only pairs matching (repeatable; keys: {', '.join(WHERE_KEYS)}).")(fn)


def model_list(value: str | None) -> list[str] | None:
    """``--models A,B,C`` as a list (names stripped, empty ones dropped); None when not given.

    Raises:
        click.BadParameter: the value names no model.
    """
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise click.BadParameter("name at least one model, e.g. --models gpt-a,gpt-b", param_hint="--models")
    return names


HISTOGRAM_WIDTH = 40
"""The widest bar of :func:`histogram_lines`, in characters."""


def histogram_lines(rows: list[tuple[str, int]], title: str) -> list[str]:
    """A text histogram: ``title``, then per ``(bin label, count)`` row the label, a bar of ``█`` scaled to
    :data:`HISTOGRAM_WIDTH` and the count (print each line as ``Text``: labels may come from data)."""
    top = max((n for _, n in rows), default=0)
    width = max((len(label) for label, _ in rows), default=0)
    out = [title]
    for label, n in rows:
        bar = "█" * (round(HISTOGRAM_WIDTH * n / top) if top else 0)
        out.append(f"  {label:>{width}} {bar} {n}" if bar else f"  {label:>{width}} {n}")
    return out


# ------------------------------------------------------------------------------------------- LLM jobs
def out_console() -> Console:
    """Standard output for summaries: no highlighting, long lines wrapped (print data as ``Text``)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def _tokens(p: JobProgress) -> str:
    u = p.usage
    return f"{u.input_tokens + u.output_tokens:,} tok"


PROGRESS_FIELDS = ("batch", "rate", "cost", "calls", "tokens")
"""The job fields a :func:`run_with_progress` line shows after the counts and times, most wanted first (the batch
line of a batch run, empty otherwise, first): when the terminal is too narrow, the last ones are left out first, a
long one cut to the room left (then the label is cut, never the counts)."""

LABEL_MIN = 16
BAR_MIN = 10
BAR_MAX = 40


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def fit_progress_line(label: str, completed: float, total: float | None, width: int, *, elapsed: float | None = None,
                      remaining: float | None = None, extras: tuple[str, ...] = ()):
    """One progress line as a Rich ``Text`` at most ``width`` cells wide:
    ``LABEL ━━━━━━━━ done/total elapsed eta remaining extras...``.

    The counts always show whole. When the line does not fit, ``extras`` are left out from the last one (one
    longer than the room left is cut to it, ending in ``…``, when at least :data:`LABEL_MIN` cells are left), then
    the times, then the bar shrinks to :data:`BAR_MIN` and the label is cut (literally, ending in ``…``) down to
    :data:`LABEL_MIN` cells; on a terminal narrower still the bar goes, then the label. ``label`` is shown as
    text (no markup; control characters made visible by :func:`printable`).
    """
    from rich.cells import cell_len, set_cell_size
    from rich.text import Text

    label = printable(label)
    counts = f"{int(completed)}/{int(total)}" if total is not None else f"{int(completed)}/?"
    fields = [f for f in (_clock(elapsed), f"eta {_clock(remaining)}", *(e for e in extras if e))]

    def rest_len(kept: list[str]) -> int:
        return cell_len(" ".join([counts, *kept]))

    needed = 1 + BAR_MIN + 1 + min(cell_len(label), LABEL_MIN)
    while fields and rest_len(fields) + needed > width:
        last = fields.pop()
        room = width - needed - rest_len(fields) - 1
        if len(fields) >= 2 and room >= LABEL_MIN and cell_len(last) > room:  # an extra, cut rather than dropped
            fields.append(set_cell_size(last, room - 1) + "…")
            break
    tail = " ".join([counts, *fields])
    room = width - cell_len(tail)
    bar_w = min(BAR_MAX, max(BAR_MIN, room - 1 - cell_len(label) - 1))
    if room - 1 - bar_w - 1 < min(cell_len(label), LABEL_MIN):
        bar_w = max(0, room - 2 - min(cell_len(label), LABEL_MIN))
        if bar_w < 3:
            bar_w = 0
    label_room = max(0, room - (bar_w + 1 if bar_w else 0) - 1)
    if cell_len(label) > label_room:
        label = set_cell_size(label, max(label_room - 1, 0)) + "…" if label_room else ""
    line = Text(no_wrap=True, overflow="crop", end="")
    if label:
        line.append(label + " ")
    if bar_w:
        done = bar_w if not total else round(bar_w * min(completed / total, 1))
        line.append("━" * done, style="bar.complete")
        line.append("━" * (bar_w - done), style="bar.back")
        line.append(" ")
    line.append(counts, style="progress.download")
    if fields:
        line.append(" " + " ".join(fields))
    return line


def _fitted_column(extra_fields: tuple[str, ...] = ()):
    """A Rich progress column rendering the whole line with :func:`fit_progress_line` at the console's width."""
    from rich.progress import ProgressColumn

    class FittedLine(ProgressColumn):
        def __init__(self, console) -> None:
            self.console = console
            super().__init__()

        def render(self, task):
            return fit_progress_line(task.description, task.completed, task.total, self.console.width,
                                     elapsed=task.elapsed, remaining=task.time_remaining,
                                     extras=tuple(str(task.fields.get(f, "")) for f in extra_fields))

    return FittedLine


def run_with_progress(coro_factory, total: int, label: str, *, console: Console | None = None) -> JobProgress | None:
    """Run ``coro_factory(on_progress)`` with a Rich progress bar (done/total, rate, ETA, tokens, cost), one line
    that fits the terminal's width (:func:`fit_progress_line`).

    Returns the final progress, or None when the user pressed Ctrl+C (what finished is already stored)."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.text import Text

    from benchwright.core.llm.jobs import JobProgress, describe_cost

    console = console or Console(stderr=True)
    progress = Progress(
        _fitted_column(PROGRESS_FIELDS)(console),
        console=console, transient=False, disable=not console.is_terminal and total == 0,
    )
    task = progress.add_task(printable(label), total=total, rate="", tokens="0 tok", cost="", calls="", batch="")
    last: dict[str, JobProgress] = {}
    batchers = _claim_batchers()
    if batchers:
        def on_batch(bp) -> None:
            progress.update(task, batch=bp.line())

        for b in batchers:
            b.on_progress = on_batch

    def on_progress(p: JobProgress) -> None:
        last["p"] = p
        progress.update(task, completed=p.done, rate=f"{p.rate:.1f}/s", tokens=_tokens(p),
                        cost=describe_cost(p.cost_usd, calls=p.calls, cost_unknown=p.cost_unknown,
                                          usage_missing=p.usage_missing, unanswered=p.unanswered), calls=f"{plural_text(p.calls, 'call')}, {p.cached} cached")

    from benchwright.core.llm.batch import BatchDeferred

    with progress:
        try:
            final = asyncio.run(coro_factory(on_progress))
            for b in batchers:
                for bid, info in sorted(b.progress.batches.items()):
                    if info.get("status") == "failed":
                        console.print(Text(f"batch #{bid} was refused by the provider "
                                           f"({printable(str(info.get('error') or '?'))[:300]}); its requests were "
                                           f"retried {b.policy.retry} (online: at the full price)"))
            return final
        except KeyboardInterrupt:
            running = sorted({bid for b in batchers for bid, info in b.progress.batches.items()
                              if info.get("status") not in ("collected", "failed")})
            if running:
                from ..services.batches import open_batches_line

                console.print(Text(open_batches_line(running)))
            return None
        except BatchDeferred as e:
            from ..services.batches import deferred_lines

            store = next((getattr(b, "store", None) for b in batchers), None)
            progress.stop()
            for line in deferred_lines(store, e):
                console.print(Text(line))
            sys.exit(getattr(e, "exit_code", 0))
        finally:
            last.setdefault("p", JobProgress(total=total))


def _claim_batchers() -> list:
    """The batch-mode batchers the command made (:func:`benchwright.tui.services.batches.claim_active`), without
    importing the batch services when none was made."""
    mod = sys.modules.get("benchwright.tui.services.batches")
    return mod.claim_active() if mod is not None else []


@contextlib.contextmanager
def step_progress(label: str, *, console: Console | None = None):
    """A Rich progress bar on stderr for a synchronous step that reports ``progress(done, total)`` (embedding
    texts, importing checklists), one line fitting the terminal (:func:`fit_progress_line`); yields that callback. The bar appears on the first report (nothing is shown when nothing is to do)."""
    from rich.console import Console
    from rich.progress import Progress

    console = console or Console(stderr=True)
    progress = Progress(_fitted_column()(console), console=console)
    task: list = []

    def report(done: int, total: int) -> None:
        if not task:
            progress.start()
            task.append(progress.add_task(printable(label), total=total))
        progress.update(task[0], completed=done, total=total)

    try:
        yield report
    finally:
        if task:
            progress.stop()


def money(outcomes) -> str:
    """Calls, cached calls, tokens and cost of a job's outcomes, as one summary phrase."""
    from benchwright.core.llm.jobs import describe_cost

    calls = sum(o.calls for o in outcomes)
    cached = sum(o.cached for o in outcomes)
    tokens = sum(o.usage.input_tokens + o.usage.output_tokens for o in outcomes)
    cost = describe_cost(sum(o.cost_usd for o in outcomes), calls=calls,
                         cost_unknown=sum(getattr(o, "cost_unknown", 0) for o in outcomes),
                         unanswered=sum(getattr(o, "unanswered", 0) for o in outcomes),
                         usage_missing=sum(getattr(o, "usage_missing", 0) for o in outcomes))
    return f"{plural(calls, 'call')} made, {cached} cached, {tokens:,} tokens, {cost}"


def run_closing(client, run, total: int, label: str) -> tuple:
    """Run ``run(on_progress=..., on_outcome=...)`` (a ``benchwright.tui.services.judge_runs`` runner with its other arguments
    bound) under a progress bar of ``total`` items labelled ``label``, closing the client's provider when it ends.

    Returns ``(final, outcomes)``: the final progress (None when the user pressed Ctrl+C; what finished is stored)
    and the outcomes in the order they finished."""
    outcomes: list = []

    async def go(on_progress):
        try:
            return await run(on_progress=on_progress, on_outcome=outcomes.append)
        finally:
            await client.provider.aclose()

    return run_with_progress(go, total, label), outcomes


def exit_unfinished(cancelled: bool, failed: list) -> None:
    """Exit 128 + the signal number when the run was cancelled (130 for Ctrl+C, 143 for SIGTERM, 129 for
    SIGHUP; ``tui/signals.py``), else 1 when any item failed; return otherwise."""
    if cancelled:
        sys.exit(interrupt_exit_code())
    if failed:
        sys.exit(1)


def close_unused(client) -> None:
    """Close a client that was never used in an event loop (nothing to do)."""
    asyncio.run(client.provider.aclose())


# ------------------------------------------------------------------------------------------ --csv / --json
def write_csv_tables(csv_dir: str, tables: dict) -> None:
    """Write ``tables`` (``file name -> (header, rows)``; None cells empty) into the folder ``csv_dir`` (made if
    missing) and say so.

    Raises:
        BenchwrightError: a file cannot be written."""
    import csv
    from pathlib import Path

    folder = Path(csv_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, (header, rows) in tables.items():
            with (folder / name).open("w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(header)
                w.writerows([["" if v is None else v for v in row] for row in rows])
    except OSError as e:
        raise BenchwrightError(f"{csv_dir}: cannot write the CSV files ({e.strerror or e})") from None
    click.echo(f"wrote {len(tables)} CSV file(s) to {folder}")


def write_json_file(json_file: str, data) -> None:
    """Write ``data`` as indented UTF-8 JSON to ``json_file`` and say so.

    Raises:
        BenchwrightError: the file cannot be written."""
    import json
    from pathlib import Path

    try:
        Path(json_file).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as e:
        raise BenchwrightError(f"{json_file}: cannot write the JSON file ({e.strerror or e})") from None
    click.echo(f"wrote {json_file}")


# ------------------------------------------------------------------ choices and help read from core's registries
class FractionRange(click.FloatRange):
    """A float in [0, 1]: click.FloatRange(0, 1) lets ``nan`` through (every comparison with it is false), so a
    threshold of ``nan`` would reach core (a traceback there, or a silent 'at or above nan%'). Refused here as a
    usage error like any other value out of range."""

    def __init__(self) -> None:
        super().__init__(0, 1)

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if rv != rv:
            self.fail(f"{value!r} is not a number between 0 and 1.", param, ctx)
        return rv


class RegistryChoice(click.Choice):
    """A ``click.Choice`` over a live view of a core registry (``LLM_JUDGES``, ``STEPS``, ``FAILURE_MODES``,
    ``CONDITIONS``): the choices are read when the command runs or shows its help, so a judge or step registered
    after this module was imported is a choice too."""

    def __init__(self, names, case_sensitive: bool = True):
        self._names = names
        super().__init__(tuple(names), case_sensitive)

    @property  # type: ignore[override]
    def choices(self):
        return tuple(self._names)

    @choices.setter
    def choices(self, value) -> None:  # click's __init__ assigns the snapshot; the live view wins
        pass


class _LiveHelp:
    """``{key}`` in a help text is replaced, each time the help is shown, by ``help_fill[key]()``."""

    _help_fill: dict = {}

    def _get_help(self):
        text = self.__dict__.get("_help_text")
        for key, fill in self._help_fill.items():
            text = text.replace("{" + key + "}", fill()) if text else text
        return text

    def _set_help(self, value) -> None:
        self.__dict__["_help_text"] = value

    help = property(_get_help, _set_help)


class LiveHelpCommand(_LiveHelp, click.Command):
    """A command whose help names registry entries (``@group.command(cls=LiveHelpCommand, help_fill={...})``)."""

    def __init__(self, *args, help_fill: dict | None = None, **kwargs):
        self._help_fill = dict(help_fill or {})
        super().__init__(*args, **kwargs)


class LiveHelpOption(_LiveHelp, click.Option):
    """An option whose help names registry entries (``@click.option(..., cls=LiveHelpOption, help_fill={...})``)."""

    def __init__(self, *args, help_fill: dict | None = None, **kwargs):
        self._help_fill = dict(help_fill or {})
        super().__init__(*args, **kwargs)


# ------------------------------------------------------------------------------------------ --batch
BATCH_HELP = {
    "batch": "Send the calls through the provider's batch API (half price, results within 24 hours; "
             "docs/batches.md). The batch is kept in the project: Ctrl+C, a kill or a reboot leaves it running, and "
             "the same command (or benchwright batches resume) collects it without submitting again.",
    "batch_file": "Write the requests to this JSONL file in the OpenAI batch format (for vllm run-batch) instead of "
                  "sending them; benchwright batches import RESULTS.jsonl brings the output back, and the same "
                  "command then uses it. Implies --batch.",
    "retry": "What happens to a request that errored, expired or was cancelled in its batch: sent online (default) "
             "or in a new batch. It is never scored. Default: [batch] retry in benchwright.toml, else online.",
    "poll_interval": "Seconds between two status requests of a running batch (default: [batch] poll_interval_s, "
                     "else 30).",
    "no_wait": "Submit the batch and end; the same command (or benchwright batches resume) collects it later.",
}


def batch_options(fn):
    """``--batch``, ``--batch-file OUT.jsonl``, ``--retry online|batch``, ``--poll-interval S`` and ``--no-wait`` on
    an LLM command; their values go to ``ctx.meta["benchwright.batch"]`` (a
    :class:`~benchwright.tui.services.batches.BatchOptions`, or absent without ``--batch`` / ``--batch-file``), read
    with :func:`batch_request`. The command's own parameters are unchanged."""

    def keep(ctx: click.Context, param: click.Parameter, value):
        ctx.meta.setdefault("benchwright.batch.raw", {})[param.name] = value
        return value

    for name, decl, kw in reversed([
        ("batch", ("--batch",), {"is_flag": True}),
        ("batch_file", ("--batch-file",), {"type": click.Path(dir_okay=False), "metavar": "OUT.jsonl"}),
        ("retry", ("--retry",), {"type": click.Choice(["online", "batch"])}),
        ("poll_interval", ("--poll-interval",), {"type": click.FloatRange(min=0.01, max=3600), "metavar": "S"}),
        ("no_wait", ("--no-wait",), {"is_flag": True}),
    ]):
        fn = click.option(*decl, name, expose_value=False, callback=keep, help=BATCH_HELP[name], **kw)(fn)
    return fn


def batch_request(ctx: click.Context):
    """The batch options of the running command (:func:`batch_options`), or None when neither ``--batch`` nor
    ``--batch-file`` was given.

    Raises:
        click.UsageError: ``--retry``, ``--poll-interval`` or ``--no-wait`` without ``--batch``.
    """
    from ..services.batches import BatchOptions

    raw = ctx.meta.get("benchwright.batch.raw") or {}
    if not raw.get("batch") and not raw.get("batch_file"):
        extra = [f"--{k.replace('_', '-')}" for k in ("retry", "poll_interval", "no_wait") if raw.get(k)]
        if extra:
            raise click.UsageError(f"{', '.join(extra)} only apply with --batch or --batch-file")
        return None
    from ..services.batches import command_line

    resuming = bool((ctx.find_root().obj or {}).get("batch_resume_only"))
    argv = ctx.meta.get("benchwright.argv")  # the line the root group parsed (tui/cli/root.py)
    return BatchOptions(batch_file=raw.get("batch_file"), retry=raw.get("retry"),
                        poll_interval_s=raw.get("poll_interval"), wait=not raw.get("no_wait") or resuming,
                        resume_only=resuming, command=tuple(command_line(argv)) if argv is not None else None)
