"""The queue screen: every pair with its status, filters, text search, progress; enter opens a pair."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Input, Select, Static
from textual.worker import get_current_worker

from benchwright.core.evidence_drift import EVIDENCE_FILTERS
from benchwright.core.vocabulary import DEDUP_FILTERS, DIFFICULTY_FILTERS, ITEM_FILTERS, LEAKAGE_FILTERS
from benchwright.db import CHECKLIST_FILTERS, CURATION_FILTERS, STATUSES, QueueFilter, QueueRow, Store

from ..services.views import (
    QueueProgress,
    counts_inline,
    known_queue_progress,
    queue_progress,
    queue_progress_in_thread,
)
from ..widgets import LiteralInput, literal, literal_options

PAGE = 200
"""Rows fetched at a time; more are fetched when the cursor nears the end."""

MAX_PRELOAD = 100
"""Rows the table loads above the pair it opens at (the rest above are loaded when the cursor comes near them):
loading the 1,000 rows above pair #1,000 took half a second."""

PREPARE_AFTER_S = 1.0
"""Seconds after the app's start (the queue under the review screen) at which the queue loads its rows and
filters in the background."""

DATA_FIELDS = ("dedup", "difficulty", "item", "leakage", "selection", "split")
"""The queue filters of SWE-QA-Pro's data methods (issue 17), offered together in one Select, prompt "data"."""


def data_filter_options(selections: list[str], splits: list[str]) -> list[tuple[str, str]]:
    """``(prompt, value)`` options of the "data" Select: ``dedup: unresolved``... from the core vocabularies,
    ``selection: NAME`` and ``split: NAME`` from the project; the value is ``KEY=VALUE`` as ``--where`` takes it."""
    values = [("dedup", DEDUP_FILTERS), ("difficulty", DIFFICULTY_FILTERS), ("item", ITEM_FILTERS),
              ("leakage", LEAKAGE_FILTERS), ("selection", selections), ("split", splits)]
    return [(f"{key}: {v}", f"{key}={v}") for key, vs in values for v in vs]


_STATUS_TEXT = {
    "revise": ("to revise", "magenta"),
    "accept": ("accepted", "green"), "reject": ("rejected", "red"), "skip": ("skipped", "yellow"),
    None: ("undecided", "dim"),
}


class QueueTable(DataTable):
    """The queue's table: a page-down or cursor-down that would go past the rows loaded loads more first. A held
    key's presses are handled before the row-highlighted messages that load rows otherwise, so the cursor
    stopped at the last row loaded, every :data:`PAGE` rows."""

    def action_page_down(self) -> None:
        """Load the rows a page below the cursor (when not loaded yet), then move a page down."""
        self._rows_until(self.cursor_row + self.size.height)
        super().action_page_down()

    def action_cursor_down(self) -> None:
        """Load the rows below the cursor (when not loaded yet), then move one row down."""
        self._rows_until(self.cursor_row + 1)
        super().action_cursor_down()

    def _rows_until(self, row: int) -> None:
        screen = self.screen
        if isinstance(screen, QueueScreen):
            screen.rows_until(row)


