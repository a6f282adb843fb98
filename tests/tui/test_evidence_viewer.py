"""The evidence viewer on big and odd files: the cited line of a long file, keys while loading, long lines
cut and marked, highlighting off past its limit, the limits from the user configuration, the lexer."""

from __future__ import annotations

import threading
from pathlib import Path

from textual.app import App

from benchwright.core.evidence import Citation, Evidence, ViewerLimits
from benchwright.core.models import Repository
from benchwright.tui.screens import evidence as evidence_mod
from benchwright.tui.screens.evidence import BLOCK_LINES, CodeView, EvidenceScreen

SIZE = (120, 40)


class Host(App):
    """An empty app to push the viewer on."""


def screen_text(app: App) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def note(screen: EvidenceScreen) -> str:
    return str(screen.query_one("#evidence-note").render())


def viewer(root: Path, path: str, line: int | None = None, *, language: str | None = None,
           limits: ViewerLimits | None = None) -> EvidenceScreen:
    repo = Repository(name="r", version_label="1", local_path=str(root), language=language)
    return EvidenceScreen(repo, Evidence(Citation(path, line, line), "found", path), limits=limits or ViewerLimits())


async def loaded(app: App, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.workers.wait_for_complete()  # highlighting of what came into view
    await pilot.pause()


async def test_a_30000_line_file_opens_at_the_cited_line_highlighted(tmp_path):
    lines = [f"value_{i} = {i}  # line {i}" for i in range(1, 30_001)]
    lines[24_999] = "CITED = 'here'  # the cited line"
    (tmp_path / "big.py").write_text("\n".join(lines) + "\n")
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "big.py", 25_000)
        await app.push_screen(screen)
        await loaded(app, pilot)
        assert screen.phase == "done" and screen.error is None
        view = screen.query_one(CodeView)
        assert len(view.lines) == 30_000 and view.cited == range(24_999, 25_000)
        assert 24_990 <= view.scroll_y <= 24_999
        shown = screen_text(app)
        assert "25000 ❱ CITED = 'here'  # the cited line" in shown
        assert screen.lexer is not None and screen.lexer.name == "Python"
        assert view.runs[24_999]  # the cited line is highlighted ...
        far = [i for i, r in enumerate(view.runs) if r is None]
        assert 0 in far and 29_999 in far  # ... and the rest of the file only as it comes into view
        assert sum(r is not None for r in view.runs) < 2_000
        view.scroll_to(y=10, animate=False)
        await loaded(app, pilot)
        assert view.runs[10] and view.runs[10 + 30]
        assert "   11   value_11 = 11  # line 11" in screen_text(app)


async def test_escape_closes_the_viewer_while_the_file_is_still_loading(tmp_path, monkeypatch):
    (tmp_path / "slow.py").write_text("x = 1\n")
    release = threading.Event()
    real = evidence_mod.read_repository_file

    def slow_read(*args, **kwargs):
        release.wait(10)  # a slow disk: the worker is stuck here until the test lets it go
        return real(*args, **kwargs)

    monkeypatch.setattr(evidence_mod, "read_repository_file", slow_read)
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "slow.py", 1)
        await app.push_screen(screen)
        await pilot.pause()
        assert app.screen is screen and screen.phase == "loading" and "loading" in note(screen)
        await pilot.press("escape")
        assert app.screen is not screen  # answered at once, the read still pending
        assert not release.is_set()
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app.screen is not screen


async def test_a_long_line_is_shown_cut_with_a_marker(tmp_path):
    (tmp_path / "table.cpp").write_text("int a = 1;\n" + "int t[] = {" + "1," * 100_000 + "};\nint b = 2;\n")
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "table.cpp", 2, language="C++")
        await app.push_screen(screen)
        await loaded(app, pilot)
        view = screen.query_one(CodeView)
        assert len(view.lines[1]) == 2_000 and view.cut == {1: 200_013 - 2_000}
        view.scroll_to(x=view.virtual_size.width, animate=False)  # to the end of the longest line
        await pilot.pause()
        assert "[line cut: 198,013 more characters]" in screen_text(app)


