"""The batches screen (``B`` from the queue; issue 19, docs/batches.md): the project's provider batch jobs (Anthropic
Message Batches, the OpenAI Batch API, ``--batch-file`` exports) as ``benchwright batches`` lists them, newest first,
and the highlighted batch's details: its ids, the command that made it, its file and its error. ``c`` asks the
provider to cancel the highlighted batch (after a confirmation), ``r`` reads the list again.

The screen asks no provider anything by itself: the job waiting on a batch (a command, or a curation step sent as a
batch from the app) polls the provider every ``[batch] poll_interval_s`` seconds and records each report in the
project; this screen re-reads the project every :data:`LOCAL_REFRESH_S` seconds (or at the poll interval when that is
shorter), so a job of this app or of another process shows its progress here. Text from data is shown literally."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Static

from benchwright.core.errors import BenchwrightError
from benchwright.core.llm.batch import OPEN_BATCH_STATUSES
from benchwright.core.text import plural
from benchwright.db import Store

from ..services.batches import batch_rows
from ..widgets import error_text, literal, notify, plain

LOCAL_REFRESH_S = 2.0
"""Seconds between two readings of the project's batches while the screen is open."""

DEFAULT_POLL_S = 30.0
"""The poll interval shown when benchwright.toml cannot be read (the ``[batch]`` default)."""

COLUMNS = ("#", "provider", "status", "provider status", "requests", "back", "errored", "not done", "waiting",
           "used", "created", "ended")
"""The table's columns, as ``benchwright batches`` prints them (``not done`` counts expired, cancelled and missing
requests; the head line says so, and the detail pane gives each count)."""
NOT_DONE_LEGEND = "not done = expired + cancelled + missing (the detail below gives each)"
"""The head line's legend of the ``not done`` column (issue 20: a cancelled batch must not read "expired")."""
NUMERIC = (0, 4, 5, 6, 7, 8, 9)
"""The columns of counts (right-aligned)."""


CANCELLABLE = ("pending", "submitted")
"""Statuses in which the provider can be asked to cancel a batch (it has a provider batch id)."""


def _when(stamp: str | None) -> str:
    return stamp[:19].replace("T", " ") if stamp else "-"


def batch_cells(row: dict[str, Any]) -> tuple[Text, ...]:
    """One table row of :func:`~benchwright.tui.services.batches.batch_rows`' ``row``, in :data:`COLUMNS` order,
    each cell literal text (provider names and statuses come from the project and the provider)."""
    back = row["succeeded"] + row["errored"] + row["expired"] + row["cancelled"] + row["missing"]
    values = (row["id"], row["provider"], row["status"], row["provider_status"] or "-", row["requests"], back,
              row["errored"], row["expired"] + row["cancelled"] + row["missing"], row["waiting"], row["used"],
              _when(row["created_at"]), _when(row["ended_at"] or row["collected_at"]))
    cells = tuple(literal(v) for v in values)
    for i in NUMERIC:
        cells[i].justify = "right"
    return cells


def _next_step(row: dict[str, Any]) -> str:
    status = row["status"]
    if status == "exported":
        return ("written to a file: run it (vllm run-batch), then benchwright batches import RESULTS.jsonl, then "
                "benchwright batches resume")
    if status in OPEN_BATCH_STATUSES:
        return ("still open: the job that made it collects it while it runs; else benchwright batches resume (or "
                "run the same step again: nothing is submitted twice)")
    if status == "failed":
        return "the provider refused the batch: its requests are retried when the command runs again"
    return "collected: every result is in the project"


