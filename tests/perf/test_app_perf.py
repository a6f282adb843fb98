"""Review app benchmarks on a 100,000-pair project (headless, 160x48).

- start: from constructing ``BenchwrightApp`` to the review screen showing the first undecided pair
  (goal < 400 ms, issue 19), with that pair at the top of the queue and deep in it (first 60,000 decided);
  baselines: a bare Textual app with a header, a Static and a footer, and the store calls alone.
- previous/next: 200 ``right`` then 100 ``left``; per-press latency (goal p95 < 20 ms); baseline: the
  same walk through ``Store.neighbor`` + ``Store.get_pair`` alone.
- queue: ``escape`` from the review screen until the queue is shown with its cursor on the pair (goal
  < 150 ms); baseline: the store calls of the queue's reload alone.

Figures (issue 19 item 6; ``.venv/bin/python -m pytest tests/perf/test_app_perf.py -m perf -s``, 2 shared
cores). Before, load ~2.5: start 474 ms painted (store 87 ms: pair_splits 62, count_filtered 9, facets 9),
60,000 decided 5.7 s (store 3.5 s: progress 2x 2.5 s, first_undecided 0.5 s); previous/next p50 35.8 / p95
51.4 ms wall, CPU 35.3 / 51.2 ms; escape to the queue 244 ms at the first undecided (store 16 ms), 788 ms at
pair #1,000 (store 26 ms: 6 pages), 2.7 s with 60,000 decided (store 2.0 s: progress 1.8 s). After, in a run at
load 7-9 (other sessions' tests: every wall figure of it is several times its quiet value, the bare-app floor
went 37 -> 149 ms), so compare CPU and store time: previous/next CPU p50 28.2 / p95 38.7 ms (the WHAT-IF of
the same run, Markdown re-rendered as before: 44.4 / 60.4); store calls of an escape to the queue 1.6-4.6 ms
(was 16-26 ms; 3.1 ms with 60,000 decided, was 2.0 s: counts kept until the project changes, rows redrawn in
place); start makes no progress count and no queue load on the way to the first pair (progress counted in a
thread; the queue prepares 1 s later). What the store still costs, with 60,000 decided: first_undecided 0.75 s
at start and Store.progress 0.7-1.2 s (db queries, not the app's). Re-measure on a quiet machine.
  Then (m028 ``review_resume``, 2026-12-02 18:20, load 7-8, bare app 251-535 ms wall): first_undecided with 60,000
  decided 0.04-0.4 ms from the resume ordinal (the first call of an annotator without one: one walk, ~1.6 s at
  that load, written for the next start); in the app's start 0.4 ms at the top, 13.5 ms deep; every store call of
  the start 49 / 126 ms (1% of it). The start itself: painted 4.9 s / 8.9 s wall, CPU 1.26 s / 1.91 s against the
  bare app's 80 / 105 ms (16x / 18x): what is left is Textual's, for the widgets of both screens (py-spy: in the
  event loop 41% ``Stylesheet.apply``, 24% component classes, 6% ``FooterKey`` watchers); the queue screen composed
  under the review screen costs ~25% of the start's CPU (1.6 -> 1.15 s with a stub queue screen).
  Then (2026-12-03, a quiet machine: load average below 1.1, the bare app 34-48 ms): the queue screen opened under
  the review screen builds its filters and table 1 s later (``PREPARE_AFTER_S``) or when first shown: start to the
  first undecided pair at the top 795 / 508 ms -> 481 / 313 ms (old and new alternating), 298 and 484 ms in two
  runs of this file (8-12x the bare app); 60,000 decided 346-500 ms (7-15x). The start's heap frozen
  (``gc.freeze``, ``FREEZE_AFTER_S``): full collections during 300 presses 3-4 taking 321-514 ms in all (each a
  120-170 ms stall) -> 5 taking 11-12 ms; previous/next p95 24.7 -> 21.1 ms (0 decided) and 30.9 -> 23.0 ms (60,000
  decided), max 132-154 -> 23-30 ms, p50 18-20 ms: the p95 goal of 20 ms is missed by 1-3 ms, which is Textual's
  layout and paint (a cProfile of 300 presses: ``_refresh_layout`` ~57%, our ``show_pair`` ~16%). Escape to the
  queue: 74-86 ms once the queue has been shown and holds the pair; the first escape after the start (the table's
  first paint) 210-245 ms, and one that reloads the table around a pair outside it (#1,000) 170-390 ms: the goal of
  150 ms is met only for the later escapes.
- accept presses: 200 ``a`` in a row, all queued at once (a held key, as tmux send-keys) and through
  ``Pilot.press``; time per decision to the pair after the last drawn, against the bare-app start; BEFORE
  in the same run draws every pair (``REPAINT_S = 0``). Held key, 100,000 pairs, 2 shared cores: 28.5 ms
  per decision (35/s) -> 7.3 ms (138/s), store 6.5 -> 2.6 ms of it (no progress recount, no cited files read
  for a pair not drawn).
- what-if: the previous/next walk again with the two fixes suggested by these figures patched in from
  the test (single-widget Markdown, cached progress); labelled WHAT-IF in the output.

Every figure also says how much of it is store (SQLite) time, measured by wrapping the public methods of
the Store instance the app uses.

How a press is timed: the key event is posted to the app (as ``Pilot.press`` does), then the clock runs
until ``ReviewScreen.show_pair`` has finished for the new pair (question and answer Markdown mounted),
every widget of the screen has processed its pending messages, and the screen's layout and paint have
been done (``Pilot.pause`` does the same three steps, plus an idle wait of >= 20 ms that would swamp a
50 ms goal; ``Pilot.press`` adds two more). A short ``pilot.press`` + ``pilot.pause`` sample, with the
harness's own floor (an unbound key), is printed as a cross-check.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from perf_support import (
    ANNOTATOR,
    N_PAIRS,
    copy_project,
    decide_first,
    goal,
    percentile,
    report,
    summary_ms,
)
from rich.markdown import Markdown as RichMarkdown
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, Header, Static

from benchwright.core.text import printable
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens.queue import QueueScreen
from benchwright.tui.screens.review import ReviewScreen

pytestmark = pytest.mark.perf

SIZE = (160, 48)
DEEP = 60_000
START_GOAL_S = 0.400
START_SAFETY_S = 10.0
PRESS_GOAL_P95_S = 0.020
PRESS_SAFETY_P95_S = 1.0
QUEUE_GOAL_S = 0.150
QUEUE_SAFETY_S = 5.0
QUEUE_DEEP_TARGET = 1000
"""The second place the queue is opened at (the issue's "escape to the queue at pair #1,000")."""
TIMEOUT_S = 30.0


# ------------------------------------------------------------------ helpers
@pytest.fixture(scope="module", params=[0, DEEP], ids=["first-undecided-at-top", "first-60000-decided"])
def project(request, base_project: Path, perf_dir: Path) -> tuple[Path, int]:
    """(project file, number of pairs already decided by the annotator)."""
    depth = request.param
    if depth == 0:
        return base_project, 0
    path = copy_project(base_project, perf_dir / f"deep-{depth}.db")
    t0 = time.perf_counter()
    decide_first(path, depth)
    print(f"\n  (recorded {depth:,} decisions in {time.perf_counter() - t0:.1f} s)")
    return path, depth


async def _until(predicate, what: str, timeout: float = TIMEOUT_S) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.0005)


