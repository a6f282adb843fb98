"""Small widgets and helpers shared by the screens: literal text from data, the Markdown viewer."""

from __future__ import annotations

from markdown_it import MarkdownIt
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.widgets import Static

from benchwright.core.text import printable


def literal(text: str | None, style: str = "") -> Text:
    """A Rich ``Text`` of ``text`` shown literally: no markup parsed, control characters made visible."""
    return Text(printable(text or ""), style=style)


def literal_parser() -> MarkdownIt:
    """The Markdown parser for text from data.

    HTML off: tags in data (``<module>``, ``<b>``) are shown as typed, never swallowed as HTML. Emphasis and
    strikethrough off: ``__getattr__`` and ``**kwargs`` in code questions read exactly as written. Structure
    (paragraphs, lists, headings, tables, code blocks and spans) is still rendered.
    """
    return MarkdownIt("commonmark", {"html": False}).enable("table").disable(["emphasis"])


class LiteralMarkdownRenderable(RichMarkdown):
    """Rich's Markdown renderable parsed with :func:`literal_parser` (Rich's own parser has emphasis on and
    drops inline HTML)."""

    def __init__(self, markup: str, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.markup = markup
        self.parsed = literal_parser().parse(markup)


class LiteralMarkdown(Static):
    """A Markdown viewer for text from data: one widget holding one Rich renderable (fast to replace when
    stepping through pairs), structure rendered, emphasis markers, inline HTML and Rich markup shown as typed,
    control characters (ANSI escapes) made visible."""

    def __init__(self, markdown: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.source = ""
        self.document: LiteralMarkdownRenderable | None = None
        if markdown:
            self.show(markdown)

    def show(self, markdown: str | None) -> None:
        """Replace the document."""
        self.source = printable(markdown or "")
        self.document = LiteralMarkdownRenderable(self.source, code_theme="ansi_dark", hyperlinks=False)
        self.update(self.document)
