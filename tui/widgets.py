"""Small widgets and helpers shared by the screens: literal text from data, the Markdown viewer.

The literal-text rule (docs/architecture.md): text that is not a constant of our own (data, LLM output,
exception messages, names) reaches the screen only through :func:`literal` (labels, option lists, select
prompts, table cells, dialogs), :func:`literal_options` (``Select``), :func:`notify` (toasts),
:func:`plain` (titles and sub-titles) or :class:`LiteralMarkdown`. None of them parses Rich or Textual
markup, and all make control characters visible, so ``[/]`` cannot crash the app, ``[@click=app.quit]``
cannot run an action, ``[link=...]`` cannot make a link and ANSI or OSC 8 escapes cannot reach the terminal.
``tests/tui/test_literal_text.py`` checks the screens' source for markup sinks fed anything else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

from markdown_it import MarkdownIt
from rich.highlighter import Highlighter
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.binding import Binding
from textual.dom import DOMNode
from textual.notifications import SeverityLevel
from textual.widgets import Input, Static, TextArea

from benchwright.core.errors import BenchwrightError, Remedy
from benchwright.core.text import printable

V = TypeVar("V")


def literal(text: object, style: str = "") -> Text:
    """A Rich ``Text`` of ``text`` shown literally: no markup parsed, control characters made visible.

    ``text`` is usually a ``str``; ``None`` gives an empty text, anything else its ``str()`` (numbers,
    exceptions, paths).
    """
    return Text(printable("" if text is None else str(text)), style=style)


def plain(text: object) -> str:
    """``text`` as a ``str`` for places that never parse markup but pass control characters on (screen
    titles and sub-titles, shown by the ``Header`` as plain content): control characters made visible."""
    return printable("" if text is None else str(text))


OPTION_PROMPT_CHARS = 120
"""A ``Select`` prompt longer than this is cut (with ``…``) so one long value cannot fill the drop-down."""


def literal_options(values: Iterable[str] | Iterable[tuple[str, V]]) -> list[tuple[Text, V]]:
    """Options for a ``Select`` whose prompts are shown literally (a ``str`` prompt is parsed as markup,
    both in the drop-down and in the closed control). ``values``: strings (prompt and value alike) or
    ``(prompt, value)`` pairs. Prompts are cut at :data:`OPTION_PROMPT_CHARS` characters (marked ``…``); the
    value is kept whole."""
    out: list[tuple[Text, V]] = []
    for v in values:
        prompt, value = v if isinstance(v, tuple) else (v, v)
        text = prompt
        if isinstance(text, str) and len(text) > OPTION_PROMPT_CHARS:
            text = text[: OPTION_PROMPT_CHARS - 1] + "…"
        out.append((literal(text), value))
    return out


def notify(target: DOMNode, message: object, *, title: object = "", severity: SeverityLevel = "information",
           timeout: float | None = None) -> None:
    """Show a toast with ``message`` and ``title`` literally (markup off, control characters made visible).

    ``target``: the app or any widget or screen of it. ``message`` is usually a ``str`` or an exception
    (its ``str()`` is shown). Thread-safe like ``App.notify``. Use this instead of ``notify()`` on a
    widget, whose ``markup=True`` default lets data such as ``[@click=app.quit]`` act.
    """
    target.app.notify(plain(message), title=plain(title), severity=severity, timeout=timeout, markup=False)


_REMEDIES = {
    Remedy.GIVE_MODEL: "\n\nthen run the step again.",
    Remedy.GIVE_REASON: "",  # the reason field is on the screen
    Remedy.SEE_PREFLIGHT: " (the release screen lists every pair left out, with its reason)",
    Remedy.GIVE_PREVIOUS: "",
}


def error_text(error: Exception) -> str:
    """An error as the app says it: its message, then what to do in the app's words
    (:class:`benchwright.core.errors.Remedy`; the command line words the same remedy with its options)."""
    remedy = getattr(error, "remedy", None) if isinstance(error, BenchwrightError) else None
    return str(error) + (_REMEDIES.get(remedy, "") if remedy else "")


def literal_parser() -> MarkdownIt:
    """The Markdown parser for text from data.

    HTML off: tags in data (``<module>``, ``<b>``) are shown as typed, never swallowed as HTML. Emphasis and
    strikethrough off: ``__getattr__`` and ``**kwargs`` in code questions read exactly as written. Structure
    (paragraphs, lists, headings, tables, code blocks and spans) is still rendered.
    """
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable(["emphasis"])


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _one_picture(m: re.Match) -> str:
    code = ord(m.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def control_pictures(text: str) -> str:
    """``text`` with each control character (but newline and tab) replaced by ONE visible character (C0 by
    its control picture, ``ESC`` as ``␛``; DEL as ``␡``; C1 as ``�``), so positions stay where they were. For
    editors, which must keep the value as it is but never send an escape to the terminal."""
    return _CONTROL.sub(_one_picture, text)


class ControlPictures(Highlighter):
    """A Rich highlighter that shows control characters as :func:`control_pictures` (display only)."""

    def highlight(self, text: Text) -> None:
        shown = control_pictures(text.plain)
        if shown != text.plain:
            text.plain = shown


class LiteralInput(Input):
    """An ``Input`` for text from data: the value is kept exactly, control characters are shown as
    :func:`control_pictures` (an ``Input`` never parses markup)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("highlighter", ControlPictures())
        super().__init__(*args, **kwargs)