def _review_shows(app: App, pair_id: str) -> bool:
    """The review screen is current and fully shows ``pair_id`` (both Markdown documents mounted)."""
    screen = app.screen
    if not isinstance(screen, ReviewScreen) or screen.pair_id != pair_id or screen.pair is None:
        return False
    try:
        answer = screen.query_one("#answer")
    except Exception:
        return False
    expected = (screen.pair.reference_answer or "").strip()
    if isinstance(answer, _StaticMarkdown):  # the what-if stand-in
        return answer.bench_source.strip() == expected
    return getattr(answer, "source", "").strip() == printable(expected).strip()


async def _settle(pilot, app: App) -> None:
    """Let every widget of the current screen process its queued messages, then lay out and paint
    (Pilot.pause without its idle wait)."""
    await pilot._wait_for_screen()
    app.screen._on_timer_update()


class _StoreMeter:
    """Times every public Store call made through one Store instance (outermost calls only)."""

    def __init__(self, store: Store) -> None:
        self.total = 0.0
        self.calls = 0
        self.by_name: dict[str, float] = {}
        self.count_by_name: dict[str, int] = {}
        self._depth = 0
        for name in dir(store):
            if name.startswith("_") or name in ("db", "path", "write", "close"):
                continue
            fn = getattr(store, name)
            if callable(fn) and not isinstance(fn, type):
                setattr(store, name, self._wrap(name, fn))

    def _wrap(self, name, fn):
        def timed(*args, **kwargs):
            if self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                self._depth -= 1
                self.total += dt
                self.calls += 1
                self.by_name[name] = self.by_name.get(name, 0.0) + dt
                self.count_by_name[name] = self.count_by_name.get(name, 0) + 1

        return timed

    def reset(self) -> None:
        self.total, self.calls, self.by_name, self.count_by_name = 0.0, 0, {}, {}

    def top(self, n: int = 5) -> str:
        items = sorted(self.by_name.items(), key=lambda kv: -kv[1])[:n]
        return ", ".join(f"{k} {self.count_by_name[k]}x {v * 1e3:.1f} ms" for k, v in items)


