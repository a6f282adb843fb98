"""Evidence viewer benchmarks on three hostile cited files, generated in tmp (headless, 160x48).

- a 30,000-line Python file cited at line 25,000;
- a 2 MB JavaScript file on one line (minified), cited at line 1;
- a 5,000-line C++ file whose line 2,500 is 200 KB long, cited at line 2,501.

For each: **first paint** (from pushing ``EvidenceScreen`` until the screen, laid out and painted, shows
the cited line; goal < 1 s), **highlighted** (the cited region painted with colours), **loaded** (the viewer
has nothing left to do), **escape while loading** (``escape`` posted right after the push, until the
viewer is gone) and the **peak of Python allocations** (tracemalloc, a separate run, not timed).
Baseline, measured in the same run: pushing a plain screen holding a Static with the same 401 lines of
plain text around the cited line; every first paint is also given as a ratio to it.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
import tracemalloc
from pathlib import Path

import pytest
from perf_support import goal, report
from rich.text import Text
from textual import events
from textual.app import App
from textual.containers import ScrollableContainer
from textual.screen import Screen
from textual.widgets import Static

from benchwright.core.evidence import Citation, Evidence
from benchwright.core.models import Repository
from benchwright.tui.screens.evidence import EvidenceScreen

pytestmark = pytest.mark.perf

SIZE = (160, 48)
RUNS = int(os.environ.get("BENCHWRIGHT_PERF_RUNS", "3"))
FIRST_PAINT_GOAL_S = 1.0
FIRST_PAINT_SAFETY_S = 10.0
TIMEOUT_S = 300.0
MARK = "CITED_HERE"


# -------------------------------------------------------------------------------------------- the files
def python_30k(path: Path, cited: int) -> None:
    """30,000 lines of ordinary Python: classes, methods, docstrings, comments, strings."""
    rng = random.Random(7)
    lines: list[str] = ['"""A generated module of 30,000 lines."""', "", "import os", ""]
    k = 0
    while len(lines) < 30_000:
        k += 1
        lines += [
            f"class Handler{k}(object):",
            f'    """Handles case {k}: {" ".join(rng.choice(["request", "config", "route", "view"]) for _ in range(6))}."""',
            "",
            "    def __init__(self, value: int = 0) -> None:",
            f"        self.value = value + {k}  # the offset of case {k}",
            f"        self.name = 'handler-{k}'",
            "",
            "    def run(self, items: list[str]) -> dict[str, int]:",
            "        out = {}",
            "        for i, item in enumerate(items):",
            f"            if item.startswith('x{k % 10}') and i % 3 == 0:",
            "                out[item] = os.getpid() * i + self.value",
            "        return out",
            "",
        ]
    lines = lines[:30_000]
    lines[cited - 1] = f"VALUE = 1  # {MARK}"
    path.write_text("\n".join(lines) + "\n")


def js_one_line(path: Path, size: int = 1_999_000) -> None:
    """One line of minified JavaScript just under the viewer's 2 MB limit, the mark at its start."""
    head = f"/*{MARK}*/"
    unit = "var a{0}=function(b,c){{return b+c*{0}||'s{0}'}};"
    parts, n, k = [head], len(head), 0
    while n < size:
        s = unit.format(k)
        parts.append(s)
        n += len(s)
        k += 1
    path.write_text("".join(parts)[:size])


def cpp_long_line(path: Path, cited: int, long_at: int = 2_500) -> None:
    """5,000 lines of C++ with a 200 KB initializer on line ``long_at``."""
    lines = []
    for i in range(1, 5_001):
        if i == long_at:
            lines.append("static const int table[] = {" + ",".join(str(j % 997) for j in range(50_000)) + "};")
        elif i == cited:
            lines.append(f"int cited_value = 1;  // {MARK}")
        else:
            lines.append(f"int f{i}(int x) {{ return x * {i} + 1; }}  // line {i}")
    path.write_text("\n".join(lines) + "\n")


CASES = {
    "python 30,000 lines": ("big.py", 25_000, "Python"),
    "js 2 MB one line": ("bundle.min.js", 1, "JavaScript"),
    "c++ 5,000 lines, 200 KB line": ("table.cpp", 2_501, "C++"),
}


@pytest.fixture(scope="module")
def repo_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("evidence-perf")
    python_30k(root / "big.py", 25_000)
    js_one_line(root / "bundle.min.js")
    cpp_long_line(root / "table.cpp", 2_501)
    return root


# ------------------------------------------------------------------------------------------- the harness
class _Host(App):
    """An empty app to push the viewer on."""


