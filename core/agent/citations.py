"""The locations an agent's final answer cites, resolved in the repository it read (SWE-QA-Pro §3.1: answers cite
``path: line a-b``; issue 15 counts the citations that resolve).

Citations are found and resolved by the evidence code (:func:`benchwright.core.evidence.gather_evidence`), so every
form it knows counts: ``src/app.py: line 10-20``, ``app.py:42``, ``app.py:42-50``, ``app.py#L3-L9``, ``lines 5-9 of
app.py``, a bare path. A path written as an absolute path under the repository root is read as relative to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..evidence import gather_evidence

RESOLVING = frozenset({"found", "found-by-suffix"})
"""Evidence statuses that count as resolving (when the cited lines are inside the file, too)."""


@dataclass(frozen=True)
class CitedLocation:
    """One cited location and how it resolved.

    Attributes:
        cited: the citation as read (``path``, ``path:N`` or ``path:A-B``).
        status: the evidence status (``found``, ``found-by-suffix``, ``ambiguous``, ``missing``, ``unsafe``,
            ``no-repository``), or ``beyond-end`` when the file is found but the lines are past its end.
        path: the repository-relative file it resolved to, or None.
        resolves: True when ``status`` is ``found`` or ``found-by-suffix`` and the lines exist.
    """

    cited: str
    status: str
    path: str | None
    resolves: bool

    def as_json(self) -> dict:
        """``{"cited", "status", "path", "resolves"}``."""
        return {"cited": self.cited, "status": self.status, "path": self.path, "resolves": self.resolves}


@dataclass(frozen=True)
class CitationCount:
    """The citations of one answer: how many resolve, how many do not, and each one.

    Attributes:
        resolving: citations whose file is found (exactly or by a unique suffix) with the cited lines in it.
        not_resolving: the others (missing, ambiguous, unsafe, lines past the end, no repository).
        items: every citation, in order of first appearance.
    """

    resolving: int = 0
    not_resolving: int = 0
    items: tuple[CitedLocation, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        """All citations."""
        return self.resolving + self.not_resolving

    def as_json(self) -> dict:
        """``{"resolving": N, "not_resolving": M, "items": [...]}`` (an agent answer's ``extra["citations"]``)."""
        return {"resolving": self.resolving, "not_resolving": self.not_resolving,
                "items": [i.as_json() for i in self.items]}


def resolve_citations(root: Path | str | None, text: str | None) -> CitationCount:
    """Every location ``text`` cites, resolved inside the repository at ``root`` and counted (see
    :class:`CitationCount`). ``root`` None or missing: every citation counts as not resolving (``no-repository``).
    Never raises for the text's content."""
    body = text or ""
    if root is not None and body:
        real = str(Path(root).resolve()).rstrip("/") + "/"
        given = str(root).rstrip("/") + "/"
        for prefix in {real, given}:
            if len(prefix) > 1:
                body = body.replace(prefix, "")
    items = []
    for ev in gather_evidence(root, body):
        ok = ev.status in RESOLVING and not ev.beyond_end
        status = "beyond-end" if ev.status in RESOLVING and ev.beyond_end else ev.status
        items.append(CitedLocation(str(ev.citation), status, ev.path, ok))
    n_ok = sum(i.resolves for i in items)
    return CitationCount(resolving=n_ok, not_resolving=len(items) - n_ok, items=tuple(items))