class _FullGCMeter:
    """Count and time CPython's full (generation 2) collections."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._t0

    def __enter__(self):
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self)


class _BareApp(App):
    """Framework floor: a Textual app with a header, a 2 kB Static and a footer."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("x " * 1000, id="body")
        yield Footer()


async def _time_start(db_path: Path, expected: str) -> tuple[float, float, _StoreMeter, float]:
    """(seconds to the review screen showing ``expected``, seconds to that screen painted, store meter, process
    CPU seconds to painted)."""
    store = Store.open(db_path)
    meter = _StoreMeter(store)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        app = BenchwrightApp(store, ANNOTATOR)
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: _review_shows(app, expected), "the review screen at the first undecided pair")
            shown = time.perf_counter() - t0
            await _settle(pilot, app)
            painted, cpu = time.perf_counter() - t0, time.process_time() - c0
        return shown, painted, meter, cpu
    finally:
        store.close()


async def _time_bare_start(cpu: list[float] | None = None) -> float:
    """Seconds to the bare app painted; its process CPU seconds appended to ``cpu`` when given."""
    t0, c0 = time.perf_counter(), time.process_time()
    app = _BareApp()
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: bool(app.screen.query("#body")), "the bare app")
        await _settle(pilot, app)
        if cpu is not None:
            cpu.append(time.process_time() - c0)
        return time.perf_counter() - t0


# ------------------------------------------------------------------ start
async def test_start_to_first_undecided(project: tuple[Path, int]) -> None:
    db_path, depth = project
    with Store.open(db_path) as store:
        t0 = time.perf_counter()
        expected = store.first_undecided(ANNOTATOR)
        store.get_pair(expected)
        store.progress(ANNOTATOR)
        store_s = time.perf_counter() - t0
        ordinal = store.ordinal_of(expected)
    assert ordinal == depth + 1

    runs = [await _time_start(db_path, expected) for _ in range(3)]
    bare_cpu: list[float] = []
    bare = [await _time_bare_start(bare_cpu) for _ in range(3)]
    shown = statistics.median(r[0] for r in runs)
    painted = statistics.median(r[1] for r in runs)
    sql = statistics.median(r[2].total for r in runs)
    cpu = statistics.median(r[3] for r in runs)
    bare_s, bare_cpu_s = statistics.median(bare), statistics.median(bare_cpu)
    report(
        f"start -> review screen at the first undecided pair (#{ordinal:,} of {N_PAIRS:,})",
        [
            f"shown   : median {shown * 1e3:7.1f} ms   runs {', '.join(f'{r[0] * 1e3:.0f}' for r in runs)} ms",
            f"painted : median {painted * 1e3:7.1f} ms   runs {', '.join(f'{r[1] * 1e3:.0f}' for r in runs)} ms"
            f"   (goal < {START_GOAL_S * 1e3:.0f} ms: {goal(painted < START_GOAL_S)})",
            f"baseline bare Textual app start: median {bare_s * 1e3:.1f} ms -> ratio {painted / bare_s:.2f}x",
            f"CPU     : median {cpu * 1e3:7.1f} ms; bare app {bare_cpu_s * 1e3:.1f} ms -> ratio {cpu / bare_cpu_s:.2f}x",
            f"baseline store calls alone (first_undecided + get_pair + progress): {store_s * 1e3:.1f} ms"
            f" ({store_s / painted:.0%} of the start)",
            f"store calls the app makes while starting: median {sql * 1e3:.1f} ms ({sql / painted:.0%} of the start): "
            + runs[-1][2].top(),
        ],
    )
    assert painted < START_SAFETY_S