def batch_detail(row: dict[str, Any]) -> Text:
    """The details of one batch (a :func:`~benchwright.tui.services.batches.batch_rows` row): ids, provider,
    status and counts, times, the command that made it, its file and its error, and what to do next; literal."""
    t = Text(f"batch #{row['id']}", style="bold")
    t.append_text(literal(f"  {row['status']}"))
    t.append("\n")

    def line(label: str, value: object) -> None:
        if value in (None, "", {}):
            return
        t.append(f"{label}: ", style="dim")
        t.append_text(literal(value))
        t.append("\n")

    line("provider", f"{row['provider']} (kind {row['kind']})")
    line("provider batch id", row["provider_batch_id"])
    line("provider status", row["provider_status"])
    line("endpoint", row["endpoint"])
    line("requests", f"{row['requests']} ({row['bytes']:,} bytes)")
    counts = ", ".join(f"{k} {row[k]}" for k in ("succeeded", "errored", "expired", "cancelled", "missing",
                                                   "waiting", "used") if row[k])
    line("in the project", counts or "none back yet")
    if row["provider_counts"]:
        line("provider counts", ", ".join(f"{k} {v}" for k, v in sorted(row["provider_counts"].items())))
    for key, label in (("created_at", "created"), ("submitted_at", "submitted"), ("ended_at", "ended"),
                       ("collected_at", "collected")):
        if row[key]:
            line(label, f"{_when(row[key])} UTC")
    line("file", row["file"])
    line("command", "benchwright " + " ".join(row["command"]) if row["command"] else "(none recorded)")
    if row["error"]:
        t.append("error: ", style="bold red")
        t.append_text(literal(row["error"]))
        t.append("\n")
    t.append_text(literal(_next_step(row), "italic"))
    return t


def poll_interval(store: Store) -> tuple[float, str | None]:
    """``([batch] poll_interval_s of the project's benchwright.toml, None)``, or ``(30, why)`` when the file
    cannot be read (``why``: the error's message)."""
    from benchwright.core.llm.config import load_llm_config

    from ..services.llm import project_dir_of

    try:
        return load_llm_config(project_dir_of(store)).settings.batch.poll_interval_s, None
    except BenchwrightError as e:
        return DEFAULT_POLL_S, str(e)


