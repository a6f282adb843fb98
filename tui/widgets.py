"""Small widgets and helpers shared by the screens: literal text from data, the Markdown viewer."""

from __future__ import annotations

from markdown_it import MarkdownIt
from rich.text import Text
from textual.widgets import Markdown

from benchwright.core.text import printable


def literal(text: str | None, style: str = "") -> Text:
    """A Rich ``Text`` of ``text`` shown literally: no markup parsed, control characters made visible."""
    return Text(printable(text or ""), style=style)


def _parser() -> MarkdownIt:
    # html off: tags in data (``<module>``, ``<b>``) are shown as typed, never swallowed as HTML.
    # Emphasis and strikethrough off: ``__getattr__`` and ``**kwargs`` in code questions must read exactly
    # as written; structure (paragraphs, lists, headings, code blocks and spans) is still rendered.
    return MarkdownIt("gfm-like", {"html": False}).disable(["emphasis", "strikethrough"])


class LiteralMarkdown(Markdown):
    """A Markdown viewer for text from data: Markdown structure (paragraphs, lists, headings, code) is
    rendered, but emphasis markers, inline HTML and Rich markup are shown as typed, and control characters
    (ANSI escapes) are made visible."""

    def __init__(self, markdown: str | None = None, **kwargs) -> None:
        super().__init__(printable(markdown or ""), parser_factory=_parser, open_links=False, **kwargs)

    def show(self, markdown: str | None):
        """Replace the document (awaitable)."""
        return self.update(printable(markdown or ""))