# ------------------------------------------------------------- previous/next
KEYS = ["right"] * 200 + ["left"] * 100


def _store_walk(store: Store, start: str, keys: list[str]) -> tuple[list[float], str]:
    """Baseline: the same walk through Store.neighbor + Store.get_pair alone; (per step, last id)."""
    times: list[float] = []
    current = start
    for key in keys:
        t0 = time.perf_counter()
        current = store.neighbor(current, ANNOTATOR, step=1 if key == "right" else -1)
        store.get_pair(current)
        times.append(time.perf_counter() - t0)
    return times, current


async def _navigate(app: App, pilot, meter: _StoreMeter, keys: list[str]) -> dict:
    """Press ``keys`` on the review screen, timing each press (see the module docstring)."""
    screen = app.screen
    done = asyncio.Event()
    original = screen.show_pair

    async def show_pair(pair_id: str) -> None:
        try:
            await original(pair_id)
        finally:
            done.set()

    screen.show_pair = show_pair  # instrument this instance: the clock stops after its await
    out: dict = {"wall": [], "cpu": [], "sql": [], "sql_by_name": {}}
    try:
        with _FullGCMeter() as gcm:
            for key in keys:
                before = screen.pair_id
                done.clear()
                meter.reset()
                c0, t0 = time.process_time(), time.perf_counter()
                app.post_message(events.Key(key, None))
                await asyncio.wait_for(done.wait(), TIMEOUT_S)
                await _settle(pilot, app)
                out["wall"].append(time.perf_counter() - t0)
                out["cpu"].append(time.process_time() - c0)
                out["sql"].append(meter.total)
                for name, seconds in meter.by_name.items():
                    out["sql_by_name"][name] = out["sql_by_name"].get(name, 0.0) + seconds
                assert screen.pair_id != before, f"{key} did not move"
    finally:
        del screen.show_pair
    out["gc_count"], out["gc_s"] = gcm.count, gcm.seconds
    return out


def _nav_lines(nav: dict, base: list[float], n: int) -> list[str]:
    wall = nav["wall"]
    p50, p95 = percentile(wall, 0.5), percentile(wall, 0.95)
    b50 = percentile(base, 0.5)
    by_name = sorted(nav["sql_by_name"].items(), key=lambda kv: -kv[1])[:6]
    return [
        f"app, per press (wall)   : {summary_ms(wall)}",
        f"app, per press (CPU)    : {summary_ms(nav['cpu'])}",
        f"goal p95 < {PRESS_GOAL_P95_S * 1e3:.0f} ms: {goal(p95 < PRESS_GOAL_P95_S)}",
        f"  of which store calls  : {summary_ms(nav['sql'])}",
        "  store ms/press by call: " + ", ".join(f"{k} {v * 1e3 / n:.2f}" for k, v in by_name),
        f"  full GC collections   : {nav['gc_count']} in {n} presses, {nav['gc_s'] * 1e3:.0f} ms in all"
        f" ({nav['gc_s'] / sum(wall):.0%} of the navigation time)",
        f"baseline neighbor+get_pair: {summary_ms(base)}",
        f"ratio app / baseline    : p50 {p50 / b50:,.0f}x   mean {statistics.fmean(wall) / statistics.fmean(base):,.0f}x",
    ]