async def test_highlighting_off_past_the_threshold_is_stated(tmp_path):
    (tmp_path / "gen.py").write_text("x = 1\n" * 1_000)
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "gen.py", 500, limits=ViewerLimits(highlight_max_bytes=1_000))
        await app.push_screen(screen)
        await loaded(app, pilot)
        assert screen.phase == "done" and screen.lexer is None
        assert all(r is None for r in screen.query_one(CodeView).runs)
        text = note(screen)
        assert "highlighting off" in text and "6,000 bytes" in text and "highlight_max_bytes" in text
        assert "config.toml" in text and "\n 500 ❱ x = 1" in screen_text(app)


async def test_limits_come_from_the_user_configuration(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text("[evidence]\nmax_line_chars = 10\n")
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(config))
    (tmp_path / "a.py").write_text("abcdefghijklmnopqrstuvwxyz = 1\n")
    repo = Repository(name="r", version_label="1", local_path=str(tmp_path))
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = EvidenceScreen(repo, Evidence(Citation("a.py", 1, 1), "found", "a.py"))
        await app.push_screen(screen)
        await loaded(app, pilot)
        assert "abcdefghij … [line cut: 20 more characters]" in screen_text(app)
        config.write_text("[evidence]\nmax_line_chars = 0\n")
        screen = EvidenceScreen(repo, Evidence(Citation("a.py", 1, 1), "found", "a.py"))
        await app.push_screen(screen)
        await loaded(app, pilot)
        assert "max_line_chars: must be a positive integer" in note(screen) and "using the defaults" in note(screen)
        assert "abcdefghijklmnopqrstuvwxyz = 1" in screen_text(app)


async def test_a_header_of_a_cpp_repository_is_highlighted_as_cpp(tmp_path):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "widget.h").write_text("class Widget { public: int size() const; };\n")
    (tmp_path / "run").write_text("#!/usr/bin/env python3\nprint('hi')\n")
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "include/widget.h", 1, language="C++")
        await app.push_screen(screen)
        await loaded(app, pilot)
        assert screen.lexer.name == "C++" and "highlighted as C++" in note(screen)
        screen = viewer(tmp_path, "run", 2, language="C++")
        await app.push_screen(screen)
        await loaded(app, pilot)
        assert screen.lexer.name == "Python"


async def test_blocks_are_highlighted_with_context_before_them(tmp_path):
    """A block starting inside a docstring opened a few lines above it is coloured as a string."""
    lines = [f"x_{i} = {i}" for i in range(1, 3 * BLOCK_LINES)]
    lines[BLOCK_LINES - 5] = '"""a docstring'
    lines[BLOCK_LINES + 5] = 'end of it"""'
    (tmp_path / "doc.py").write_text("\n".join(lines) + "\n")
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "doc.py", BLOCK_LINES + 2, limits=ViewerLimits(window_lines=1))
        await app.push_screen(screen)
        await loaded(app, pilot)
        view = screen.query_one(CodeView)
        string_style = view.runs[BLOCK_LINES - 5][1]
        assert view.runs[BLOCK_LINES + 2] == (len(view.lines[BLOCK_LINES + 2]), string_style)


async def test_a_byte_order_mark_keeps_the_colours_in_place(tmp_path):
    (tmp_path / "bom.py").write_text("\ufeffimport os\n", encoding="utf-8")
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        screen = viewer(tmp_path, "bom.py", 1)
        await app.push_screen(screen)
        await loaded(app, pilot)
        runs = screen.query_one(CodeView).runs[0]
        assert runs[0] == 1 and runs[2] == len("import")  # the mark, then the keyword


async def test_a_cited_last_line_is_not_hidden_under_the_horizontal_scroll_bar(tmp_path):
    """The cited line is the file's last and long: the horizontal scroll bar that appears with it (or
    with a long line loaded later) must not cover it."""
    lines = [f"int v{i} = {i};" for i in range(300)] + ['const char* s = "' + "b" * 5_000 + '";']
    (tmp_path / "lastlong.cpp").write_text("\n".join(lines) + "\n")
    lines = ['const char* s = "' + "b" * 5_000 + '";'] + [f"int v{i} = {i};" for i in range(1_000)]
    (tmp_path / "longfirst.cpp").write_text("\n".join(lines) + "\n")  # the long line outside the window
    for name, cited in (("lastlong.cpp", 301), ("longfirst.cpp", 1_001)):
        app = Host()
        async with app.run_test(size=SIZE) as pilot:
            screen = viewer(tmp_path, name, cited, language="C++")
            await app.push_screen(screen)
            await loaded(app, pilot)
            shown = screen_text(app)
            assert f"{cited} ❱ " in shown, name