class LiteralTextArea(TextArea):
    """A ``TextArea`` for text from data: the text is kept exactly, control characters are shown as
    :func:`control_pictures` (a ``TextArea`` never parses markup)."""

    def get_line(self, line_index: int) -> Text:
        # from the document's own line: a Rich ``Text`` drops BEL, BS, VT, FF and CR, which would hide them
        # and put the cursor one cell off per dropped character
        return Text(control_pictures(self.document.get_line(line_index)), end="", no_wrap=True)


_LITERAL_PARSER = literal_parser()
"""One parser for every :class:`LiteralMarkdownRenderable` (building a ``MarkdownIt`` costs more than parsing a
1.5 kB answer; ``parse`` keeps no state between calls)."""

_RENDER_CACHE_WIDTHS = 4
"""Widths whose rendering one :class:`LiteralMarkdownRenderable` keeps (a screen asks for one or two)."""


class LiteralMarkdownRenderable(RichMarkdown):
    """Rich's Markdown renderable parsed with :func:`literal_parser` (Rich's own parser has emphasis on and
    drops inline HTML).

    The rendering (Rich segments) is kept per console and set of options: Textual renders a widget's renderable
    once to measure its height and again to paint it, and Markdown is the costly part of both (the review
    screen's previous/next). The keyword arguments are ``rich.markdown.Markdown``'s.
    """

    def __init__(self, markup: str, *, code_theme: str = "monokai", justify=None, style="none",
                 hyperlinks: bool = True, inline_code_lexer: str | None = None,
                 inline_code_theme: str | None = None) -> None:
        # Markdown.__init__'s attributes, set here: it would build (and run) a parser of its own first
        self.markup = markup
        self.parsed = _LITERAL_PARSER.parse(markup)
        self.code_theme = code_theme
        self.justify = justify
        self.style = style
        self.hyperlinks = hyperlinks
        self.inline_code_lexer = inline_code_lexer
        self.inline_code_theme = inline_code_theme or code_theme
        self._rendered: dict[tuple, list] = {}

    def __rich_console__(self, console, options):
        # Markdown renders with height=None and reads no max_height: neither is part of the key (Textual measures
        # without a height and paints with one)
        key = (id(console), options.size, options.legacy_windows, options.min_width, options.max_width,
               options.is_terminal, options.encoding, options.justify, options.overflow, options.no_wrap,
               options.highlight, options.markup)
        segments = self._rendered.get(key)
        if segments is None:
            segments = list(console.render(_Uncached(self), options))
            if len(self._rendered) >= _RENDER_CACHE_WIDTHS:
                self._rendered.clear()
            self._rendered[key] = segments
        yield from segments


class _Uncached:
    """The Markdown rendering of a :class:`LiteralMarkdownRenderable`, not cached (what its cache holds)."""

    def __init__(self, markdown: LiteralMarkdownRenderable) -> None:
        self.markdown = markdown

    def __rich_console__(self, console, options):
        return RichMarkdown.__rich_console__(self.markdown, console, options)


def _text_key(text: Text) -> tuple:
    return (text.plain, tuple(text.spans), str(text.style), text.justify, text.overflow, text.no_wrap, text.end,
            text.tab_size)


def update_if_changed(widget: Static, content: Text) -> bool:
    """``widget.update(content)`` unless ``widget`` already shows that very text (same characters, spans and
    styles): an update costs a layout and a repaint of the widget even when nothing changed (the review screen
    updates a dozen widgets per pair, most of them "none yet"). Returns True when it updated."""
    shown = widget.content
    if isinstance(shown, Text) and isinstance(content, Text) and _text_key(shown) == _text_key(content):
        return False
    widget.update(content)
    return True