async def test_previous_next_latency(project: tuple[Path, int], monkeypatch) -> None:
    """The walk twice: as in the first seconds of the app, then with the start's heap frozen as the app does
    :data:`~benchwright.tui.app.FREEZE_AFTER_S` after its start (the figure a user sees after that; the first walk
    is printed as BEFORE FREEZE)."""
    from benchwright.tui import app as app_module

    monkeypatch.setattr(app_module, "FREEZE_AFTER_S", 0)  # frozen by the test, between the two walks
    db_path, depth = project
    store = Store.open(db_path)
    try:
        start = store.first_undecided(ANNOTATOR)
        base, middle = _store_walk(store, start, KEYS)
        _, expected_end = _store_walk(store, middle, KEYS)
        t0 = time.perf_counter()
        for _ in range(20):
            store.progress(ANNOTATOR)
        progress_s = (time.perf_counter() - t0) / 20

        meter = _StoreMeter(store)
        app = BenchwrightApp(store, ANNOTATOR)
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: _review_shows(app, start), "the review screen")
            await _settle(pilot, app)
            unfrozen = await _navigate(app, pilot, meter, KEYS)
            assert _review_shows(app, middle), "the app walked to another pair than the store"
            app._freeze_heap()
            nav = await _navigate(app, pilot, meter, KEYS)
            assert _review_shows(app, expected_end), "the app walked to another pair than the store"

            # Cross-check with the Pilot helpers (they include idle waits of >= 20 ms each).
            floor: list[float] = []
            for _ in range(10):
                t0 = time.perf_counter()
                await pilot.press("f12")  # bound to nothing here
                await pilot.pause()
                floor.append(time.perf_counter() - t0)
            piloted: list[float] = []
            for key in ["right"] * 15 + ["left"] * 15:
                t0 = time.perf_counter()
                await pilot.press(key)
                await pilot.pause()
                piloted.append(time.perf_counter() - t0)
            assert _review_shows(app, expected_end)

            # Queue: escape from the review screen (the queue reloads around the pair shown last).
            await pilot.pause()
            meter.reset()
            queue_s = await _time_escape_to_queue(app, pilot, expected_end)
            queue_sql = meter.total
    finally:
        store.close()

    p95 = percentile(nav["wall"], 0.95)
    report(
        f"previous/next on {N_PAIRS:,} pairs, {depth:,} decided: 200 x right, 100 x left",
        [
            *_nav_lines(nav, base, len(KEYS)),
            f"BEFORE FREEZE (the same walk just before, the heap of the start not frozen): {summary_ms(unfrozen['wall'])}",
            f"  full GC collections then: {unfrozen['gc_count']}, {unfrozen['gc_s'] * 1e3:.0f} ms in all",
            f"Store.progress alone    : {progress_s * 1e3:.2f} ms per call (the app counts it once per change of"
            " the project, in a thread on a large one)",
            f"pilot.press + pilot.pause: {summary_ms(piloted)}",
            f"  harness floor (unbound key): {summary_ms(floor)}",
            f"escape -> queue shown at the pair: {queue_s * 1e3:.1f} ms (store calls {queue_sql * 1e3:.1f} ms)",
        ],
    )
    assert p95 < PRESS_SAFETY_P95_S, f"p95 per press {p95 * 1e3:.0f} ms"


class _RichMarkdown(RichMarkdown):
    """Rich's Markdown renderable parsed with HTML off, like LiteralMarkdown's parser."""

    def __init__(self, markup: str) -> None:
        super().__init__(markup, hyperlinks=False)
        self.parsed = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table").parse(markup)


