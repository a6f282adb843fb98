"""Pair identity (core.models): white space and Unicode normalization never make two pairs of one text; different
words, case or paragraphs do. Ids of already-stored pairs are unchanged."""

from __future__ import annotations

import pytest

from benchwright.core.models import identity_text, pair_identity_key, qa_pair_id, question_identity_key


@pytest.mark.parametrize(("a", "b"), [
    ("first line\nsecond line", "first line   \nsecond line"),  # trailing spaces on an inner line
    ("first line\nsecond line", "first line\r\nsecond line\r\n"),  # CRLF
    ("first line\nsecond line", "first line\rsecond line"),  # old Mac line ends
    ("first line\nsecond line", "first line\u2028second line"),  # a Unicode line separator
    ("a b", "a \t\u00a0 b"),  # runs of horizontal white space, a no-break space
    ("  indented prose", "indented prose"),
    ("para one\n\npara two", "para one\n \n\n\t\npara two"),  # blank lines, some with spaces
    ("Caf\u00e9 \u212b", "Cafe\u0301 A\u030a"),  # precomposed vs decomposed (NFC)
    ("x", "\n\n x \n\n"),
])
def test_texts_that_differ_only_in_white_space_or_normalization_are_one_identity(a, b):
    assert identity_text(a) == identity_text(b)
    assert pair_identity_key("flask", "Q?", a) == pair_identity_key("flask", "Q?  ", b)
    assert question_identity_key("flask", a) == question_identity_key("flask", b)


@pytest.mark.parametrize(("a", "b"), [
    ("para one\n\npara two", "para one\npara two"),  # a paragraph break is content
    ("a b", "ab"),
    ("Returns None", "returns none"),
    ("x.", "x"),
])
def test_different_text_is_a_different_identity(a, b):
    assert pair_identity_key("flask", "Q?", a) != pair_identity_key("flask", "Q?", b)


def test_identity_covers_repository_question_and_answer_separately():
    keys = {pair_identity_key("flask", "Q", "A"), pair_identity_key("click", "Q", "A"),
            pair_identity_key("flask", "QA", ""), pair_identity_key("flask", "Q", None),
            pair_identity_key(None, "Q", "A")}
    assert len(keys) == 5
    assert pair_identity_key("flask", "Q", None) == pair_identity_key("flask", "Q", "   ")
    assert question_identity_key("flask", "Q") != question_identity_key("click", "Q")


def test_pair_ids_are_what_they_always_were():
    # ids stored in projects and releases stay valid: the id hashes the text stripped at its ends only
    assert qa_pair_id("flask", "Q?", "A\nB") == qa_pair_id("flask", " Q? ", "A\nB\n")
    assert qa_pair_id("flask", "Q?", "A\nB") != qa_pair_id("flask", "Q?", "A  \nB")
    assert qa_pair_id("flask", "How?", "So.") == "qa_" + __import__("hashlib").sha256(
        b"flask\x00How?\x00So.\x00").hexdigest()[:16]
