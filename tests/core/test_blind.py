"""The blind-mode rule (core/blind.py) over plain values: one rule for reviews, checklist versions and events."""

from __future__ import annotations

import pytest

from benchwright.core.blind import Sight, Visible, visible

ANNOTATORS = frozenset({"ada", "bob"})


def blind(viewer="ada", **kw) -> Sight:
    return Sight(viewer, True, False, kw.pop("assignees", ANNOTATORS), annotators=kw.pop("annotators", ANNOTATORS),
                 **kw)


def test_who_sees_others():
    assert Sight("ada", blind=False, submitted=False).sees_others
    assert Sight("ada", blind=True, submitted=True).sees_others
    assert not blind().sees_others  # an assignee before their review
    assert not Sight("ada", True, False).sees_others  # nobody assigned: everyone is an annotator
    assert blind("lead").sees_others  # an outsider to the pair
    assert not blind("lead", worked_on=True).sees_others  # ... unless they worked on it


@pytest.mark.parametrize(("author", "origin", "seen"), [
    ("bob", "edited", False), ("bob", "imported", False),  # another annotator's own work
    ("ada", "edited", True), ("ada", "imported", True),  # one's own
    ("bob", "generated", True), ("bob", "adjudicated", True),  # nobody's judgment
    ("lead", "edited", True), ("lead", "imported", True),  # not an annotator
])
def test_checklist_versions_and_their_events_follow_one_rule(author, origin, seen):
    sight = blind()
    assert sight.may_see_checklist(author, origin) is seen
    event = {"actor": author, "kind": "checklist", "before": {"version": 1}, "after": {"version": 2, "origin": origin}}
    assert sight.may_see_event(event) is seen  # the history says what the checklist panel says
    assert Sight("ada", True, True).may_see_checklist(author, origin)


def test_an_import_by_anyone_counts_as_an_annotators_work_when_nobody_is_assigned():
    sight = Sight("ada", True, False)
    assert not sight.may_see_checklist("lead", "imported")
    assert sight.may_see_checklist("lead", "generated")
    # with assignments, an author who has none is no annotator
    assert blind(annotators=frozenset()).may_see_checklist("lead", "imported")


@pytest.mark.parametrize("kind", ["review", "undo", "skip", "note"])
def test_review_events_are_hidden_like_the_reviews(kind):
    sight = blind()
    assert not sight.may_see_review("bob") and sight.may_see_review("ada")
    assert not sight.may_see_event({"actor": "bob", "kind": kind, "after": {}})
    assert sight.may_see_event({"actor": "ada", "kind": kind, "after": {}})


@pytest.mark.parametrize("kind", ["adjudication", "text"])
def test_adjudications_and_text_versions_stay_visible(kind):
    assert blind().may_see_event({"actor": "bob", "kind": kind, "after": None})


def test_visible_keeps_order_and_counts_the_hidden():
    shown = visible([1, 2, 3, 4, 5], lambda n: n % 2 == 1)
    assert shown == [1, 3, 5] and shown.hidden == 2 and isinstance(shown, Visible)
    assert Visible().hidden == 0