class _StaticMarkdown(Static):
    """What-if stand-in for LiteralMarkdown: one Static holding a Rich Markdown renderable, so showing
    a pair updates one widget instead of removing and mounting a widget per Markdown block."""

    def __init__(self, markdown: str | None = None, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.bench_source = ""

    def show(self, markdown: str | None):
        self.bench_source = markdown or ""
        self.update(_RichMarkdown(printable(markdown or "")))

        async def _done() -> None:
            return None

        return _done()


async def test_previous_next_what_if(project: tuple[Path, int], monkeypatch) -> None:
    """WHAT-IF, not the app as shipped: the same navigation with the two fixes this benchmark suggests,
    patched in from the test (no source file changes):

    1. the question and answer shown by one Static each holding a Rich Markdown renderable, instead of
       Textual's Markdown widget (which removes and mounts one widget per block on every update);
    2. Store.progress memoized (as a cache invalidated by decisions would be; this walk decides nothing).
    """
    from benchwright.tui.screens import review as review_mod

    monkeypatch.setattr(review_mod, "LiteralMarkdown", _StaticMarkdown)
    db_path, depth = project
    store = Store.open(db_path)
    try:
        start = store.first_undecided(ANNOTATOR)
        base, expected_end = _store_walk(store, start, KEYS)
        real_progress, memo = store.progress, {}

        def progress(annotator: str):
            if annotator not in memo:
                memo[annotator] = real_progress(annotator)
            return memo[annotator]

        store.progress = progress
        meter = _StoreMeter(store)
        app = BenchwrightApp(store, ANNOTATOR)
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: _review_shows(app, start), "the review screen")
            await _settle(pilot, app)
            nav = await _navigate(app, pilot, meter, KEYS)
            assert _review_shows(app, expected_end)
    finally:
        store.close()
    report(
        f"WHAT-IF (single-widget Markdown + cached progress) previous/next, {depth:,} decided",
        _nav_lines(nav, base, len(KEYS)),
    )


# --------------------------------------------------------------------- queue
def _queue_ready(app: App, pair_id: str) -> bool:
    screen = app.screen
    if not isinstance(screen, QueueScreen) or not screen.rows:
        return False
    table = screen.query_one(DataTable)
    return table.row_count > 0 and 0 <= table.cursor_row < len(screen.rows) and screen.rows[table.cursor_row].id == pair_id


async def _time_escape_to_queue(app: App, pilot, pair_id: str) -> float:
    t0 = time.perf_counter()
    app.post_message(events.Key("escape", None))
    await _until(lambda: _queue_ready(app, pair_id), "the queue with its cursor on the pair")
    await _settle(pilot, app)
    return time.perf_counter() - t0


async def test_open_queue(project: tuple[Path, int]) -> None:
    """Escape from the review screen to the queue, three times at the first undecided pair and, on the
    shallow project, three times at pair #1000."""
    from benchwright.db import QueueFilter
    from benchwright.tui.screens import queue as queue_mod

    db_path, depth = project
    store = Store.open(db_path)
    try:
        start = store.first_undecided(ANNOTATOR)
        targets = {"first undecided": start}
        if depth == 0:
            row = store.db.conn.execute(
                "SELECT id FROM qa_pairs WHERE ordinal = ?", [QUEUE_DEEP_TARGET]
            ).fetchone()
            targets[f"pair #{QUEUE_DEEP_TARGET}"] = row[0]

        # Baseline: the store calls of QueueScreen.reload(keep=pair) alone.
        base: dict[str, float] = {}
        for name, pid in targets.items():
            t0 = time.perf_counter()
            ordinal = store.ordinal_of(pid)
            after = max(0, ordinal - queue_mod.MAX_PRELOAD - 1)  # where QueueScreen.reload starts its table
            while True:
                page = store.queue_page(ANNOTATOR, QueueFilter(), after_ordinal=after, limit=queue_mod.PAGE)
                after = page[-1].ordinal
                if after >= ordinal or len(page) < queue_mod.PAGE:
                    break
            store.progress(ANNOTATOR)
            store.count_filtered(ANNOTATOR, QueueFilter())
            base[name] = time.perf_counter() - t0

        results: dict[str, list[float]] = {}
        sql: dict[str, str] = {}
        meter = _StoreMeter(store)
        app = BenchwrightApp(store, ANNOTATOR)
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: _review_shows(app, start), "the review screen")
            await _settle(pilot, app)
            for name, pid in targets.items():
                results[name] = []
                for _ in range(3):
                    if not _review_shows(app, pid):
                        await app.screen.show_pair(pid)  # not timed: put the review screen on the target
                    await pilot.pause()  # not timed: let the app go idle first
                    meter.reset()
                    results[name].append(await _time_escape_to_queue(app, pilot, pid))
                    sql[name] = f"{meter.total * 1e3:.1f} ms ({meter.top(4)})"
                    app.post_message(events.Key("enter", None))  # back to the review screen, not timed
                    await _until(lambda pid=pid: _review_shows(app, pid), "the review screen again")
                    await _settle(pilot, app)
    finally:
        store.close()

    lines = []
    for name, times in results.items():
        med = statistics.median(times)
        lines.append(
            f"at {name:16s}: median {med * 1e3:7.1f} ms   runs {', '.join(f'{t * 1e3:.0f}' for t in times)} ms"
            f"   baseline store calls {base[name] * 1e3:.1f} ms -> ratio {med / base[name]:.1f}x"
        )
        lines.append(f"    store calls the app made (last run): {sql[name]}")
    lines.append(f"goal < {QUEUE_GOAL_S * 1e3:.0f} ms: {goal(max(statistics.median(t) for t in results.values()) < QUEUE_GOAL_S)}")
    report(f"escape -> queue on {N_PAIRS:,} pairs, {depth:,} decided", lines)
    assert max(max(t) for t in results.values()) < QUEUE_SAFETY_S


