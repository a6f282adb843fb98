"""The stale-checklist rule over two text versions (core.models.checklist_stale) and its wording."""

from benchwright.core.models import PairText, checklist_stale, stale_checklist_note


def text(version: int, question: str, answer: str | None = "A.") -> PairText:
    return PairText(qa_pair_id="qa_1", version=version, origin="original" if version == 1 else "refined",
                    question=question, reference_answer=answer, created_at="2026-01-01T00:00:00+00:00")


def test_a_checklist_from_an_older_different_text_is_stale():
    assert checklist_stale(text(1, "How?"), text(2, "How does X work?"))
    assert checklist_stale(text(1, "How?", "A."), text(3, "How?", "B."))


def test_the_same_text_white_space_aside_or_the_current_version_is_not_stale():
    assert not checklist_stale(text(2, "How?"), text(2, "How?"))
    assert not checklist_stale(text(1, "How?"), text(3, "How?  \r\n"))  # a revert to it, or re-spaced
    assert not checklist_stale(text(3, "Why?"), text(2, "How?"))  # made from a later text (a merge)
    assert not checklist_stale(None, text(2, "How?"))


def test_wording():
    assert stale_checklist_note(2, 3) == "made from text version 2; the text is now version 3"
