"""The evidence viewer: a cited file of the registered repository, highlighted, opened at the cited line.

Nothing slow runs on the UI thread. A thread worker reads the file, prepares the lines around the cited
line first (cut to ``ViewerLimits.max_line_chars``, control characters made visible) and posts them, so
they are painted at once, then the rest of the file; it then highlights the cited region. Further
regions are highlighted in blocks as they scroll into view (never the whole file at once). Workers post
messages and the screen's handlers own every piece of state; no widget is touched from a thread.
``escape`` closes the viewer at any time (its workers are cancelled).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Footer, Header, Static
from textual.worker import get_current_worker

from benchwright.core.errors import BenchwrightError
from benchwright.core.evidence import (
    CUT_MARK,
    Evidence,
    ViewerLimits,
    choose_lexer,
    cited_window,
    display_lines,
    file_lines,
    load_viewer_limits,
)
from benchwright.core.evidence_drift import CitationChange, diff_excerpt
from benchwright.core.models import Repository
from benchwright.core.repository import read_repository_file, resolve_in_repository
from benchwright.core.text import printable

from ..widgets import literal

CONTEXT_LINES = 3
"""Lines shown above the cited line when the file opens."""
BLOCK_LINES = 100
"""Lines highlighted together when they scroll into view."""
LEAD_IN_LINES = 50
"""Lines before a block that are lexed with it (and thrown away), so a block starting inside a
multi-line string or comment is usually coloured right."""
YIELD_TOKENS = 200
"""The highlighting thread gives the interpreter lock to the UI thread after this many tokens."""
FIRST_PAINT_WAIT_S = 1.0
"""How long the loading thread waits for the cited window to be painted before preparing the rest."""
CHANGE_LINES = 12
"""Lines of a citation's diff (``repos move``) shown above the file; ``repos evidence NAME --pair PAIR`` prints
them all."""
THEME = "ansi_dark"
_CITED_BG = Style(bgcolor="grey23")
_GUTTER = Style(dim=True)
_GUTTER_CITED = Style(bold=True, color="yellow")
_CUT = Style(italic=True, color="magenta")


@dataclass
class _Loaded:
    """Lines as shown, {index in the file: characters cut}, the widest line in cells."""

    lines: list[str]
    cut: dict[int, int]
    width: int


def _prepare(lines: list[str], max_chars: int, offset: int = 0) -> _Loaded:
    """The lines as shown (:func:`benchwright.core.evidence.display_lines`), their cuts keyed by index in
    the file (``offset`` + index), and the widest in cells, cut marks included."""
    from rich.cells import cell_len

    shown, cut = display_lines(lines, max_chars)
    width = 0
    for i, line in enumerate(shown):
        w = len(line) if line.isascii() else cell_len(line)
        if i in cut:
            w += len(CUT_MARK.format(n=cut[i]))
        width = max(width, w)
    return _Loaded(shown, {offset + i: n for i, n in cut.items()}, width)


def token_runs(lexer, lines: list[str], first: int, stop: int, styles: dict, cancelled=lambda: False):
    """Highlight ``lines[first:stop]``: one flat tuple per line ``(length, Style, length, Style, ...)``
    covering the line, or None when ``cancelled()`` became true. Up to :data:`LEAD_IN_LINES` lines before
    ``first`` are lexed too, for context, and dropped."""
    theme = Syntax.get_theme(THEME)
    start = max(0, first - LEAD_IN_LINES)
    text = "\n".join(lines[start:stop])
    out: list[tuple] = []
    current: list = []
    if text.startswith("\ufeff"):  # pygments drops a leading byte-order mark; keep the offsets right
        text, current = text[1:], [1, None]
    for k, (ttype, value) in enumerate(lexer.get_tokens(text)):
        if k % YIELD_TOKENS == YIELD_TOKENS - 1:
            if cancelled():
                return None
            time.sleep(0)  # let the UI thread take the interpreter: keys and paints first
        style = styles.get(ttype)
        if style is None:
            style = styles[ttype] = theme.get_style_for_token(ttype)
        parts = value.split("\n")
        for j, part in enumerate(parts):
            if j:
                out.append(tuple(current))
                current = []
            if part:
                if current and current[-1] is style:
                    current[-2] += len(part)
                else:
                    current += [len(part), style]
    out.append(tuple(current))
    runs = out[first - start : stop - start]
    runs += [()] * (stop - first - len(runs))
    return runs


class CodeView(ScrollView, can_focus=True):
    """The lines of one file with line numbers; only the lines on screen are rendered (Textual's Line
    API), each from its text and, once highlighted, its token runs."""

    DEFAULT_CSS = """
    CodeView { background: $surface; }
    """

    class Viewport(Message):
        """The lines ``[first, stop)`` are on screen (sent when the view scrolls or is resized)."""

        def __init__(self, first: int, stop: int) -> None:
            super().__init__()
            self.first, self.stop = first, stop

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines: list[str] = []
        self.cut: dict[int, int] = {}
        self.runs: list[tuple | None] = []
        self.cited = range(0)
        self._digits = 1
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)

    def set_lines(self, lines: list[str], cut: dict[int, int], width: int, cited: range) -> None:
        """Show ``lines`` (already prepared), the ``cited`` indexes marked; highlighting is kept for lines
        that already had it when the number of lines is unchanged."""
        if len(lines) != len(self.runs):
            self.runs = [None] * len(lines)
        self.lines, self.cut, self.cited = lines, cut, cited
        self._digits = len(str(len(lines)))
        self.virtual_size = Size(self._digits + 3 + width, len(lines))
        self._cache.clear()
        self.refresh()

    def set_runs(self, first: int, runs: list[tuple]) -> None:
        """Highlight lines ``first`` onwards with ``runs`` (see :func:`token_runs`)."""
        stop = min(len(self.runs), first + len(runs))
        self.runs[first:stop] = runs[: stop - first]
        self._cache.clear()
        self.refresh()

    def visible_range(self) -> tuple[int, int]:
        """The line indexes ``[first, stop)`` on screen."""
        first = int(self.scroll_y)
        return first, min(len(self.lines), first + max(1, self.size.height))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Viewport(*self.visible_range()))

    def on_resize(self) -> None:
        self.post_message(self.Viewport(*self.visible_range()))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        key = (index, scroll_x, width)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        body = self.lines[index]
        cited = index in self.cited
        extra = _CITED_BG if cited else None
        runs = self.runs[index]
        segments: list[Segment] = []
        if runs:
            pos = 0
            for k in range(0, len(runs), 2):
                n, style = runs[k], runs[k + 1]
                segments.append(Segment(body[pos : pos + n], style + extra if extra and style else style or extra))
                pos += n
            if pos < len(body):
                segments.append(Segment(body[pos:], extra))
        else:
            segments.append(Segment(body, extra))
        if index in self.cut:
            segments.append(Segment(CUT_MARK.format(n=self.cut[index]), _CUT + extra if extra else _CUT))
        gutter = [
            Segment(f"{index + 1:>{self._digits}} ", _GUTTER_CITED if cited else _GUTTER),
            Segment("❱ " if cited else "  ", _GUTTER_CITED),
        ]
        room = max(0, width - self._digits - 3)
        code = Strip(segments).crop(scroll_x, scroll_x + room).extend_cell_length(room, extra)
        strip = Strip([*gutter, *code]).apply_style(base).crop(0, width)
        self._cache.set(key, strip)
        return strip


class EvidenceScreen(Screen):
    """Shows ``evidence.path`` from ``repository`` with syntax highlighting (pygments, the lexer chosen by
    :func:`benchwright.core.evidence.choose_lexer`), the cited lines marked and scrolled into view.
    Unreadable or unsafe paths show the reason instead of the file. ``limits`` default to the user
    configuration's ``[evidence]`` table.

    ``phase`` is ``loading`` until the first lines are shown, ``shown`` while the rest is prepared or the
    cited region highlighted, then ``done`` (or ``error``); ``text`` is the file's text once read.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="evidence.back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("question_mark", "app.help", "Help", key_display="?", id="evidence.help"),
    ]

    class Lines(Message):
        """Prepared lines ``first`` onwards of a file of ``total`` lines (all of them when ``complete``)."""

        def __init__(self, first: int, loaded: _Loaded, total: int, complete: bool, text: str | None) -> None:
            super().__init__()
            self.first, self.loaded, self.total, self.complete, self.text = first, loaded, total, complete, text

    class Highlighted(Message):
        """Token runs of the lines ``first`` onwards (``blocks``: the highlight blocks they complete)."""

        def __init__(self, first: int, runs: list[tuple], blocks: tuple[int, ...]) -> None:
            super().__init__()
            self.first, self.runs, self.blocks = first, runs, blocks

    class Status(Message):
        """What the viewer says under the title (loading, highlighting off and why, a problem)."""

        def __init__(self, text: str, *, lexer=None, error: str | None = None, done: bool = False) -> None:
            super().__init__()
            self.text, self.lexer, self.error, self.done = text, lexer, error, done

    def __init__(self, repository: Repository, evidence: Evidence, *, limits: ViewerLimits | None = None,
                 change: CitationChange | None = None) -> None:
        super().__init__()
        self.repository = repository
        self.evidence = evidence
        self.change = change
        """What became of the citation at the repository's last re-pin (``repos move``), shown above the file."""
        self.limits = limits
        self.text: str | None = None
        self.error: str | None = None
        self.phase = "loading"
        self.lexer = None
        self._lines: list[str] = []
        self._complete = False
        self._done_blocks: set[int] = set()
        self._styles: dict = {}
        self._scrolled = False
        self._follow: int | None = None  # the scroll target kept until the user scrolls
        self._auto_y: int | None = None  # where the viewer last scrolled to by itself
        self._painted = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="evidence-title")
        yield Static(id="evidence-note")
        yield Static(id="evidence-change")
        yield CodeView(id="evidence-scroll")
        yield Footer()

    def _title_text(self, line_count: int | None = None) -> Text:
        """The title line; ``line_count`` when the cited lines start past the end of the file."""
        ev = self.evidence
        title = Text()
        title.append_text(literal(f"{self.repository.pin}  ", style="bold"))
        title.append(printable(ev.path or ev.citation.path))
        if ev.citation.start:
            title.append(f"  cited lines {ev.citation.start}-{ev.citation.end}", style="italic")
        if ev.status == "ambiguous":
            title.append_text(literal(f"  ({len(ev.candidates)} files match '{ev.citation.path}'; showing the first)",
                                      style="yellow"))
        if line_count is not None:
            title.append(f"  (the file has only {line_count} lines)", style="bold red")
        return title

    def on_mount(self) -> None:
        self.query_one("#evidence-title", Static).update(self._title_text())
        self.query_one("#evidence-note", Static).update(Text("loading…", style="italic"))
        change_box = self.query_one("#evidence-change", Static)
        change_box.display = self.change is not None
        if self.change is not None:
            change_box.update(self._change_text(self.change))
        self._load()

    def _change_text(self, change: CitationChange) -> Text:
        """The citation's change at the last re-pin: one line, then its diff (literal text, at most
        :data:`CHANGE_LINES` lines, long lines cut)."""
        t = Text()
        t.append("changed at the last repos move: ", style="bold yellow")
        t.append_text(literal(change.describe(), style="bold"))
        shown, more = diff_excerpt(change.diff, max_lines=CHANGE_LINES)
        for line in shown:
            style = "red" if line.startswith("-") and not line.startswith("---") else \
                "green" if line.startswith("+") and not line.startswith("+++") else "dim"
            t.append("\n")
            t.append_text(literal(line, style=style))
        if more:
            t.append_text(literal(f"\n… {more:,} more diff lines (benchwright repos evidence {self.repository.name} "
                                  "--pair PAIR)", style="dim"))
        return t

    # ------------------------------------------------------------------------------------- the worker side
    @work(thread=True, exclusive=True, exit_on_error=False, group="evidence-load")
    def _load(self) -> None:
        """Read, prepare and post the lines (the cited window first), then highlight the cited region."""
        worker = get_current_worker()
        ev, repo = self.evidence, self.repository
        notes: list[str] = []
        limits = self.limits
        if limits is None:
            try:
                limits = load_viewer_limits()
            except BenchwrightError as e:
                limits = ViewerLimits()
                notes.append(f"{e}; using the defaults")
        try:
            if not ev.path and repo.local_path:
                raise BenchwrightError(f"{ev.citation.path} is not in the repository at {repo.pin}")
            if not repo.local_path or not ev.path:
                raise BenchwrightError("the repository has no local checkout here")
            text = read_repository_file(repo.local_path, ev.path, max_bytes=limits.max_file_bytes)
            size = resolve_in_repository(repo.local_path, ev.path).stat().st_size
        except (BenchwrightError, OSError) as e:
            message = str(e)
            if "larger than" in message:
                message += " (the viewer's limit is max_file_bytes in the [evidence] table of config.toml)"
            self.post_message(self.Status(message, error=message, done=True))
            return
        raw = file_lines(text)
        total = len(raw)
        first, stop = cited_window(ev.citation.start, ev.citation.end, total, limits.window_lines)
        window = _prepare(raw[first:stop], limits.max_line_chars, first)
        self.post_message(self.Lines(first, window, total, complete=False, text=None))
        self._painted.wait(FIRST_PAINT_WAIT_S)  # the cited window on screen before anything else competes
        if worker.is_cancelled:
            return
        loaded = _prepare(raw, limits.max_line_chars)
        self.post_message(self.Lines(0, loaded, total, complete=True, text=text))
        del raw
        if worker.is_cancelled:
            return
        alias = choose_lexer(ev.path, language=repo.language, text=text[:4096])
        if alias is None:
            notes.append("plain text (no highlighter for this file)")
            self.post_message(self.Status(" · ".join(notes), done=True))
            return
        if size > limits.highlight_max_bytes:
            notes.append(
                f"highlighting off: the file is {size:,} bytes, over the highlight_max_bytes limit of "
                f"{limits.highlight_max_bytes:,} ([evidence] table of config.toml)"
            )
            self.post_message(self.Status(" · ".join(notes), done=True))
            return
        from pygments.lexers import get_lexer_by_name

        lexer = get_lexer_by_name(alias, stripnl=False, stripall=False, ensurenl=False)
        notes.insert(0, f"highlighted as {lexer.name}")
        self.post_message(self.Status(" · ".join(notes), lexer=lexer))
        blocks = tuple(range(first // BLOCK_LINES, (max(first, stop - 1)) // BLOCK_LINES + 1))
        self._highlight_blocks(lexer, loaded.lines, blocks, worker)
        self.post_message(self.Status(" · ".join(notes), done=True))

    @work(thread=True, exclusive=True, exit_on_error=False, group="evidence-highlight")
    def _highlight(self, lexer, lines: list[str], blocks: tuple[int, ...]) -> None:
        """Highlight ``blocks`` (of :data:`BLOCK_LINES` lines) as they come into view."""
        self._highlight_blocks(lexer, lines, blocks, get_current_worker())

    def _highlight_blocks(self, lexer, lines: list[str], blocks: tuple[int, ...], worker) -> None:
        # runs of consecutive blocks are lexed together: fewer lead-ins, and context across them
        groups: list[list[int]] = []
        for b in blocks:
            if groups and groups[-1][-1] == b - 1:
                groups[-1].append(b)
            else:
                groups.append([b])
        for group in groups:
            if worker.is_cancelled:
                return
            first = group[0] * BLOCK_LINES
            stop = min(len(lines), (group[-1] + 1) * BLOCK_LINES)
            if first >= stop:
                continue
            runs = token_runs(lexer, lines, first, stop, self._styles, lambda: worker.is_cancelled)
            if runs is None:
                return
            self.post_message(self.Highlighted(first, runs, tuple(group)))

    # ------------------------------------------------------------------------------------- the UI side
    def on_evidence_screen_lines(self, message: Lines) -> None:
        view = self.query_one(CodeView)
        ev = self.evidence
        loaded = message.loaded
        if message.complete:
            lines = loaded.lines
            self.text = message.text
            self._lines = lines
            self._complete = True
        else:
            lines = [""] * message.total
            lines[message.first : message.first + len(loaded.lines)] = loaded.lines
        cited = range(0)
        start = ev.citation.start
        if start:
            end = min(ev.citation.end or start, message.total)
            cited = range(start - 1, end)
        view.set_lines(lines, loaded.cut, loaded.width, cited)
        if self.phase == "loading":
            self.phase = "shown"
            if start and start > message.total:
                self.query_one("#evidence-title", Static).update(self._title_text(message.total))
        if start and not self._scrolled:
            self._scrolled = True
            target = max(0, start - 1 - CONTEXT_LINES)
            view.scroll_to(y=target, animate=False, force=True)  # painted there the first time (force: before the
            # layout that gives the view its scroll bar, scrolling is not allowed yet)
            self._follow = target
        if self._follow is not None:
            # scrolled again after the layout: the view may not be laid out yet, and a long line (now or in a
            # later part) brings a horizontal scroll bar that would cover a cited last line
            self.call_after_refresh(self._keep_cited, self._follow)
        if not message.complete:
            self.call_after_refresh(self._painted_once)
        if message.complete:
            self._request_visible()

    def on_evidence_screen_highlighted(self, message: Highlighted) -> None:
        self._done_blocks |= set(message.blocks)
        self.query_one(CodeView).set_runs(message.first, message.runs)

    def on_evidence_screen_status(self, message: Status) -> None:
        note = Text(style="italic")
        if message.error:
            self.error = message.error
            self.phase = "error"
            note = Text("Cannot open: ", style="bold red")
            note.append(printable(message.error))
        else:
            note.append(printable(message.text))
        if message.lexer is not None:
            self.lexer = message.lexer
        if message.done and self.phase != "error":
            self.phase = "done"
        self.query_one("#evidence-note", Static).update(note)
        if message.done:
            self._request_visible()

    def on_code_view_viewport(self, message: CodeView.Viewport) -> None:
        self._request_visible(message.first, message.stop)

    def _request_visible(self, first: int | None = None, stop: int | None = None) -> None:
        """Highlight the blocks on screen and one screenful either side that are not highlighted yet
        (only once the first highlighting of the cited region is done)."""
        if self.lexer is None or not self._complete or self.phase != "done":
            return
        view = self.query_one(CodeView)
        if first is None or stop is None:
            first, stop = view.visible_range()
        margin = max(1, stop - first)
        lo = max(0, first - margin) // BLOCK_LINES
        hi = min(len(self._lines), stop + margin) // BLOCK_LINES
        wanted = tuple(b for b in range(lo, hi + 1) if b not in self._done_blocks and b * BLOCK_LINES < len(self._lines))
        if wanted:
            middle = (first + stop) // 2 // BLOCK_LINES
            self._highlight(self.lexer, self._lines, tuple(sorted(wanted, key=lambda b: abs(b - middle))))

    def _keep_cited(self, target: int) -> None:
        """Scroll to ``target`` again (after a layout), unless the user has scrolled since."""
        if self._follow != target:
            return
        view = self.query_one(CodeView)
        if self._auto_y is not None and round(view.scroll_y) != self._auto_y:
            self._follow = None  # the user moved: leave the view where it is
            return
        view.scroll_to(y=target, animate=False)
        self._auto_y = round(view.scroll_y)

    def on_unmount(self) -> None:
        self._painted.set()  # a loading thread waiting for the first paint stops waiting (it is cancelled)

    def _painted_once(self) -> None:
        self.call_after_refresh(self._painted.set)  # after the scroll to the cited line has been painted