# ------------------------------------------------------------- held accept key
HELD = 200
DECISION_SAFETY_S = 2.0
"""A generous net per decision (mean): the figure itself is printed, not asserted."""


async def _time_accepts(db_path: Path, *, held: bool) -> tuple[float, int, float]:
    """(seconds from the first of :data:`HELD` accept keys to the screen drawing the pair after the last, number
    of pairs decided, store seconds). ``held``: every key event queued at once, as a held key (or tmux
    send-keys) delivers them; else ``Pilot.press`` with its idle wait after each key."""
    store = Store.open(db_path)
    meter = _StoreMeter(store)
    try:
        start = store.first_undecided(ANNOTATOR)
        app = BenchwrightApp(store, ANNOTATOR)
        async with app.run_test(size=SIZE) as pilot:
            await _until(lambda: _review_shows(app, start), "the review screen")
            await _settle(pilot, app)
            screen = app.screen
            first = screen.view.ordinal
            meter.reset()
            t0 = time.perf_counter()
            if held:
                for _ in range(HELD):
                    app.post_message(events.Key("a", "a"))
            else:
                await pilot.press(*["a"] * HELD)
            await _until(lambda: screen.view.ordinal == first + HELD and not screen._display_stale
                         and _review_shows(app, screen.pair_id), "the pair after the last accept drawn")
            await _settle(pilot, app)
            wall = time.perf_counter() - t0
            sql = meter.total
        decided = store.progress(ANNOTATOR).mine
        return wall, decided, sql
    finally:
        store.close()


@pytest.mark.parametrize("held", [True, False], ids=["held-key", "pilot-press"])
async def test_accept_presses_in_a_row(base_project: Path, perf_dir: Path, held: bool, monkeypatch) -> None:
    """200 ``a`` in a row from the first pair: time per decision (store write, next view, drawing), against the
    bare-app start of this file; the same run with every pair drawn (``REPAINT_S = 0``, as before coalescing)
    is printed as BEFORE."""
    import benchwright.tui.screens.review as review_module

    bare_s = statistics.median([await _time_bare_start() for _ in range(3)])
    runs = {}
    for label, repaint in (("after", review_module.REPAINT_S), ("BEFORE (every pair drawn)", 0.0)):
        path = copy_project(base_project, perf_dir / f"accepts-{held}-{repaint}.db")
        monkeypatch.setattr(review_module, "REPAINT_S", repaint)
        runs[label] = await _time_accepts(path, held=held)
        path.unlink()
    lines = []
    for label, (wall, decided, sql) in runs.items():
        assert decided == HELD, f"{label}: {decided} decisions stored of {HELD}"
        per = wall / HELD
        lines.append(f"{label:<26}: {wall:6.2f} s for {HELD} -> {per * 1e3:6.1f} ms per decision "
                     f"({1 / per:5.0f}/s; store {sql / HELD * 1e3:.1f} ms of it) -> ratio {per / bare_s:.2f}x "
                     "the bare app's start")
    lines.append(f"baseline bare Textual app start: median {bare_s * 1e3:.1f} ms")
    report(f"{HELD} x accept in a row on {N_PAIRS:,} pairs ({'held key: all queued' if held else 'Pilot.press'})",
           lines)
    assert runs["after"][0] / HELD < DECISION_SAFETY_S