class QueueScreen(Screen):
    """The review queue of one annotator, in import order, filtered; opens at the first undecided pair."""

    BINDINGS = [
        Binding("question_mark", "app.help", "Help", key_display="?", id="queue.help"),
        Binding("enter", "open", "Review", show=True, id="queue.open"),
        Binding("slash", "search", "Search", key_display="/", id="queue.search"),
        Binding("u", "next_undecided", "First undecided", id="queue.undecided"),
        Binding("r", "reload", "Refresh", id="queue.refresh"),
        Binding("home", "top", "Top", show=False, priority=True, id="queue.top"),
        Binding("end", "bottom", "Last pair", show=False, priority=True, id="queue.bottom"),
        Binding("A", "adjudicate", "Adjudicate", key_display="A", id="queue.adjudicate"),
        Binding("S", "statistics", "Statistics", key_display="S", id="queue.statistics"),
        Binding("R", "release", "Release", key_display="R", id="queue.release"),
        Binding("P", "probes", "Probes", key_display="P", id="queue.probes"),
        Binding("G", "curate", "Curate queue", key_display="G", id="queue.curate"),
        Binding("M", "agent_answers", "Agent", key_display="M", id="queue.agent_answers"),
        Binding("D", "duplicates", "Duplicates", key_display="D", id="queue.duplicates"),
        Binding("X", "taxonomy", "Taxonomy", key_display="X", id="queue.taxonomy"),
        Binding("B", "batches", "Batches", key_display="B", id="queue.batches"),
    ]

    def __init__(self, store: Store, annotator: str, *, start_at: str | None = None,
                 under_review: bool = False) -> None:
        """``start_at``: the pair to put the cursor on first (else the first undecided one); ``under_review``:
        the screen is opened under the review screen (the app's start), so its widgets are built a moment later
        (:data:`PREPARE_AFTER_S`) or when it is first shown, whichever comes first, not while the first pair is
        being drawn."""
        super().__init__()
        self.start_at = start_at
        self.under_review = under_review
        self._built = not under_review
        self._build_lock: asyncio.Lock | None = None
        self.store = store
        self.annotator = annotator
        # An annotator with assignments sees their own pairs first (the filter can show all).
        self.flt = QueueFilter(assigned_to=annotator if store.assigned_count(annotator) else None)
        self.last_ordinal = 0
        self.exhausted = False
        self.rows: list[QueueRow] = []
        self.window_start = 0
        """The table holds the rows after this position; rows at or before it are loaded when the cursor nears
        the top (0: from the first pair)."""
        self._index: dict[str, int] | None = None
        self._loaded = False
        self._load_on_show = False

    def compose(self) -> ComposeResult:
        yield Header()
        if self._built:
            yield from self._body()
        yield Footer()

    def _body(self) -> list[Widget]:
        """The widgets between the header and the footer: the filters, the search field, progress and the table."""
        facets = self.store.facets()
        selects = [
            Select(literal_options(STATUSES), prompt="status", id="f-status"),
            Select(literal_options(facets["repository"]), prompt="repository", id="f-repository"),
            Select(literal_options(facets["qa_type"]), prompt="QA type", id="f-qa_type"),
            Select(literal_options(facets["category"]), prompt="category", id="f-category"),
            Select(literal_options(CHECKLIST_FILTERS), prompt="checklist", id="f-checklist"),
        ]
        if self.flt.assigned_to:
            selects.append(Select(literal_options([("assigned to me", self.annotator)]), value=self.annotator,
                                  prompt="all pairs", id="f-assigned_to"))
        filters = Horizontal(*selects, id="filters")
        return [filters,
                LiteralInput(placeholder="search question and answer: / to type, enter to apply", id="f-text"),
                Static(id="progress"),
                QueueTable(id="queue", cursor_type="row", zebra_stripes=True)]

    async def _ensure_built(self) -> None:
        """Mount the body (once) when the screen was opened under the review screen."""
        if self._built:
            return
        if self._build_lock is None:
            self._build_lock = asyncio.Lock()
        async with self._build_lock:
            if self._built:
                return
            await self.mount_all(self._body(), before=self.query_one(Footer))
            self._set_up_table()
            self._built = True

    def on_mount(self) -> None:
        if self.under_review:
            # Opened under the review screen (the app's start): the body, its rows, counts and the last filters
            # wait, so they cost nothing while the first pair is being shown; they are prepared a moment later (or
            # when the queue is first shown, if that comes first), so that going back to the queue redraws rows
            # in place.
            self._load_on_show = True
            self.set_timer(PREPARE_AFTER_S, self._prepare)
            return
        self._set_up_table()
        if self.app.screen is not self:
            self._load_on_show = True
            self.set_timer(PREPARE_AFTER_S, self._prepare)
            return
        self._first_load()

    def _set_up_table(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("#", key="ordinal", width=7)
        table.add_column("status", key="status", width=12)
        table.add_column("type", key="type", width=6)
        table.add_column("repository", key="repository", width=18)
        table.add_column("question", key="question")
        table.focus()

    def _first_load(self) -> None:
        self.reload(focus_first_undecided=self.start_at is None, keep=self.start_at)
        # The curation filter is mounted after the first paint: a Select costs tens of milliseconds to mount.
        self.call_after_refresh(self._mount_curation_filter)

    async def _prepare(self) -> None:
        await self._ensure_built()
        if self._load_on_show:
            self._load_on_show = False
            self._first_load()

    async def on_screen_resume(self) -> None:
        # (the resume posted when the app pushed this screen arrives after the review screen went on top of it)
        if self.app.screen is self:
            await self._ensure_built()
        if self._load_on_show and self.app.screen is self:
            self._load_on_show = False
            if not self._loaded:
                self._first_load()
            else:
                self.call_after_refresh(self._mount_curation_filter)

    def _mount_curation_filter(self) -> None:
        if not self.query("#f-curation"):
            self.query_one("#filters").mount(
                Select(literal_options(CURATION_FILTERS), prompt="curation", id="f-curation"),
                after=self.query_one("#f-checklist"))
            self.query_one("#filters").mount(
                Select(literal_options(EVIDENCE_FILTERS), prompt="evidence", id="f-evidence"),
                after=self.query_one("#f-curation"))
            options = data_filter_options(self.store.selection_names(), self.store.pair_splits())
            self.query_one("#filters").mount(Select(literal_options(options), prompt="data", id="f-data"),
                                             after=self.query_one("#f-evidence"))

    # ----------------------------------------------------------------- loading
    def reload(self, *, focus_first_undecided: bool = False, keep: str | None = None) -> None:
        """Reload from the store with the current filter; put the cursor on ``keep`` or the first undecided."""
        table = self.query_one(DataTable)
        table.clear()
        self._loaded = True
        self.rows, self.last_ordinal, self.exhausted, self._index = [], 0, False, None
        target = keep or (self.store.first_undecided(self.annotator, self.flt) if focus_first_undecided else None)
        target_ordinal = self.store.ordinal_of(target) if target else 0
        # Down a large queue: the table starts at most MAX_PRELOAD positions above the target (with a filter, fewer
        # rows); the rows above come when the cursor nears the top, and Home reloads from the first pair.
        self.last_ordinal = self.window_start = max(0, target_ordinal - MAX_PRELOAD - 1)
        self._load_more()
        while target and not self.exhausted and self.last_ordinal < target_ordinal:
            self._load_more()
        if target:
            for i, row in enumerate(self.rows):
                if row.id == target:
                    table.move_cursor(row=i, animate=False)
                    break
        self.refresh_progress()

    def _load_more(self) -> None:
        if self.exhausted:
            return
        page = self.store.queue_page(self.annotator, self.flt, after_ordinal=self.last_ordinal, limit=PAGE)
        if len(page) < PAGE:
            self.exhausted = True
        if not page:
            return
        self.last_ordinal = page[-1].ordinal
        self.rows.extend(page)
        self._index = None
        table = self.query_one(DataTable)
        for r in page:
            table.add_row(*self._cells(r), key=r.id)

    def rows_until(self, row: int) -> None:
        """Load pages until the table holds row ``row`` with 20 rows to spare, or the filter has no more."""
        while self._loaded and not self.exhausted and row >= len(self.rows) - 20:
            self._load_more()

    def _load_before(self) -> None:
        """Load the rows above the table's first one (up to :data:`PAGE`), keeping the cursor on its row."""
        first = self.rows[0].ordinal if self.rows else self.window_start + 1
        page: list[QueueRow] = []
        while self.window_start > 0 and not page:
            self.window_start = max(0, self.window_start - PAGE)
            page = [r for r in self.store.queue_page(self.annotator, self.flt, after_ordinal=self.window_start,
                                                      limit=PAGE) if r.ordinal < first]
        if not page:
            return
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        self.rows[:0] = page
        self._index = None
        table.clear()
        for r in self.rows:
            table.add_row(*self._cells(r), key=r.id)
        table.move_cursor(row=cursor + len(page), animate=False)

    def show_at(self, pair_id: str | None) -> None:
        """Put the cursor on ``pair_id`` (back from the review screen): the rows loaded are read again in one
        query and only the rows that changed are redrawn; a pair outside them, or rows that the filter now lets
        through or holds back, reload the table around the pair."""
        index = self._row_index().get(pair_id) if pair_id and self._loaded else None
        if index is None:
            self.reload(keep=pair_id)
            return
        fresh = self.store.queue_page(self.annotator, self.flt, after_ordinal=self.rows[0].ordinal - 1,
                                      limit=len(self.rows))
        if [r.id for r in fresh] != [r.id for r in self.rows]:
            self.reload(keep=pair_id)
            return
        table = self.query_one(DataTable)
        keys = [c.key for c in table.ordered_columns]
        for old, new in zip(self.rows, fresh, strict=True):
            if old != new:
                for key, cell in zip(keys, self._cells(new), strict=True):
                    table.update_cell(new.id, key, cell)
        self.rows = fresh
        table.move_cursor(row=index, animate=False)
        self.refresh_progress()

    def _row_index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {r.id: i for i, r in enumerate(self.rows)}
        return self._index

    @staticmethod
    def _cells(r: QueueRow) -> tuple[Text, ...]:
        label, style = _STATUS_TEXT[r.decision] if not r.reopened else ("reopened", "bold yellow")
        status = Text(label, style=style)
        if r.needs_reference:
            status.append("!", style="bold red")
        if r.flags:
            status.append("⚑", style="bold magenta")  # a curation step flagged the pair (see g on it)
        if r.duplicate:
            status.append("≈", style="bold cyan")  # in an unresolved duplicate group (see D on it)
        question = r.question.replace("\n", " ")
        return (
            Text(str(r.ordinal), justify="right"), status, literal(r.qa_type or ""),
            literal(r.repository or ""), literal(question[:300]),
        )

    def refresh_progress(self) -> None:
        """Update the progress line (decided / total, mine, rows matching the filter). Counts are kept until the
        project changes; a large project counts them again in a thread and the line shows them when done."""
        if counts_inline(self.store):
            self._show_progress(queue_progress(self.store, self.annotator, self.flt))
            return
        view = known_queue_progress(self.store, self.annotator, self.flt)
        if view is not None:
            self._show_progress(view)
            return
        line = Text()
        line.append("decided …", style="bold")
        line.append(" · counting · annotator ")
        line.append_text(literal(self.annotator, style="bold"))
        self.query_one("#progress", Static).update(line)
        self._count_progress(self.flt)

    class ProgressCounted(Message):
        """Posted by the progress worker: the queue's progress line for ``flt``, counted in a thread."""

        def __init__(self, flt: QueueFilter, view: QueueProgress) -> None:
            super().__init__()
            self.flt, self.view = flt, view

    @work(thread=True, exclusive=True, group="queue-progress", exit_on_error=False)
    def _count_progress(self, flt: QueueFilter) -> None:
        view = queue_progress_in_thread(self.store, self.annotator, flt)
        if not get_current_worker().is_cancelled:
            self.post_message(self.ProgressCounted(flt, view))

    @on(ProgressCounted)
    def _on_progress_counted(self, event: ProgressCounted) -> None:
        self._progress_counted(event.flt, event.view)

    def _progress_counted(self, flt: QueueFilter, view: QueueProgress) -> None:
        if flt == self.flt:
            self._show_progress(view)

    def _show_progress(self, view: QueueProgress) -> None:
        p, shown = view.progress, view.matching
        line = Text()
        line.append(f"decided {p.decided}/{p.total}", style="bold")
        line.append(f" · mine {p.mine} · matching filter {shown} · annotator ")
        line.append_text(literal(self.annotator, style="bold"))
        self.query_one("#progress", Static).update(line)

    # ------------------------------------------------------------------ events
    @on(DataTable.RowHighlighted)
    def _maybe_load(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row >= len(self.rows) - 20:
            self._load_more()
        # the cursor where it is now: a reload's first row is highlighted before the cursor moves to its target
        if self.window_start > 0 and event.cursor_row < 5 and self.query_one(DataTable).cursor_row < 5:
            self._load_before()

    @on(DataTable.RowSelected)
    def _open_selected(self, event: DataTable.RowSelected) -> None:
        self.open_pair(str(event.row_key.value))

    @on(Select.Changed)
    def _filter_changed(self, event: Select.Changed) -> None:
        field = (event.select.id or "").removeprefix("f-")
        value = None if event.value is Select.NULL else str(event.value)
        if field == "data":  # one data filter at a time: KEY=VALUE, the others cleared
            fields = dict.fromkeys(DATA_FIELDS)
            if value is not None:
                key, _, val = value.partition("=")
                fields[key] = val
            self.flt = QueueFilter(**{**self.flt.__dict__, **fields})
        else:
            self.flt = QueueFilter(**{**self.flt.__dict__, field: value})
        self.reload()

    @on(Input.Submitted, "#f-text")
    def _search(self, event: Input.Submitted) -> None:
        self.flt = QueueFilter(**{**self.flt.__dict__, "text": event.value.strip() or None})
        self.reload()
        self.query_one(DataTable).focus()

    # ----------------------------------------------------------------- actions
    def open_pair(self, pair_id: str) -> None:
        """Open the review screen at ``pair_id``, walking the queue with the current filter."""
        from .review import ReviewScreen

        async def returned(last_pair_id: str | None) -> None:
            await self._ensure_built()
            self.show_at(last_pair_id)

        self.app.push_screen(ReviewScreen(self.store, self.annotator, pair_id, self.flt), returned)

    def action_open(self) -> None:
        """Review the highlighted pair."""
        table = self.query_one(DataTable)
        if self.rows and table.cursor_row < len(self.rows):
            self.open_pair(self.rows[table.cursor_row].id)

    def action_search(self) -> None:
        """Focus the search field."""
        self.query_one("#f-text", Input).focus()

    def action_next_undecided(self) -> None:
        """Put the cursor on the first undecided pair (loading rows up to it)."""
        self.reload(focus_first_undecided=True)

    def action_adjudicate(self) -> None:
        """Open the adjudication screen (pairs whose reviews or checklist edits disagree)."""
        from .adjudication import AdjudicationScreen

        self.app.push_screen(AdjudicationScreen(self.store, self.annotator), lambda _: self.reload())

    def action_statistics(self) -> None:
        """Open the agreement statistics."""
        from .statistics import StatisticsScreen

        self.app.push_screen(StatisticsScreen(self.store))

    def action_curate(self) -> None:
        """Run a curation step over the pairs of the current filter (RepoProbe §3.2), with progress."""
        from .curation import CurationRunScreen

        self.app.push_screen(CurationRunScreen(self.store, self.annotator, self.flt),
                             callback=lambda _: self.action_reload())

    def action_agent_answers(self) -> None:
        """Run the agent over the pairs of the current filter (SWE-QA-Pro §3.1), with progress and cancel."""
        from .answer_run import AnswerRunScreen

        self.app.push_screen(AnswerRunScreen(self.store, self.annotator, self.flt),
                             callback=lambda _: self.action_reload())

    def action_taxonomy(self) -> None:
        """Open the taxonomy: topics and leaves with sizes, sample members, label history (SWE-QA-Pro §2.1)."""
        from .taxonomy import TaxonomyScreen

        self.app.push_screen(TaxonomyScreen(self.store, self.annotator))

    def action_batches(self) -> None:
        """Open the project's provider batches: status, counts, details; cancel one (issue 19)."""
        from .batches import BatchesScreen

        self.app.push_screen(BatchesScreen(self.store, self.annotator))

    def action_duplicates(self) -> None:
        """Open the duplicates screen on the highlighted pair's group (else the first unresolved group)."""
        from .duplicates import DuplicatesScreen

        table = self.query_one(DataTable)
        pair = self.rows[table.cursor_row].id if self.rows and table.cursor_row < len(self.rows) else None
        self.app.push_screen(DuplicatesScreen(self.store, self.annotator, pair_id=pair),
                             callback=lambda _: self.action_reload())

    def action_probes(self) -> None:
        """Open probe validation (NITR oracles)."""
        from .probes import ProbesScreen

        self.app.push_screen(ProbesScreen(self.store, self.annotator))

    def action_release(self) -> None:
        """Open the release screen (preflight, then create)."""
        from .release import ReleaseScreen

        self.app.push_screen(ReleaseScreen(self.store, self.annotator))

    def action_top(self) -> None:
        """Reload the queue from its first pair."""
        self.reload()

    def action_bottom(self) -> None:
        """Put the cursor on the last pair of the current filter: the table is loaded around it (up to
        :data:`MAX_PRELOAD` rows above it; the rows further up come when the cursor nears them)."""
        last = self._last_pair()
        if last is None:
            return
        self.reload(keep=last)

    def _last_pair(self) -> str | None:
        """The id of the last pair (in queue order) the current filter lets through, or None: the last pair of
        the project, else the filtered pair before it (:meth:`Store.neighbor`, one query from the end)."""
        after = max(0, self.store.count_pairs() - 1)  # ordinals start at 1; a removed pair leaves a gap
        last = None
        while page := self.store.queue_page(self.annotator, QueueFilter(), after_ordinal=after, limit=PAGE):
            last, after = page[-1], page[-1].ordinal
        if last is None:
            return None
        if self.store.queue_page(self.annotator, self.flt, after_ordinal=last.ordinal - 1, limit=1):
            return last.id
        return self.store.neighbor(last.id, self.annotator, self.flt, step=-1)

    def action_reload(self) -> None:
        """Reload the queue from the project (another annotator may have worked meanwhile)."""
        self.reload(keep=self.rows[self.query_one(DataTable).cursor_row].id if self.rows else None)
