"""View objects (tui/services/views.py) built from a store, without the app."""

from __future__ import annotations

import dataclasses

import pytest
from services_helpers import checklist

from benchwright.core.errors import NotFoundError
from benchwright.core.importers import parse
from benchwright.core.review import CRITERIA, Criteria, Verdict
from benchwright.db import Progress
from benchwright.tui.services.views import ReviewView, review_view


def test_review_view_holds_what_the_screen_shows(project):
    store, ids = project
    store.save_checklist(ids[0], checklist(), author="lead", origin="imported")
    store.add_note(ids[0], "ada", "look at the factory")
    store.record_decision(ids[0], "ada", "accept", criteria=Criteria(verdicts={c: Verdict.PASS for c in CRITERIA}))

    view = review_view(store, ids[0], "ada")

    assert view.pair.id == ids[0] and view.pair.question == "Where is the app made?"
    assert view.text is not None and view.text.version == 1 and view.text.question == view.pair.question
    assert view.repository is not None and view.repository.name == "pkg"
    assert view.ordinal == 1 and view.viewer == "ada"
    assert view.decision is not None and view.decision.value == "accept"
    assert view.state_id == store.state_id(ids[0], "ada")
    assert all(view.criteria.verdicts[c] is Verdict.PASS for c in CRITERIA)
    assert view.note == "look at the factory"
    assert view.checklist is not None and view.checklist.version == 1
    assert view.others.total == 0
    assert [(str(e.citation), e.status) for e in view.evidence] == [
        ("src/pkg/app.py:12", "found"), ("src/pkg/gone.py", "missing")]
    assert view.progress == Progress(total=3, decided=1, mine=1)


def test_review_view_is_frozen_and_its_criteria_a_copy(project):
    store, ids = project
    view = review_view(store, ids[1], "ada")
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.note = "x"  # type: ignore[misc]
    view.criteria.verdicts["qa_consistency"] = Verdict.FAIL  # the screen marks criteria on its copy
    assert store.current_criteria(ids[1], "ada").verdicts["qa_consistency"] is None


def test_review_view_uses_the_progress_it_is_given(project):
    store, ids = project
    given = Progress(total=99, decided=7, mine=3)
    assert review_view(store, ids[1], "ada", progress=given).progress is given


def test_review_view_shows_the_current_text_version(project, tmp_path):
    store, ids = project
    data = tmp_path / "update.jsonl"
    data.write_text('{"question": "Question 2?", "answer": "A better answer 2."}\n')
    store.apply_import(parse("jsonl", data, repository="pkg"), annotator="lead", file_path=data, update=True)
    view = review_view(store, ids[1], "ada")
    assert view.text is not None and view.text.version == 2
    assert view.text.reference_answer == view.pair.reference_answer == "A better answer 2."


def test_review_view_applies_blind_mode(project):
    store, ids = project
    store.assign(["ada", "bob"], overlap=2, by="lead")  # turns blind mode on
    assert store.blind_mode
    store.save_checklist(ids[0], checklist(), author="lead", origin="imported")
    store.save_checklist(ids[0], checklist("Names bob's module"), author="bob", expected_version=1)
    store.record_decision(ids[0], "bob", "reject", notes="bob's reasons")

    before = review_view(store, ids[0], "ada")
    assert before.others.hidden == 1 and dict(before.others.shown) == {} and before.others.total == 1
    assert before.checklist is not None and before.checklist.version == 1  # bob's edit is hidden

    store.record_decision(ids[0], "ada", "accept")
    after = review_view(store, ids[0], "ada")
    assert after.others.hidden == 0 and list(after.others.shown) == ["bob"]
    assert after.others.shown["bob"].notes == "bob's reasons"
    assert after.checklist is not None and after.checklist.version == 2


def test_review_view_of_an_unknown_pair_raises(project):
    store, _ = project
    with pytest.raises(NotFoundError):
        review_view(store, "qa_nope", "ada")


def test_review_view_fields_are_documented():
    doc = ReviewView.__doc__ or ""
    assert all(f"{f.name}:" in doc for f in dataclasses.fields(ReviewView))


