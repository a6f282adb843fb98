"""The blind-mode rule, decided once: who may see another annotator's work on a pair, and when.

Blind mode keeps annotators independent (each judges a pair before seeing how others judged it; inter-annotator
agreement is only meaningful so): while it is on, an annotator who has not submitted a review of a pair sees
none of another annotator's own work on it: reviews, decisions (skips and undos too), notes, the checklist
versions they edited or imported, and the history events of all of these. Work that is nobody's judgment stays
visible: generated checklists, versions by someone who is not an annotator (a lead's import or edit when
assignments exist), adjudications and text versions. Someone the pair is not assigned to, who has not worked on
it (a lead, an adjudicator), sees everything.

The store gathers the facts into a :class:`Sight` (``Store.sight``) and offers reads already filtered through it
(``events_of(pair, viewer=...)``, ``others_reviews``, ``visible_checklist_versions``); front ends only show
what those reads return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from .errors import BenchwrightError

T = TypeVar("T")

OWN_WORK_ORIGINS = ("edited", "imported")
"""Origins of a checklist version that is its author's own work (``generated`` and ``adjudicated`` are not)."""

OWN_WORK_EVENTS = ("review", "undo", "skip", "note")
"""Kinds of history event that are their actor's own work, besides ``checklist`` (which depends on the
version's origin); ``adjudication`` and ``text`` events are not."""


@dataclass(frozen=True)
class Sight:
    """What decides what ``viewer`` may see of others' work on one pair.

    Attributes:
        viewer: who looks.
        blind: the project's blind mode is on.
        submitted: ``viewer`` has submitted a review (accept, reject, revise) of the pair.
        assignees: annotators the pair is assigned to.
        worked_on: ``viewer`` has a decision (any, skip included) or a checklist version on the pair.
        annotators: who counts as an annotator: those with an assignment in the project (the store gives the
            ones among the pair's authors); None when nobody has one, so every author counts.
    """

    viewer: str
    blind: bool
    submitted: bool
    assignees: frozenset[str] = frozenset()
    worked_on: bool = False
    annotators: frozenset[str] | None = None

    @property
    def sees_others(self) -> bool:
        """True when ``viewer`` may see everyone's work on the pair: blind mode is off, they submitted their
        review, or they are an outsider to the pair (it is assigned, not to them, and they never worked on it)."""
        if not self.blind or self.submitted:
            return True
        return bool(self.assignees) and self.viewer not in self.assignees and not self.worked_on

    def is_annotator(self, name: str) -> bool:
        """True when ``name`` counts as an annotator (assigned some pair, or nobody is assigned anything)."""
        return self.annotators is None or name in self.annotators

    def may_see_checklist(self, author: str, origin: str) -> bool:
        """True when ``viewer`` may see a checklist version by ``author`` with ``origin``."""
        if self.sees_others or author == self.viewer or origin not in OWN_WORK_ORIGINS:
            return True
        return not self.is_annotator(author)

    def may_see_review(self, annotator: str) -> bool:
        """True when ``viewer`` may see ``annotator``'s review, decision or note of the pair."""
        return self.sees_others or annotator == self.viewer

    def may_see_event(self, event: Mapping) -> bool:
        """True when ``viewer`` may see a history event (``{actor, kind, after, ...}`` as ``Store.events_of``
        gives it): a checklist event as its version, a review, undo, skip or note as the review."""
        kind = event["kind"]
        if kind == "checklist":
            return self.may_see_checklist(event["actor"], (event.get("after") or {}).get("origin") or "")
        if kind in OWN_WORK_EVENTS:
            return self.may_see_review(event["actor"])
        return True


class HiddenInBlindMode(BenchwrightError):
    """What was asked for is another annotator's own work, held back until the viewer submits their review.

    Attributes:
        qa_pair_id: the pair.
        version: the checklist version asked for (None: the current one).
    """

    def __init__(self, qa_pair_id: str, version: int | None = None) -> None:
        self.qa_pair_id = qa_pair_id
        self.version = version
        what = f"version {version} of the checklist" if version is not None else "the checklist"
        super().__init__(f"pair {qa_pair_id}: {what} is another annotator's own work, hidden in blind mode until "
                         "one's own review is submitted")


class Visible(list):
    """The items a viewer may see, in order, with ``hidden``: how many blind mode held back."""

    hidden: int

    def __init__(self, items: Iterable = (), hidden: int = 0) -> None:
        super().__init__(items)
        self.hidden = hidden


def visible(items: Iterable[T], allowed: Callable[[T], bool]) -> Visible:
    """``items`` that ``allowed`` lets through, in order, counting the others as ``hidden``."""
    shown: list[T] = []
    hidden = 0
    for item in items:
        if allowed(item):
            shown.append(item)
        else:
            hidden += 1
    return Visible(shown, hidden)