class BatchesScreen(Screen):
    """The project's batches with status and counts, refreshed while open; the highlighted one's details;
    ``c`` cancels it at the provider, ``r`` refreshes, ``escape`` goes back."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="batches.back"),
        Binding("c", "cancel_batch", "Cancel batch", id="batches.cancel"),
        Binding("r", "reload", "Refresh", id="batches.refresh"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="batches.help"),
    ]

    def __init__(self, store: Store, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.rows: list[dict[str, Any]] = []
        self.current: int | None = None  # the highlighted batch's id
        self._shown: list[tuple] = []  # the cells on screen, to skip a refresh that changes nothing
        self.poll_s, self._config_error = DEFAULT_POLL_S, None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="batches-head")
        yield DataTable(id="batches-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="batches-detail-scroll"):
            yield Static(id="batches-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.title = plain("Batches")
        self.poll_s, self._config_error = poll_interval(self.store)
        table = self.query_one("#batches-table", DataTable)
        for col in COLUMNS:
            table.add_column(literal(col), key=col)
        self.load()
        table.focus()
        self.set_interval(min(LOCAL_REFRESH_S, self.poll_s), self.load)

    def _head(self) -> Text:
        open_n = sum(1 for r in self.rows if r["status"] in OPEN_BATCH_STATUSES)
        t = Text(f"{len(self.rows)} batch{'' if len(self.rows) == 1 else 'es'}, {open_n} open · a running job asks "
                 f"the provider every {self.poll_s:g} s ([batch] poll_interval_s); this list re-reads the project "
                 f"every {min(LOCAL_REFRESH_S, self.poll_s):g} s\n{NOT_DONE_LEGEND}")
        if self._config_error:
            t.append("\nbenchwright.toml: ", style="bold yellow")
            t.append_text(literal(self._config_error))
        if not self.rows:
            t.append("\nNo batches yet: press b in a curation screen to send a step as a batch, or run an LLM "
                     "command with --batch.")
        return t

    def load(self) -> None:
        """Read the batches again and show them (the table is rebuilt only when a cell changed; the highlighted
        batch stays highlighted)."""
        self.rows = batch_rows(self.store)
        cells = [batch_cells(r) for r in self.rows]
        self.query_one("#batches-head", Static).update(self._head())
        by_id = {r["id"]: r for r in self.rows}
        if [tuple(c.plain for c in row) for row in cells] != self._shown:
            self._shown = [tuple(c.plain for c in row) for row in cells]
            table = self.query_one("#batches-table", DataTable)
            keep = self.current
            table.clear()
            for r in self.rows:
                table.add_row(*batch_cells(r), key=str(r["id"]))
            if keep in by_id:
                table.move_cursor(row=table.get_row_index(str(keep)))
        if self.current not in by_id:
            self.current = self.rows[0]["id"] if self.rows else None
        self.show(self.current)

    def show(self, batch_id: int | None) -> None:
        """Fill the detail pane with batch ``batch_id`` (None: empty)."""
        row = next((r for r in self.rows if r["id"] == batch_id), None)
        self.query_one("#batches-detail", Static).update(batch_detail(row) if row is not None else Text(""))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self.current = int(event.row_key.value)
            self.show(self.current)

    def action_reload(self) -> None:
        """Read the batches again now."""
        self.load()

    def action_cancel_batch(self) -> None:
        """Ask to confirm, then ask the provider to cancel the highlighted batch (in a worker)."""
        row = next((r for r in self.rows if r["id"] == self.current), None)
        if row is None:
            notify(self, "no batch to cancel", severity="warning")
            return
        if row["status"] not in CANCELLABLE or not row["provider_batch_id"]:
            notify(self, f"batch #{row['id']} is {row['status']}: only a submitted batch can be cancelled",
                   severity="warning", timeout=6)
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._cancel(row["id"])

        self.app.push_screen(CancelBatchScreen(row), done)

    @work(exclusive=True, group="batches-cancel", exit_on_error=False)
    async def _cancel(self, batch_id: int) -> None:
        from ..services.batches import cancel_batch

        notify(self, f"batch #{batch_id}: asking the provider to cancel it…", timeout=4)
        try:
            remote = await cancel_batch(self.store, batch_id,
                                        provider_factory=getattr(self.app, "provider_factory", None))
        except BenchwrightError as e:
            notify(self, error_text(e), title=f"batch #{batch_id} not cancelled", severity="error", timeout=10)
        else:
            notify(self, f"batch #{batch_id}: cancellation asked; the provider says {remote.status}. The command "
                   "that made it, run again (or benchwright batches resume), collects what finished and retries "
                   "the rest", timeout=10)
        self.load()


class CancelBatchScreen(ModalScreen[bool]):
    """Asks whether to cancel a batch at its provider: ``y`` yes (True), ``n`` or ``escape`` no (False)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Cancel the batch", id="cancel_batch.yes"),
        Binding("n", "answer(False)", "Keep it", id="cancel_batch.no"),
        Binding("escape", "answer(False)", "Keep it", id="cancel_batch.escape"),
    ]

    def __init__(self, row: dict[str, Any]) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        r = self.row
        text = Text(f"Cancel batch #{r['id']} at ", style="bold")
        text.append_text(literal(f"{r['provider']} ({r['provider_batch_id']})", "bold"))
        text.append(f"?\n\n{plural(r['requests'], 'request')}, {r['waiting']} still waiting. Requests the provider has not run "
                    "come back cancelled; the command that made the batch, run again, collects what finished and "
                    "retries the rest (online, or --retry batch).\n\ny cancel it · n / esc keep it running")
        with Vertical(id="cancel-batch-dialog"):
            yield Static(text, id="cancel-batch-text")

    def action_answer(self, yes: bool) -> None:
        """Close with the answer."""
        self.dismiss(yes)
