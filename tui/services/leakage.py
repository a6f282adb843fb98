"""Leakage checks of rewritten questions as the front ends run them (issue 17 item 8): after a rewrite becomes the
pair's current text (``enrich`` / ``refine``, an annotator's edit or revert), and on demand (``benchwright pairs
leakage``). The rules are :mod:`benchwright.core.leakage`; the rows :mod:`benchwright.db.leakage`. No Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchwright.core.checklist import ItemKind
from benchwright.core.leakage import LeakageRules, find_leaks
from benchwright.db import Store
from benchwright.db.leakage import LeakageCheck


def repository_terms(repository: str | None) -> list[str]:
    """The names a pair's repository goes by (``pallets/flask`` -> ``pallets/flask``, ``pallets``, ``flask``):
    naming the project a question is about gives nothing away, so a leakage check ignores them."""
    if not repository:
        return []
    return [repository, *(p for p in repository.replace("\\", "/").split("/") if p)]


def check_leakage(store: Store, pair_id: str, *, by: str, rules: LeakageRules | None = None) -> LeakageCheck | None:
    """Check ``pair_id``'s current text for leaked terms and record the check; None (nothing recorded) when the
    current text is its first version.

    The new question is compared with the text the rewrite started from (:meth:`~benchwright.db.Store.rewrite_base`:
    the original, or a re-import's text), against the current reference answer (the base's when the current text
    has none) and the key points of the pair's current checklist, if any; the repository's names are ignored.

    Raises:
        NotFoundError: no such pair.
    """
    current = store.text_version(pair_id)
    if current.version == 1:
        return None
    base = store.rewrite_base(pair_id)
    checklist = store.checklist_version(pair_id)
    key_points = [i.key_point for i in checklist.checklist.items if i.kind is ItemKind.KNOWLEDGE] if checklist else []
    rules = (rules or LeakageRules()).ignoring(repository_terms(store.get_pair(pair_id).repository))
    spans = find_leaks(base.question, current.question, current.reference_answer or base.reference_answer,
                       key_points, rules=rules)
    return store.record_leakage_check(pair_id, current.version, spans, by=by)


@dataclass(frozen=True)
class LeakageRow:
    """One rewritten pair of ``pairs leakage``: its id and position, its latest check of the current text, and
    whether this run made that check (``checked_now``) or found it made before."""

    pair_id: str
    ordinal: int
    check: LeakageCheck
    checked_now: bool


def check_rewritten(store: Store, pair_ids: Sequence[str] | None = None, *, by: str, recheck: bool = False,
                    rules: LeakageRules | None = None) -> list[LeakageRow]:
    """The leakage check of every pair (of ``pair_ids``, when given) whose current text is not its first, in queue
    order: the check recorded for that text, or a new one when there is none or ``recheck`` (after a new
    checklist, or other ``rules``).

    Raises:
        NotFoundError: a pair vanished meanwhile.
    """
    out = []
    for pid in store.rewritten_pair_ids(pair_ids):
        check = None if recheck else store.leakage_check(pid)
        now = check is None
        if now:
            check = check_leakage(store, pid, by=by, rules=rules)
        if check is not None:
            out.append(LeakageRow(pid, store.ordinal_of(pid), check, now))
    return out