class _PlainScreen(Screen):
    """Baseline: a plain screen with a Static of ``text`` in a scrollable container."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.body = text

    def compose(self):
        with ScrollableContainer():
            yield Static(Text(self.body))


def _screen_text(app: App) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _coloured(app: App) -> bool:
    """True when the painted cited line has code in two colours or more (the gutter's number and marker,
    coloured before any highlighting, do not count)."""
    for strip in app.screen._compositor.render_strips():
        if MARK in strip.text:
            colours = {
                seg.style.color for seg in strip
                if seg.style and seg.style.color and seg.text.strip() and not seg.text.strip().isdigit()
                and "❱" not in seg.text
            }
            return len(colours) >= 2
    return False


async def _settle(pilot, app: App) -> None:
    await pilot._wait_for_screen(timeout=TIMEOUT_S)
    app.screen._on_timer_update()


async def _until(pilot, app: App, predicate, what: str, timeout: float = TIMEOUT_S) -> float:
    """Seconds until ``predicate()`` holds after a settle (the time taken before the check)."""
    deadline = time.perf_counter() + timeout
    while True:
        await _settle(pilot, app)
        now = time.perf_counter()
        if predicate():
            return now
        if now > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.01)  # an idle UI between polls, as in use (a busy loop would starve the workers)


def _evidence(repo_dir: Path, name: str) -> tuple[Repository, Evidence]:
    path, cited, language = CASES[name]
    repo = Repository(name="perf", version_label="1", local_path=str(repo_dir), language=language)
    return repo, Evidence(Citation(path, cited, cited), "found", path)


def _loaded(screen) -> bool:
    phase = getattr(screen, "phase", None)
    return phase is None or phase in ("done", "error")  # None: a viewer that loads in on_mount


async def _open(repo_dir: Path, name: str) -> dict:
    repo, ev = _evidence(repo_dir, name)
    app = _Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = EvidenceScreen(repo, ev)
        t0 = time.perf_counter()
        app.push_screen(screen)
        painted = await _until(pilot, app, lambda: app.screen is screen and MARK in _screen_text(app), "first paint")
        coloured = await _until(pilot, app, lambda: _coloured(app), "the cited line highlighted")
        loaded = await _until(pilot, app, lambda: _loaded(screen), "loaded")
        assert not screen.error, screen.error
    return {"paint": painted - t0, "colour": coloured - t0, "loaded": loaded - t0}


async def _escape_while_loading(repo_dir: Path, name: str) -> tuple[float, float, str]:
    """(push to gone, escape to gone, the viewer's phase when escape was pressed)."""
    repo, ev = _evidence(repo_dir, name)
    app = _Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = EvidenceScreen(repo, ev)
        t0 = time.perf_counter()
        await app.push_screen(screen)
        phase = getattr(screen, "phase", "-")
        t1 = time.perf_counter()
        app.post_message(events.Key("escape", None))
        gone = await _until(pilot, app, lambda: app.screen is not screen, "escape to close the viewer")
    return gone - t0, gone - t1, phase


async def _baseline(repo_dir: Path, name: str) -> float:
    path, cited, _ = CASES[name]
    lines = (repo_dir / path).read_text().split("\n")
    window = "\n".join(line[:2000] for line in lines[max(0, cited - 201) : cited + 200])
    app = _Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = _PlainScreen(window)
        t0 = time.perf_counter()
        app.push_screen(screen)
        painted = await _until(pilot, app, lambda: app.screen is screen and bool(_screen_text(app).strip()), "baseline")
    return painted - t0


async def _peak_memory(repo_dir: Path, name: str) -> tuple[float, float]:
    """(MB allocated at the peak, MB still allocated when loaded), Python allocations while the viewer opens."""
    repo, ev = _evidence(repo_dir, name)
    app = _Host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = EvidenceScreen(repo, ev)
        tracemalloc.start()
        try:
            app.push_screen(screen)
            await _until(pilot, app, lambda: app.screen is screen and MARK in _screen_text(app), "first paint")
            await _until(pilot, app, lambda: _loaded(screen), "loaded")
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    return peak / 1e6, current / 1e6


@pytest.mark.parametrize("name", list(CASES))
async def test_evidence_first_paint(repo_dir: Path, name: str) -> None:
    size = (repo_dir / CASES[name][0]).stat().st_size
    runs = [await _open(repo_dir, name) for _ in range(RUNS)]
    base = statistics.median([await _baseline(repo_dir, name) for _ in range(RUNS)])
    escapes = [await _escape_while_loading(repo_dir, name) for _ in range(RUNS)]
    esc = statistics.median(e[0] for e in escapes)
    esc_key = statistics.median(e[1] for e in escapes)
    peak, kept = await _peak_memory(repo_dir, name)
    paints = [r["paint"] for r in runs]
    paint = statistics.median(paints)
    colour = statistics.median(r["colour"] for r in runs)
    loaded = statistics.median(r["loaded"] for r in runs)
    report(
        f"evidence viewer: {name} ({size / 1e6:.2f} MB)",
        [
            f"first paint : median {paint * 1e3:8.1f} ms   runs {', '.join(f'{p * 1e3:.0f}' for p in paints)} ms"
            f"   (goal < {FIRST_PAINT_GOAL_S * 1e3:.0f} ms: {goal(paint < FIRST_PAINT_GOAL_S)})",
            f"highlighted : median {colour * 1e3:8.1f} ms",
            f"loaded      : median {loaded * 1e3:8.1f} ms",
            f"escape while loading: median {esc_key * 1e3:8.1f} ms from the key, {esc * 1e3:.1f} ms from the push"
            f" (phase when pressed: {', '.join(e[2] for e in escapes)})",
            f"baseline plain 401-line Static screen: median {base * 1e3:.1f} ms -> ratio {paint / base:.1f}x",
            f"Python allocations: peak {peak:.0f} MB, kept when loaded {kept:.0f} MB (file {size / 1e6:.1f} MB)",
        ],
    )
    assert paint < FIRST_PAINT_SAFETY_S