def test_statistics_view(project):
    from benchwright.tui.services.views import statistics_view

    store, ids = project
    store.assign(["ada", "bob"], overlap=2, by="lead")
    for pid in ids:
        store.record_decision(pid, "ada", "accept")
        store.record_decision(pid, "bob", "accept" if pid != ids[2] else "reject")
    view = statistics_view(store)
    assert view.progress == (("ada", 3, 3), ("bob", 3, 3))
    assert "decision" in view.agreement and view.agreement["decision"].n_items == 3
    assert view.checklists.n_pairs == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.progress = ()  # type: ignore[misc]


def test_adjudication_queue_and_view(project):
    from benchwright.tui.services.views import adjudication_queue, adjudication_view

    store, ids = project
    store.assign(["ada", "bob"], overlap=2, by="lead")
    store.save_checklist(ids[1], checklist(), author="lead", origin="imported")
    store.save_checklist(ids[1], checklist("ada's point"), author="ada", expected_version=1)
    store.save_checklist(ids[1], checklist("bob's point"), author="bob", expected_version=1, visible_to="bob")
    store.record_decision(ids[1], "ada", "accept")
    store.record_decision(ids[1], "bob", "reject")

    rows = adjudication_queue(store, "carol")  # a lead who never worked on the pair
    assert [(r.disagreement.qa_pair_id, r.ordinal) for r in rows] == [(ids[1], 2)]
    assert "decision" in rows[0].disagreement.fields
    assert adjudication_queue(store, "ada") == ()  # never one's own disagreement

    view = adjudication_view(store, ids[1])
    assert view.pair.id == ids[1] and view.ordinal == 2
    assert view.annotators == ("ada", "bob") and set(view.reviews) == {"ada", "bob"}
    assert [(v.author, v.checklist.items[0].key_point) for v in view.sides] == [
        ("ada", "ada's point"), ("bob", "bob's point")]


def test_adjudication_view_with_one_edit_compares_it_with_the_current_version(project):
    from benchwright.tui.services.views import adjudication_view

    store, ids = project
    store.save_checklist(ids[0], checklist(), author="lead", origin="imported")
    assert [v.version for v in adjudication_view(store, ids[0]).sides] == [1]
    store.save_checklist(ids[0], checklist("ada's point"), author="ada", expected_version=1)
    assert [v.version for v in adjudication_view(store, ids[0]).sides] == [2, 2]


def test_release_view_groups_the_excluded_pairs_by_reason(project):
    from benchwright.tui.services.views import release_view

    store, ids = project
    for pid in ids:
        store.save_checklist(pid, checklist(), author="lead", origin="imported")
    store.record_decision(ids[0], "ada", "accept")
    store.record_decision(ids[2], "ada", "reject")
    view = release_view(store)
    assert [c.pair.id for c in view.preflight.included] == [ids[0]]
    assert [(g.reason.value, g.pair_ids, g.first_ordinals) for g in view.excluded] == [
        ("not accepted (final decision: reject)", (ids[2],), (3,)), ("not reviewed", (ids[1],), (2,))]


def _entries(scores=(5, 4, 1)):
    from benchwright.core.judgment import ScoreEntry

    return [
        ScoreEntry(key="1", label="Names the module", kind="knowledge", score=scores[0], max=5, allowed=[0, 5]),
        ScoreEntry(key="2", label="Explains the order", kind="knowledge", score=scores[1], max=4, allowed=[0, 4]),
        ScoreEntry(key="3", label="Clarity & Organization", kind="clarity", score=scores[2], max=1, allowed=[0, 1]),
    ]


