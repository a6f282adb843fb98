"""Checklist diffs: word-level text diffs, items matched by key point, weight and rubric changes, text output."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, RubricTier, clarity_item
from benchwright.core.checklist_diff import (
    DELETE,
    EQUAL,
    INSERT,
    diff_checklists,
    render_diff_text,
    render_word_diff,
    similarity,
    word_diff,
)

TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
WORDS = st.sampled_from(["the", "app", "config", "Flask", "loads", "é", "über", "x1", "_", "κόσμε", "日本"])
SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", ", ", ".", "(", ")", "->", "\ue000", "🙂"])
TEXTS = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(WORDS, SEPARATORS), max_size=30).map("".join),
)


def old_side(diff) -> str:
    return "".join(s.old_text or s.text for s in diff.segments if s.op != INSERT)


def new_side(diff) -> str:
    return "".join(s.text for s in diff.segments if s.op != DELETE)


def parts(diff) -> list[tuple[int, str]]:
    return [(s.op, s.text) for s in diff.segments]


def boundaries(text: str) -> set[int]:
    out, at = {0}, 0
    for tok in TOKEN.findall(text):
        at += len(tok)
        out.add(at)
    return out


# ------------------------------------------------------------------------------------------- word_diff
@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS)
def test_word_diff_reconstructs_both_texts(old, new):
    diffs = word_diff(old, new)
    assert old_side(diffs) == old
    assert new_side(diffs) == new
    assert diffs.old() == old and diffs.new() == new
    assert all(op in (EQUAL, INSERT, DELETE) and text for op, text in parts(diffs))


@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS)
def test_word_diff_never_cuts_inside_a_word(old, new):
    """Every part starts and ends on a word / white space / punctuation boundary of its side."""
    diffs = word_diff(old, new)
    at_old = at_new = 0
    old_cuts, new_cuts = boundaries(old), boundaries(new)
    for op, text in parts(diffs):
        if op != INSERT:
            at_old += len(text)
            assert at_old in old_cuts, (diffs, at_old)
        if op != DELETE:
            at_new += len(text)
            assert at_new in new_cuts, (diffs, at_new)


def test_word_diff_examples():
    assert parts(word_diff("the quick brown fox", "the slow brown fox")) == [
        (EQUAL, "the "), (DELETE, "quick"), (INSERT, "slow"), (EQUAL, " brown fox")]
    assert parts(word_diff("Flask loads config from env vars", "Flask loads config from environment variables")) == [
        (EQUAL, "Flask loads config from "), (DELETE, "env vars"), (INSERT, "environment variables")]
    assert parts(word_diff("same", "same")) == [(EQUAL, "same")]
    assert parts(word_diff("", "")) == []
    assert parts(word_diff("", "new text")) == [(INSERT, "new text")]
    assert parts(word_diff("old text", "")) == [(DELETE, "old text")]


def test_word_diff_of_texts_with_thousands_of_distinct_words():
    old = " ".join(f"w{i}" for i in range(7000))
    new = " ".join(f"w{i}" for i in range(7000) if i % 1000 != 5) + " tail"
    diffs = word_diff(old, new)
    assert old_side(diffs) == old and new_side(diffs) == new
    assert [t for op, t in parts(diffs) if op == INSERT] == [" tail"]


def test_similarity():
    assert similarity("", "") == 1.0
    assert similarity("a b c", "a b c") == 1.0
    assert similarity("abc", "xyz") == 0.0
    near = similarity("Flask loads the config from environment variables",
                      "Flask loads the config from the environment variables")
    assert 0.9 < near < 1.0
    assert similarity("one", "two words here") < 0.35


# ------------------------------------------------------------------------------------- diff_checklists
def item(key_point: str, weight: int, scores: list[int] | None = None, prefix: str = "crit") -> ChecklistItem:
    scores = sorted({0, weight}) if scores is None else scores
    return ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=key_point, weight=weight,
                         rubric=[RubricTier(score=s, criterion=f"{prefix} {s}") for s in sorted(scores, reverse=True)])


A = item("Flask loads the config from environment variables", 4)
B = item("Blueprints register their routes lazily", 3)
C = item("The application context is pushed for every request", 2)
CL = clarity_item()


def summary(changes) -> list[tuple[str, int | None, int | None]]:
    return [(c.status, c.old_index, c.new_index) for c in changes]


def test_identical_checklists_are_unchanged():
    old = Checklist(items=[A, B, C, CL])
    changes = diff_checklists(old, old.model_copy())
    assert summary(changes) == [("unchanged", i, i) for i in range(4)]
    assert all(not c.weight_changed for c in changes)
    assert render_diff_text(changes).splitlines() == [
        "#1 knowledge item: unchanged", "#2 knowledge item: unchanged", "#3 knowledge item: unchanged",
        "#4 clarity item: unchanged"]


def test_reordered_items_are_matched_by_key_point():
    changes = diff_checklists(Checklist(items=[A, B, C, CL]), Checklist(items=[CL, C, A, B]))
    assert summary(changes) == [("unchanged", 3, 0), ("unchanged", 2, 1), ("unchanged", 0, 2), ("unchanged", 1, 3)]


def test_identical_key_point_elsewhere_beats_a_near_identical_one_in_place():
    x = item("The cache is invalidated whenever the configuration file on disk changes", 5)
    y = item("The cache is invalidated whenever the configuration file on disk changes!", 4)
    changes = diff_checklists(Checklist(items=[x, y, CL]), Checklist(items=[y, x, CL]))
    assert summary(changes) == [("unchanged", 1, 0), ("unchanged", 0, 1), ("unchanged", 2, 2)]


def test_added_removed_and_changed_items():
    a2 = item("Flask loads the config from the environment variables", 4)  # key point edited
    d = item("Errors propagate when debug mode is on", 3)
    changes = diff_checklists(Checklist(items=[A, B, C, CL]), Checklist(items=[a2, C, d, CL]))
    assert summary(changes) == [
        ("changed", 0, 0), ("removed", 1, None), ("unchanged", 2, 1), ("added", None, 2), ("unchanged", 3, 3)]
    kp = changes[0].key_point
    assert (INSERT, "the ") in parts(kp) and old_side(kp) == A.key_point and new_side(kp) == a2.key_point
    assert changes[1].kind == ("knowledge", None) and changes[1].weight == (3, None)
    assert changes[3].kind == (None, "knowledge") and changes[3].weight == (None, 3)
    assert {t.status for t in changes[1].rubric} == {"removed"}
    assert {t.status for t in changes[3].rubric} == {"added"}


def test_removed_items_at_the_start_keep_their_order():
    changes = diff_checklists(Checklist(items=[A, B, C, CL]), Checklist(items=[C, CL]))
    assert summary(changes) == [("removed", 0, None), ("removed", 1, None), ("unchanged", 2, 0), ("unchanged", 3, 1)]
    d = item("Something else entirely, about signals", 9)
    changes = diff_checklists(Checklist(items=[A, B]), Checklist(items=[d]))
    assert summary(changes) == [("removed", 0, None), ("removed", 1, None), ("added", None, 0)]


def test_weight_and_rubric_tier_changes_are_called_out():
    new_a = item(A.key_point, 5, [0, 2, 5])
    new_a.rubric[1].criterion = "partial credit: names only the variable"
    old_b = item(B.key_point, 3, [0, 1, 3])
    new_b = item(B.key_point, 3, [0, 1, 3])
    new_b.rubric[1].criterion = "crit 1, but stated vaguely"
    changes = diff_checklists(Checklist(items=[A, old_b, CL]), Checklist(items=[new_a, new_b, CL]))
    a, b, cl = changes
    assert a.status == "changed" and a.weight_changed and a.weight == (4, 5)
    assert [(t.score, t.status) for t in a.rubric] == [(5, "added"), (4, "removed"), (2, "added"), (0, "unchanged")]
    assert b.status == "changed" and not b.weight_changed
    assert [(t.score, t.status) for t in b.rubric] == [(3, "unchanged"), (1, "changed"), (0, "unchanged")]
    tier = b.rubric[1]
    assert old_side(tier.criterion) == "crit 1" and new_side(tier.criterion) == "crit 1, but stated vaguely"
    assert cl.status == "unchanged"

    text = render_diff_text(changes)
    assert text.splitlines() == [
        "#1 knowledge item: changed",
        f"  key point: {A.key_point}",
        "  weight: 4 -> 5",
        "  score 5 added: {+crit 5+}",
        "  score 4 removed: [-crit 4-]",
        "  score 2 added: {+partial credit: names only the variable+}",
        "#2 knowledge item: changed",
        f"  key point: {B.key_point}",
        "  score 1 changed: crit 1{+, but stated vaguely+}",
        "#3 clarity item: unchanged",
    ]


def test_render_of_added_and_removed_items():
    d = item("Errors propagate when debug mode is on", 3)
    text = render_diff_text(diff_checklists(Checklist(items=[B, CL]), Checklist(items=[d, CL])))
    assert text.splitlines() == [
        "#1 knowledge item: removed",
        f"  key point: [-{B.key_point}-]",
        "  weight: 3",
        "  score 3 removed: [-crit 3-]",
        "  score 0 removed: [-crit 0-]",
        "#1 knowledge item: added",
        f"  key point: {{+{d.key_point}+}}",
        "  weight: 3",
        "  score 3 added: {+crit 3+}",
        "  score 0 added: {+crit 0+}",
        "#2 clarity item: unchanged",
    ]
    assert render_word_diff(word_diff("a b", "a c")) == "a [-b-]{+c+}"


def test_items_of_different_kinds_never_match():
    k = item(CL.key_point, 9)
    changes = diff_checklists(Checklist(items=[CL]), Checklist(items=[k]))
    assert sorted(c.status for c in changes) == ["added", "removed"]


KEY_POINTS = st.lists(st.sampled_from([
    "Flask loads the config from environment variables", "Blueprints register their routes lazily",
    "The application context is pushed for every request", "Errors propagate when debug mode is on",
    "Signals are sent synchronously", "Sessions are signed with the secret key",
]), min_size=1, max_size=4, unique=True)


@settings(max_examples=150, deadline=None)
@given(KEY_POINTS, KEY_POINTS, st.data())
def test_every_item_appears_once_and_new_items_keep_their_order(old_kps, new_kps, data):
    old = Checklist(items=[item(k, data.draw(st.integers(1, 4))) for k in old_kps] + [CL])
    new = Checklist(items=[item(k, data.draw(st.integers(1, 4))) for k in new_kps] + [CL])
    changes = diff_checklists(old, new)
    assert sorted(c.old_index for c in changes if c.old_index is not None) == list(range(len(old.items)))
    assert [c.new_index for c in changes if c.new_index is not None] == list(range(len(new.items)))
    for c in changes:
        if c.old_index is not None and c.new_index is not None:
            assert old.items[c.old_index].key_point == new.items[c.new_index].key_point  # distinct texts: exact match
            assert c.status == ("unchanged" if old.items[c.old_index] == new.items[c.new_index] else "changed")
            assert c.weight_changed == (old.items[c.old_index].weight != new.items[c.new_index].weight)
        elif c.old_index is None:
            assert c.status == "added" and new.items[c.new_index].key_point not in old_kps
        else:
            assert c.status == "removed" and old.items[c.old_index].key_point not in new_kps
    for at, c in enumerate(changes):
        if c.status == "removed":  # right after the item that preceded it in the old version
            assert (at == 0) if c.old_index == 0 else changes[at - 1].old_index == c.old_index - 1
