"""The store's reads filtered for a viewer (blind mode, core/blind.py): events, checklist versions, others'
reviews, disagreements, each saying how many it held back."""

from __future__ import annotations

import pytest
from store_helpers import IDS

from benchwright.core.blind import HiddenInBlindMode
from benchwright.core.checklist import Checklist, ChecklistItem, ItemKind, binary_rubric, clarity_item
from benchwright.core.errors import NotFoundError

P = IDS[0]


def checklist(tag: str) -> Checklist:
    return Checklist(items=[*(ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=f"point {n} {tag}", weight=3,
                                            rubric=binary_rubric(3)) for n in range(3)), clarity_item()])


@pytest.fixture
def blind(loaded):
    """ada and bob have every pair; on P a generated checklist, bob's import, bob's review and note, and a
    lead's import (no annotator: visible)."""
    loaded.assign(["ada", "bob"], 2, by="lead")
    loaded.save_checklist(P, checklist("gen"), author="llm", origin="generated")
    loaded.import_checklists([(P, checklist("bob"), "jsonl")], author="bob")
    loaded.record_decision(P, "bob", "reject")
    loaded.import_checklists([(P, checklist("lead"), "jsonl")], author="lead")
    return loaded


def test_reads_for_a_viewer_before_and_after_their_review(blind):
    assert list(blind.visible_checklist_versions(P, "ada")) == [1, 3]
    assert blind.visible_checklist_versions(P, "ada").hidden == 1
    assert [v.version for v in blind.checklist_history(P, viewer="ada")] == [1, 3]
    assert blind.checklist_version_for(P, "ada").version == 3
    with pytest.raises(HiddenInBlindMode) as hidden:
        blind.checklist_version_for(P, "ada", 2)
    assert (hidden.value.qa_pair_id, hidden.value.version) == (P, 2)
    with pytest.raises(NotFoundError):
        blind.checklist_version_for(P, "ada", 9)
    events = blind.events_of(P, viewer="ada")
    assert [(e["actor"], e["kind"]) for e in events] == [("llm", "checklist"), ("lead", "checklist")]
    assert events.hidden == 2 and len(blind.events_of(P)) == 4
    others = blind.others_reviews(P, "ada")
    assert list(others) == [] and others.hidden == 1

    blind.record_decision(P, "ada", "accept")
    assert list(blind.visible_checklist_versions(P, "ada")) == [1, 2, 3]
    assert blind.events_of(P, viewer="ada").hidden == 0
    others = blind.others_reviews(P, "ada")
    assert [r.annotator for r in others] == ["bob"] and others.hidden == 0
    assert [d.qa_pair_id for d in blind.disagreements(viewer="carl")] == [P]
    assert blind.disagreements(viewer="lead") == []  # the lead imported a checklist of P: they worked on it
    assert blind.disagreements(viewer="ada") == []  # one's own disagreement is someone else's to adjudicate


def test_a_viewer_sees_every_version_of_their_own_and_none_hidden_when_only_others_exist(blind):
    assert list(blind.visible_checklist_versions(P, "bob")) == [1, 2, 3]
    fresh = IDS[1]
    blind.import_checklists([(fresh, checklist("bob"), "jsonl")], author="bob")
    with pytest.raises(HiddenInBlindMode):
        blind.checklist_version_for(fresh, "ada")
    assert blind.checklist_version_for(IDS[2], "ada") is None  # no checklist at all
