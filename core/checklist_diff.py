"""Differences between two checklist versions: items matched by key point, word-level text diffs
(:func:`benchwright.core.text_diff.word_diff`), weight and rubric changes called out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .checklist import Checklist, ChecklistItem
from .text_diff import (
    APPROXIMATE,
    DELETE,
    EQUAL,
    INSERT,
    NORMALIZATION_ONLY,
    DiffCancelled,
    TextDiff,
    equal_after_normalization,
    unit_overlap,
    word_diff,
)

__all__ = [
    "APPROXIMATE",
    "DELETE",
    "EQUAL",
    "INSERT",
    "NORMALIZATION_ONLY",
    "DiffCancelled",
    "ItemChange",
    "TextDiff",
    "TierChange",
    "diff_checklists",
    "render_diff_text",
    "render_word_diff",
    "similarity",
    "word_diff",
]


def checklist_text_size(checklist: Checklist) -> int:
    """The characters of all key points and criteria of ``checklist`` (what a diff of it compares)."""
    return sum(len(it.key_point) + sum(len(t.criterion) for t in it.rubric) for it in checklist.items)


def similarity(a: str, b: str, *, at_least: float = 0.0, timeout_s: float | None = None,
               cancelled: Callable[[], bool] | None = None) -> float:
    """1 - (characters inserted or deleted by the word diff / length of both texts), in [0, 1].

    The units both texts share regardless of order bound it from above (like
    :meth:`difflib.SequenceMatcher.quick_ratio`): when that bound is below ``at_least`` it is returned without
    a diff, and it stands in when the diff runs out of time (an approximate diff shows nearly everything as
    changed), so two long versions of one text still match.

    Raises:
        DiffCancelled: when ``cancelled`` answered true (see :func:`word_diff`).
    """
    if not a and not b:
        return 1.0
    bound = unit_overlap(a, b)
    if bound < at_least:
        return bound
    diffs = word_diff(a, b, timeout_s=timeout_s, cancelled=cancelled)
    if diffs.approximate:
        return bound
    changed = sum(len(s.text) for s in diffs.segments if s.op != EQUAL)
    return max(0.0, 1 - changed / (len(a) + len(b)))


@dataclass
class TierChange:
    """A rubric score present in one or both versions; ``criterion`` is a word diff when both have it."""

    score: int
    status: str  # added | removed | changed | unchanged | normalization only
    criterion: TextDiff


@dataclass
class ItemChange:
    """One item across two versions.

    Attributes:
        status: ``added``, ``removed``, ``changed``, ``unchanged`` or ``normalization only`` (the versions
            differ only by the Unicode normalization of their texts, :data:`NORMALIZATION_ONLY`).
        old_index, new_index: positions in each version (None where absent).
        key_point: word diff of the key points.
        weight: ``(old, new)``; kind: ``(old, new)``; rubric: per-score changes, highest score first.
    """

    status: str
    old_index: int | None
    new_index: int | None
    kind: tuple[str | None, str | None]
    key_point: TextDiff
    weight: tuple[int | None, int | None]
    rubric: list[TierChange] = field(default_factory=list)

    @property
    def weight_changed(self) -> bool:
        """True when both versions have the item with different weights."""
        return None not in self.weight and self.weight[0] != self.weight[1]

    @property
    def approximate(self) -> bool:
        """True when the key point's or a criterion's diff ran out of time (see :class:`TextDiff`)."""
        return self.key_point.approximate or any(t.criterion.approximate for t in self.rubric)


def _text_status(d: TextDiff) -> str:
    return NORMALIZATION_ONLY if d.normalization_only else "changed" if d.changed else "unchanged"


def _item_change(old: ChecklistItem | None, new: ChecklistItem | None, oi: int | None, ni: int | None,
                 timeout_s: float | None = None, cancelled: Callable[[], bool] | None = None) -> ItemChange:
    def diff(a: str, b: str) -> TextDiff:
        return word_diff(a, b, timeout_s=timeout_s, cancelled=cancelled)

    kp = diff(old.key_point if old else "", new.key_point if new else "")
    old_tiers = {t.score: t.criterion for t in old.rubric} if old else {}
    new_tiers = {t.score: t.criterion for t in new.rubric} if new else {}
    tiers: list[TierChange] = []
    for s in sorted(set(old_tiers) | set(new_tiers), reverse=True):
        if s not in old_tiers:
            tiers.append(TierChange(s, "added", diff("", new_tiers[s])))
        elif s not in new_tiers:
            tiers.append(TierChange(s, "removed", diff(old_tiers[s], "")))
        else:
            d = diff(old_tiers[s], new_tiers[s])
            tiers.append(TierChange(s, _text_status(d), d))
    if old is None:
        status = "added"
    elif new is None:
        status = "removed"
    elif old == new:
        status = "unchanged"
    elif (old.kind, old.weight) == (new.kind, new.weight) and [t.score for t in old.rubric] == [
            t.score for t in new.rubric] and all(d.normalization_only or not d.changed
                                                 for d in [kp, *(t.criterion for t in tiers)]):
        status = NORMALIZATION_ONLY
    else:
        status = "changed"
    return ItemChange(
        status, oi, ni, (old.kind.value if old else None, new.kind.value if new else None), kp,
        (old.weight if old else None, new.weight if new else None), tiers,
    )


def diff_checklists(old: Checklist, new: Checklist, *, threshold: float = 0.35, timeout_s: float | None = None,
                    cancelled: Callable[[], bool] | None = None) -> list[ItemChange]:
    """Item-by-item changes from ``old`` to ``new``.

    Items are matched by kind and key-point similarity (greedy, best first, at least ``threshold``), so a
    removed or reordered item does not shift every later comparison. Output follows ``new``'s order,
    with removed items after the item that preceded them in ``old``. Key points equal after Unicode NFC
    match as identical.

    ``timeout_s`` and ``cancelled`` are passed to every :func:`word_diff`.

    Raises:
        DiffCancelled: when ``cancelled`` (polled during the text diffs) answered true.
    """
    pairs: list[tuple[float, int, int]] = []
    for i, a in enumerate(old.items):
        for j, b in enumerate(new.items):
            if a.kind == b.kind:
                sim = 1.0 if equal_after_normalization(a.key_point, b.key_point) else similarity(
                    a.key_point, b.key_point, at_least=threshold, timeout_s=timeout_s, cancelled=cancelled)
                pairs.append((sim, i, j))
    match_old: dict[int, int] = {}
    match_new: dict[int, int] = {}
    # best similarity first; the same position only breaks ties (an identical key point elsewhere wins
    # over a near-identical one in the same place)
    for sim, i, j in sorted(pairs, key=lambda p: (-p[0], p[1] != p[2], p[1], p[2])):
        if sim >= threshold and i not in match_old and j not in match_new:
            match_old[i], match_new[j] = j, i
    out: list[ItemChange] = []
    placed_old: set[int] = set()
    for j, b in enumerate(new.items):
        i = match_new.get(j)
        out.append(_item_change(old.items[i] if i is not None else None, b, i, j, timeout_s, cancelled))
        if i is not None:
            placed_old.add(i)
            # removed items that followed i in the old order come right after it
            k = i + 1
            while k < len(old.items) and k not in match_old:
                out.append(_item_change(old.items[k], None, k, None, timeout_s, cancelled))
                placed_old.add(k)
                k += 1
    # removed items before the first matched one (nothing precedes them) come first, in their old order
    leading = [_item_change(a, None, i, None, timeout_s, cancelled) for i, a in enumerate(old.items) if i not in placed_old and i not in match_old]
    return leading + out


def render_word_diff(diff: TextDiff) -> str:
    """Plain-text word diff: ``[-removed-]`` and ``{+added+}``, after ``(approximate diff) `` when it ran
    out of time or ``(normalization only) `` when the texts differ only by Unicode normalization."""
    note = diff.note()
    body = "".join(s.text if s.op == EQUAL else f"[-{s.text}-]" if s.op == DELETE else f"{{+{s.text}+}}"
                   for s in diff.segments)
    return f"({note}) {body}" if note else body


def render_diff_text(changes: list[ItemChange]) -> str:
    """A readable plain-text report of :func:`diff_checklists` for the command line."""
    lines: list[str] = []
    for c in changes:
        label = c.kind[1] or c.kind[0]
        where = f"#{(c.new_index if c.new_index is not None else c.old_index) + 1}"
        lines.append(f"{where} {label} item: {c.status}")
        if c.status == "unchanged":
            continue
        lines.append(f"  key point: {render_word_diff(c.key_point)}")
        if c.weight_changed:
            lines.append(f"  weight: {c.weight[0]} -> {c.weight[1]}")
        elif c.status in ("added", "removed"):
            lines.append(f"  weight: {c.weight[1] if c.status == 'added' else c.weight[0]}")
        for t in c.rubric:
            if t.status != "unchanged":
                text = t.criterion.new() if t.status == NORMALIZATION_ONLY else render_word_diff(t.criterion)
                lines.append(f"  score {t.score} {t.status}: {text}")
    if any(c.approximate for c in changes):
        lines.append(f"{APPROXIMATE}: a comparison took longer than {_timeout_of(changes):g} s, so some "
                     "unchanged text may be shown as removed and added")
    return "\n".join(lines)


def _timeout_of(changes: list[ItemChange]) -> float:
    return max(d.timeout_s for c in changes for d in [c.key_point, *(t.criterion for t in c.rubric)])
