"""Differences between two checklist versions: items matched by key point, word-level text diffs
(diff-match-patch with semantic cleanup), weight and rubric changes called out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from diff_match_patch import diff_match_patch

from .checklist import Checklist, ChecklistItem

EQUAL, INSERT, DELETE = 0, 1, -1
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def word_diff(old: str, new: str) -> list[tuple[int, str]]:
    """Word-level diff of ``old`` → ``new`` as ``[(op, text)]`` with op -1 (removed), 0 (same), 1 (added).

    Words, runs of white space and punctuation are the units (each mapped to one character before
    diffing, as diff-match-patch's line mode does for lines). Semantic cleanup runs on those units too,
    so no part ever starts or ends inside a word (on decoded text it would factor out common letters:
    ``env[- var-]{+ironment variable+}s``).
    """
    vocab: dict[str, str] = {}
    tokens: list[str] = []

    def encode(text: str) -> str:
        out = []
        for tok in _TOKEN.findall(text):
            if tok not in vocab:
                vocab[tok] = chr(0xE000 + len(tokens)) if len(tokens) < 6400 else chr(0xF0000 + len(tokens))
                tokens.append(tok)
            out.append(vocab[tok])
        return "".join(out)

    a, b = encode(old), encode(new)
    back = {v: k for k, v in vocab.items()}
    dmp = diff_match_patch()
    diffs = dmp.diff_main(a, b, False)
    dmp.diff_cleanupSemantic(diffs)
    return [(op, "".join(back[c] for c in text)) for op, text in diffs if text]


def similarity(a: str, b: str) -> float:
    """1 - (characters inserted or deleted by the word diff / length of both texts), in [0, 1]."""
    if not a and not b:
        return 1.0
    diffs = word_diff(a, b)
    changed = sum(len(t) for op, t in diffs if op != EQUAL)
    return max(0.0, 1 - changed / (len(a) + len(b)))


@dataclass
class TierChange:
    """A rubric score present in one or both versions; ``criterion`` is a word diff when both have it."""

    score: int
    status: str  # added | removed | changed | unchanged
    criterion: list[tuple[int, str]]


@dataclass
class ItemChange:
    """One item across two versions.

    Attributes:
        status: ``added``, ``removed``, ``changed`` or ``unchanged``.
        old_index, new_index: positions in each version (None where absent).
        key_point: word diff of the key points.
        weight: ``(old, new)``; kind: ``(old, new)``; rubric: per-score changes, highest score first.
    """

    status: str
    old_index: int | None
    new_index: int | None
    kind: tuple[str | None, str | None]
    key_point: list[tuple[int, str]]
    weight: tuple[int | None, int | None]
    rubric: list[TierChange] = field(default_factory=list)

    @property
    def weight_changed(self) -> bool:
        """True when both versions have the item with different weights."""
        return None not in self.weight and self.weight[0] != self.weight[1]


def _item_change(old: ChecklistItem | None, new: ChecklistItem | None, oi: int | None, ni: int | None) -> ItemChange:
    kp = word_diff(old.key_point if old else "", new.key_point if new else "")
    old_tiers = {t.score: t.criterion for t in old.rubric} if old else {}
    new_tiers = {t.score: t.criterion for t in new.rubric} if new else {}
    tiers: list[TierChange] = []
    for s in sorted(set(old_tiers) | set(new_tiers), reverse=True):
        if s not in old_tiers:
            tiers.append(TierChange(s, "added", [(INSERT, new_tiers[s])]))
        elif s not in new_tiers:
            tiers.append(TierChange(s, "removed", [(DELETE, old_tiers[s])]))
        else:
            d = word_diff(old_tiers[s], new_tiers[s])
            tiers.append(TierChange(s, "unchanged" if old_tiers[s] == new_tiers[s] else "changed", d))
    if old is None:
        status = "added"
    elif new is None:
        status = "removed"
    elif old == new:
        status = "unchanged"
    else:
        status = "changed"
    return ItemChange(
        status, oi, ni, (old.kind.value if old else None, new.kind.value if new else None), kp,
        (old.weight if old else None, new.weight if new else None), tiers,
    )


def diff_checklists(old: Checklist, new: Checklist, *, threshold: float = 0.35) -> list[ItemChange]:
    """Item-by-item changes from ``old`` to ``new``.

    Items are matched by kind and key-point similarity (greedy, best first, at least ``threshold``), so a
    removed or reordered item does not shift every later comparison. Output follows ``new``'s order,
    with removed items after the item that preceded them in ``old``.
    """
    pairs: list[tuple[float, int, int]] = []
    for i, a in enumerate(old.items):
        for j, b in enumerate(new.items):
            if a.kind == b.kind:
                sim = 1.0 if a.key_point == b.key_point else similarity(a.key_point, b.key_point)
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
        out.append(_item_change(old.items[i] if i is not None else None, b, i, j))
        if i is not None:
            placed_old.add(i)
            # removed items that followed i in the old order come right after it
            k = i + 1
            while k < len(old.items) and k not in match_old:
                out.append(_item_change(old.items[k], None, k, None))
                placed_old.add(k)
                k += 1
    # removed items before the first matched one (nothing precedes them) come first, in their old order
    leading = [_item_change(a, None, i, None) for i, a in enumerate(old.items) if i not in placed_old and i not in match_old]
    return leading + out


def render_word_diff(diffs: list[tuple[int, str]]) -> str:
    """Plain-text word diff: ``[-removed-]`` and ``{+added+}``."""
    return "".join(t if op == EQUAL else f"[-{t}-]" if op == DELETE else f"{{+{t}+}}" for op, t in diffs)


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
                lines.append(f"  score {t.score} {t.status}: {render_word_diff(t.criterion)}")
    return "\n".join(lines)
