"""The one text diff (core/text_diff.py): no part cuts a grapheme cluster or a word, normalization-only
differences are no change, any number of distinct words, timed-out diffs flagged, cancellation."""

from __future__ import annotations

import time
import unicodedata

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from benchwright.core import text_diff
from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, clarity_item
from benchwright.core.checklist_diff import diff_checklists, render_diff_text, render_word_diff
from benchwright.core.text_diff import (
    APPROXIMATE,
    DELETE,
    EQUAL,
    INSERT,
    NORMALIZATION_ONLY,
    DiffCancelled,
    units,
    word_diff,
)

FLAGS = ["🇫🇷", "🇫🇮", "🇩🇪", "🇯🇵"]
FAMILIES = ["👨\u200d👩\u200d👧", "👨\u200d👩\u200d👦", "👩\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈"]
PIECES = st.sampled_from([
    *FLAGS, *FAMILIES, "👍🏽", "👍🏿", "❤\ufe0f", "🙂",
    "e\u0301", "\u00e9", "a\u0308", "\u00e4", "n\u0303", "\u0301", "\u200d", "\ufe0f", "\U0001f3fd",
    "\u1100\u1161\u11a8", "\uac01",  # Hangul jamo and the precomposed syllable
    "\r\n", "\r", "\n", " ", "  ", "\t", ",", ".", "-", "(",
    "the", "config", "x1", "_", "κόσμε", "日本", "e", "a", "n",
])
TEXTS = st.one_of(st.lists(PIECES, max_size=24).map("".join), st.text(max_size=40))


def cluster_cuts(text: str) -> set[int]:
    """Positions between grapheme clusters (UAX #29, independently of the diff's own cutting)."""
    cuts, at = {0}, 0
    for g in regex.findall(r"\X", text):
        at += len(g)
        cuts.add(at)
    return cuts


def word_cuts(text: str) -> set[int]:
    """Cluster cuts that are not between two clusters of one word (both starting with a word character)."""
    clusters = regex.findall(r"\X", text)
    cuts, at = {0}, 0
    for k, g in enumerate(clusters):
        at += len(g)
        nxt = clusters[k + 1] if k + 1 < len(clusters) else None
        if nxt is None or not (regex.match(r"\w", g) and regex.match(r"\w", nxt)):
            cuts.add(at)
    return cuts


def ends(diff, which: int) -> list[int]:
    out, at = [], 0
    for _, text in diff.side(which):
        at += len(text)
        out.append(at)
    return out


# --------------------------------------------------------------------------------- grapheme clusters
@settings(max_examples=400, deadline=None)
@given(TEXTS, TEXTS)
def test_no_part_starts_or_ends_inside_a_grapheme_cluster_or_a_word(old, new):
    d = word_diff(old, new)
    assert d.old() == old and d.new() == new
    assert all(s.text for s in d.segments)
    for which, text in ((0, old), (1, new)):
        assert set(ends(d, which)) <= cluster_cuts(text), (d.segments, which)
        assert set(ends(d, which)) <= word_cuts(text), (d.segments, which)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=60))
def test_ascii_text_is_cut_like_any_other(text):
    assert units(text) == text_diff._UNIT.findall(text)


ODD = st.sampled_from(["\u0600", "\u0d4e", "\U000110bd", "\u0903", "\u093f", "\u094d", "\u200c", "\u200d",
                       "\U0001f3fd", "\u0301", "\u20dd", "\ufe0f", "\r", "\n", " ", "1", "a", "क", "ष", "🙂", "🇫"])


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.lists(st.one_of(ODD, PIECES), max_size=30).map("".join), st.text(max_size=60)))
def test_units_are_those_of_grapheme_clusters(text):
    """Prepend, spacing marks, viramas, enclosing marks, modifiers, controls: the fast paths cut like \\X."""
    assert units(text) == text_diff._UNIT.findall(text)


@pytest.mark.parametrize(("old", "new", "removed", "added"), [
    ("flag 🇫🇷 here", "flag 🇫🇮 here", "🇫🇷", "🇫🇮"),
    ("a family 👨\u200d👩\u200d👧 here", "a family 👨\u200d👩\u200d👦 here",
     "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👦"),
    ("ok 👍🏽!", "ok 👍🏿!", "👍🏽", "👍🏿"),
    ("nai\u0308ve", "naive", "nai\u0308ve", "naive"),
])
def test_emoji_and_combining_marks_change_whole(old, new, removed, added):
    d = word_diff(old, new)
    assert [s.text for s in d.segments if s.op == DELETE] == [removed]
    assert [s.text for s in d.segments if s.op == INSERT] == [added]
    assert render_word_diff(d) == old.replace(removed, f"[-{removed}-]{{+{added}+}}")


# ------------------------------------------------------------------------------------- normalization
def test_nfc_and_nfd_of_the_same_text_are_normalization_only():
    nfc, nfd = "café naïve Ångström", unicodedata.normalize("NFD", "café naïve Ångström")
    assert nfc != nfd
    d = word_diff(nfc, nfd)
    assert d.normalization_only and not d.changed and not d.approximate
    assert [s.op for s in d.segments] == [EQUAL]
    assert d.old() == nfc and d.new() == nfd  # each side keeps its own form
    assert d.note() == NORMALIZATION_ONLY
    assert render_word_diff(d) == f"({NORMALIZATION_ONLY}) {nfd}"