def test_inspector_views(project):
    from benchwright.tui.services.views import inspector_view, judge_runs_view, judges_of

    store, ids = project
    store.save_checklist(ids[0], checklist(), author="lead", origin="imported")
    aid = store.add_generated_answer(ids[0], "m1", "direct", "It is made in app.py.", extra={}, by="lead")
    first = store.save_judgment(aid, "checklist", "judge-a", entries=_entries(), checklist_version=1,
                                created_by="lead")
    store.save_judgment(aid, "checklist", "judge-a", entries=_entries((0, 4, 1)), checklist_version=1,
                        run_index=1, created_by="lead")
    store.add_override(first.id, "1", 0, "does not name it", "ada")

    view = inspector_view(store, ids[0])
    assert view.pair.id == ids[0] and view.ordinal == 1 and view.repository is not None
    assert list(view.answers) == [aid] and view.answers[aid].model == "m1"
    assert judges_of(store, aid) == (("checklist", "judge-a"),)

    runs = judge_runs_view(store, aid, "checklist", "judge-a")
    assert len(runs.grid.runs) == 2 and runs.failure_mode is None
    row = runs.grid.rows[0]
    assert row.key == "1" and row.scores == [5, 0] and row.effective == [0, 0] and row.overridden[0]

    from benchwright.core.judgment import FAILURE_MODES

    mode = next(iter(FAILURE_MODES))
    store.add_failure_mode(aid, mode, "misses the factory", "annotator", annotator="ada")
    assert judge_runs_view(store, aid, "checklist", "judge-a").failure_mode.mode == mode


def test_checklist_diff_view_offers_what_the_viewer_may_see(project):
    from benchwright.tui.services.views import checklist_diff_view

    store, ids = project
    assert checklist_diff_view(store, ids[0], "ada") == checklist_diff_view(store, ids[0]) and \
        not checklist_diff_view(store, ids[0]).versions
    store.assign(["ada", "bob"], overlap=2, by="lead")
    store.save_checklist(ids[0], checklist(), author="lead", origin="generated")
    store.save_checklist(ids[0], checklist("lead's edit"), author="lead", expected_version=1)
    store.save_checklist(ids[0], checklist("bob's point"), author="bob", expected_version=2, visible_to="bob")

    everyone = checklist_diff_view(store, ids[0])
    assert list(everyone.versions) == [1, 2, 3] and (everyone.left, everyone.right) == (1, 3)
    ada = checklist_diff_view(store, ids[0], "ada")
    assert list(ada.versions) == [1, 2] and (ada.left, ada.right) == (1, 2)  # bob's edit hidden
    store.record_decision(ids[0], "ada", "accept")
    assert list(checklist_diff_view(store, ids[0], "ada").versions) == [1, 2, 3]


def test_queue_progress(project):
    from benchwright.db import QueueFilter
    from benchwright.tui.services.views import queue_progress

    store, ids = project
    store.record_decision(ids[0], "ada", "accept")
    view = queue_progress(store, "ada", QueueFilter(status="undecided"))
    assert view.progress == Progress(total=3, decided=1, mine=1) and view.matching == 2


def test_checklist_editor_view_starts_from_what_the_editor_may_see(project):
    from benchwright.tui.services.views import checklist_editor_view

    store, ids = project
    assert checklist_editor_view(store, ids[0], "ada").base is None
    store.assign(["ada", "bob"], overlap=2, by="lead")
    store.save_checklist(ids[0], checklist(), author="lead", origin="imported")
    store.save_checklist(ids[0], checklist("bob's point"), author="bob", expected_version=1, visible_to="bob")
    view = checklist_editor_view(store, ids[0], "ada")
    assert view.pair.id == ids[0] and view.ordinal == 1 and view.base is not None and view.base.version == 1
    assert checklist_editor_view(store, ids[0], "bob").base.version == 2


def test_curation_view(project):
    from benchwright.tui.services.views import curation_view

    store, ids = project
    assert curation_view(store, ids[0]) == curation_view(store, ids[0]) and not curation_view(store, ids[0]).results
    store.save_curation_result(ids[0], "classify", status="ok", output={"category": "x"}, by="lead")
    store.save_checklist(ids[0], checklist(), author="lead", origin="imported")
    view = curation_view(store, ids[0])
    assert list(view.results) == ["classify"] and view.results["classify"].status == "ok" and view.has_checklist