SHOWN_CHARS = 32 * 1024
"""A :class:`LiteralMarkdown` renders at most this many characters of a text as Markdown at once (issue 19 testers'
finding: a 1 MB answer blocked the app about 4 s, Rich's Markdown parse and layout of it); the rest is a key press
away, shown as plain text."""


def shown_part(text: str, limit: int = SHOWN_CHARS) -> str:
    """The first ``limit`` characters of ``text`` or fewer, cut at the last paragraph (else line) break before the
    limit when there is one in its second half, so the shown Markdown does not end mid-paragraph."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for sep in ("\n\n", "\n"):
        at = head.rfind(sep)
        if at > limit // 2:
            return head[:at]
    return head


def capped_literal(text: str, *, where: str = "the judge inspector's answer view: tab to it, enter") -> Text:
    """``text`` as literal ``Text``, cut by :func:`shown_part` when longer than :data:`SHOWN_CHARS` with a line
    saying so and ``where`` the whole text is (a plain ``Static`` takes seconds to wrap 1 MB of text)."""
    part = shown_part(text)
    out = literal(part)
    if len(part) < len(text):
        out.append(f"\n… showing the first {len(part) // 1024:,} KB of {len(text) // 1024:,} KB (all of it: {where})",
                   style="bold yellow")
    return out


class LiteralMarkdown(Static):
    """A Markdown viewer for text from data: one widget holding one Rich renderable (fast to replace when
    stepping through pairs), structure rendered, emphasis markers, inline HTML and Rich markup shown as typed,
    control characters (ANSI escapes) made visible.

    A text longer than :data:`SHOWN_CHARS` is shown cut there, with a line saying so; the widget then takes the
    focus (tab, or a click) and ``enter`` (or a click) shows the whole text as plain literal text in a read-only
    TextArea (:meth:`action_show_all`; the Markdown of 1 MB would block the app for seconds)."""

    BINDINGS = [Binding("enter", "show_all", "Show all the text", show=False)]

    def __init__(self, markdown: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.source = ""
        self.document: LiteralMarkdownRenderable | None = None
        self.truncated = False
        """True while only the first :data:`SHOWN_CHARS` of :attr:`source` are shown."""
        self.full_text: TextArea | None = None
        """The read-only TextArea showing all of a cut text, after :meth:`action_show_all`."""
        self.can_focus = False
        if markdown:
            self.show(markdown)

    def _size_updated(self, size, virtual_size, container_size, layout: bool = True) -> bool:
        # The layout that sized this widget already placed everything after it: a new size (another pair's
        # answer) needs no second layout pass, which Textual would otherwise run for the new virtual size of a
        # widget that does not scroll (it doubled the layout time of every previous/next).
        return super()._size_updated(size, virtual_size, container_size, layout=False)

    def show(self, markdown: str | None) -> None:
        """Replace the document (nothing is done when it is the document shown)."""
        source = printable(markdown or "")
        if self.document is not None and source == self.source:
            return
        self.source = source
        self._drop_full_text()
        part = shown_part(source)
        self.truncated = len(part) < len(source)
        self.can_focus = self.truncated
        self.document = LiteralMarkdownRenderable(part, code_theme="ansi_dark", hyperlinks=False)
        if not self.truncated:
            self.update(self.document)
            return
        from rich.console import Group

        self.update(Group(self.document, Text(
            f"\n… showing the first {len(part) // 1024:,} KB of {len(source) // 1024:,} KB: click here, or tab here and "
            "press enter, to show all of it (as plain text)", style="bold yellow")))

    def action_show_all(self) -> None:
        """Show the whole text as plain literal text (after a cut :meth:`show`): in a read-only ``TextArea``
        mounted in this widget's place, which lays out only the lines it shows (a ``Static`` holding 1 MB of
        text takes seconds to wrap; measured 12.4 s against 1.7 s for the TextArea on this machine)."""
        if not self.truncated or self.parent is None:
            return
        self.truncated = False
        self.can_focus = False
        full = TextArea(self.source, read_only=True, soft_wrap=True, classes="literal-markdown-all")
        full.styles.height = "100%"
        self.full_text = full
        self.parent.mount(full, after=self)
        self.display = False
        full.focus()

    def _drop_full_text(self) -> None:
        """Remove the TextArea of :meth:`action_show_all` (another text is shown)."""
        if self.full_text is not None:
            self.full_text.remove()
            self.full_text = None
            self.display = True

    def on_click(self) -> None:
        """A click on a cut text shows all of it."""
        self.action_show_all()