def test_normalization_differences_inside_a_real_change_are_not_changes():
    d = word_diff("un café au lait", unicodedata.normalize("NFD", "un café au thé"))
    assert not d.normalization_only and d.changed
    assert [(s.op, s.text) for s in d.segments if s.op != EQUAL] == [
        (DELETE, "lait"), (INSERT, unicodedata.normalize("NFD", "thé"))]
    assert d.segments[0].old_text == "un café au "  # the old form, for the old side
    assert d.old() == "un café au lait"


def test_a_checklist_item_differing_only_by_normalization():
    def checklist(kp: str, crit: str) -> Checklist:
        return Checklist(items=[ChecklistItem(key_point=kp, weight=9, rubric=[
            RubricTier(score=9, criterion=crit), RubricTier(score=0, criterion="no")]), clarity_item()])

    old = checklist("Explains the café module", "Names the café")
    new = checklist(unicodedata.normalize("NFD", "Explains the café module"), unicodedata.normalize("NFD", "Names the café"))
    changes = diff_checklists(old, new)
    assert [c.status for c in changes] == [NORMALIZATION_ONLY, "unchanged"]
    assert (changes[0].old_index, changes[0].new_index) == (0, 0)  # matched as the same item
    text = render_diff_text(changes)
    assert f"#1 knowledge item: {NORMALIZATION_ONLY}" in text
    assert "[-" not in text and "{+" not in text


# --------------------------------------------------------------------------------------- never overflow
def test_140000_distinct_words_do_not_crash():
    """Past 0xF0000 + 140,000 the old mapping called chr() beyond 0x10FFFF."""
    old = " ".join(f"w{i}" for i in range(140_000))
    new = " ".join(f"w{i}" for i in range(140_000) if i % 20_000 != 7) + " tail"
    d = word_diff(old, new, timeout_s=0)  # no time limit: the exact diff
    assert d.old() == old and d.new() == new and not d.approximate
    assert [s.text for s in d.segments if s.op == INSERT] == [" tail"]
    assert len([s for s in d.segments if s.op == DELETE]) == 7


def test_the_code_points_used_are_never_surrogates():
    points = [cp for lo, hi in text_diff._RANGES for cp in range(lo, hi)]
    assert len(points) == len(set(points)) == text_diff._MAX_UNITS == 0x110000 - 0x800
    assert not [cp for cp in points if 0xD800 <= cp <= 0xDFFF]


def test_more_distinct_words_than_code_points_fall_back_to_sequence_matcher(monkeypatch):
    monkeypatch.setattr(text_diff, "_MAX_UNITS", 50)
    old = " ".join(f"w{i}" for i in range(200))
    new = " ".join(f"w{i}" for i in range(200) if i != 100)
    d = word_diff(old, new)
    assert d.old() == old and d.new() == new and not d.approximate
    assert [s.text for s in d.segments if s.op == DELETE] in (["w100 "], [" w100"])


# ------------------------------------------------------------------------------------------ timeouts
def _slow_pair() -> tuple[str, str]:
    import random

    rng = random.Random(3)
    old = [rng.choice(["alpha", "beta", "gamma", "delta", "eps"]) for _ in range(400)]
    new = [w if k % 5 else rng.choice(["zeta", "eta", "theta"]) for k, w in enumerate(old)]
    return " ".join(old), " ".join(new)


def test_a_diff_that_runs_out_of_time_is_approximate():
    old, new = _slow_pair()
    d = word_diff(old, new, timeout_s=1e-6)
    assert d.approximate and d.note() == APPROXIMATE
    assert d.old() == old and d.new() == new
    assert render_word_diff(d).startswith(f"({APPROXIMATE}) ")
    exact = word_diff(old, new, timeout_s=0)
    assert not exact.approximate and any(s.op == EQUAL for s in exact.segments)


def test_the_checklist_report_says_approximate():
    old, new = _slow_pair()
    a = Checklist(items=[ChecklistItem(key_point=old, weight=9, rubric=[RubricTier(score=9, criterion="x"),
                                                                           RubricTier(score=0, criterion="y")])])
    b = Checklist(items=[ChecklistItem(key_point=new, weight=9, rubric=[RubricTier(score=9, criterion="x"),
                                                                           RubricTier(score=0, criterion="y")])])
    changes = diff_checklists(a, b, timeout_s=1e-6)
    assert changes[0].approximate
    assert (changes[0].status, changes[0].old_index, changes[0].new_index) == ("changed", 0, 0)  # still matched
    text = render_diff_text(changes)
    assert f"key point: ({APPROXIMATE}) " in text
    assert text.splitlines()[-1].startswith(f"{APPROXIMATE}: a comparison took longer than 1e-06 s")


def test_a_cancelled_diff_stops():
    old, new = _slow_pair()
    t0 = time.perf_counter()
    with pytest.raises(DiffCancelled):
        word_diff(old, new, timeout_s=0, cancelled=lambda: True)
    assert time.perf_counter() - t0 < 1


@settings(max_examples=200, deadline=None)
@given(TEXTS, TEXTS)
def test_unit_overlap_bounds_the_similarity_from_above(old, new):
    """So checklist matching may skip the diff of items whose overlap is already below the threshold."""
    from benchwright.core.checklist_diff import similarity

    old, new = unicodedata.normalize("NFC", old), unicodedata.normalize("NFC", new)
    assert similarity(old, new) <= text_diff.unit_overlap(old, new) + 1e-9
