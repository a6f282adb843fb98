"""Issue 13 items 1 and 2: one registry per vocabulary in core (judges, steps, failure modes, categories, entry
kinds, conditions), its live views, and the judge rules that read it (eligibility, resume, the judgment value)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from benchwright.core import curation, judging, judgment, metrics, vocabulary
from benchwright.core.judges import (
    JUDGE_REGISTRY,
    JUDGES,
    Ineligible,
    JudgeKind,
    JudgeSpec,
    checklist_problem,
    judge_eligibility,
    register_judge,
    run_is_done,
)
from benchwright.core.judgment import JudgmentError, NewJudgment, ScoreEntry, entries_json_schema
from benchwright.core.registry import Names, Registry, UnknownNameError
from benchwright.core.steps import STEP_REGISTRY, STEP_ROLES, STEPS


@dataclass(frozen=True)
class Version:
    is_draft: bool = False
    is_valid: bool = True


@pytest.fixture
def strict_toy():
    spec = register_judge(JudgeSpec("strict-toy", "a toy judge that needs a checklist", JudgeKind.SCALAR,
                                    dimensions=("d",), scale=3, allowed=(0, 1, 2, 3), needs_checklist=True,
                                    template_id="judge_toy"))
    yield spec
    JUDGE_REGISTRY.unregister("strict-toy")


def test_each_vocabulary_is_declared_once_and_the_old_names_are_its_views():
    assert judgment.JUDGES is JUDGES and metrics.JUDGES is JUDGES
    assert judging.JUDGES == ("checklist", "swe-qa-pro", "code-qa-bench")  # the LLM judges
    assert JUDGES == ("checklist", "swe-qa-pro", "code-qa-bench", "imported", "human")  # human: issue 20, not an LLM judge
    assert metrics.SCALAR_JUDGES == ("swe-qa-pro", "code-qa-bench", "imported")
    assert judgment.FAILURE_MODES is vocabulary.FAILURE_MODES and metrics.FAILURE_MODES is vocabulary.FAILURE_MODES
    assert judgment.CONDITIONS is vocabulary.CONDITIONS and curation.CATEGORIES is vocabulary.CATEGORIES
    assert curation.STEPS is STEPS and STEPS == ("images", "classify", "enrich", "refine", "checklist", "verify")
    assert dict(STEP_ROLES) == {"images": None, "classify": "generator", "enrich": "generator",
                                "refine": "generator", "checklist": "generator", "verify": "verifier"}
    assert dict(metrics.FAILURE_MODE_NAMES)["context-miss"] == "Context Miss"
    assert dict(judging.DEFAULT_RUNS) == {"checklist": 1, "swe-qa-pro": 3, "code-qa-bench": 1}
    assert dict(judgment.SCALAR_SCALES) == {"swe-qa-pro": 10, "code-qa-bench": 5}
    assert entries_json_schema()["$defs"]["ScoreEntry"]["properties"]["kind"]["enum"] == list(vocabulary.ENTRY_KINDS)
    assert curation.CLASSIFY_SCHEMA["properties"]["category"]["enum"] == list(vocabulary.CATEGORIES)
    assert judging.FAILURE_MODE_SCHEMA["properties"]["mode"]["enum"] == list(vocabulary.FAILURE_MODES)
    assert all(STEP_REGISTRY.get(s).run is not None for s in STEPS)  # core.curation attached every coroutine


def test_views_are_live_and_registrations_are_checked(strict_toy):
    assert "strict-toy" in JUDGES and JUDGES[-1] == "strict-toy" and "strict-toy" in judging.JUDGES
    assert "strict-toy" in judging.SCALAR_DIMENSIONS and judging.DEFAULT_RUNS["strict-toy"] == 1
    with pytest.raises(ValueError, match="already registered"):
        register_judge(strict_toy)
    with pytest.raises(ValueError, match="needs dimensions"):
        JudgeSpec("half", "no dimensions", JudgeKind.SCALAR)
    reg: Registry = Registry("colour")
    names = Names(reg)
    assert names == () and not names
    reg.register(vocabulary.Term("red", "Red"))
    assert names == ("red",) and list(names) == ["red"] and (*names, "blue") == ("red", "blue")
    with pytest.raises(UnknownNameError, match="unknown colour 'blue'; use one of red"):
        reg.get("blue")


def test_judge_eligibility_gives_structured_reasons(strict_toy):
    ok = Version()
    assert judge_eligibility("swe-qa-pro", has_reference=True, checklist=None) is None
    assert judge_eligibility("swe-qa-pro", has_reference=False, checklist=ok) is Ineligible.NO_REFERENCE
    assert judge_eligibility("checklist", has_reference=True, checklist=None) is Ineligible.NO_CHECKLIST
    assert judge_eligibility("checklist", has_reference=True, checklist=Version(is_draft=True)) \
        is Ineligible.DRAFT_CHECKLIST
    assert judge_eligibility("checklist", has_reference=True, checklist=Version(is_valid=False)) \
        is Ineligible.INVALID_CHECKLIST
    assert judge_eligibility("checklist", has_reference=True, checklist=ok) is None
    # the rule follows the spec, not the judge's name
    assert judge_eligibility("strict-toy", has_reference=True, checklist=None) is Ineligible.NO_CHECKLIST
    assert checklist_problem(ok) is None and Ineligible.NO_CHECKLIST == "no checklist"
    with pytest.raises(UnknownNameError):
        judge_eligibility("nope", has_reference=True, checklist=ok)


def test_a_run_is_done_when_scored_and_against_the_current_checklist_if_the_judge_needs_one():
    assert run_is_done("checklist", scored=True, judged_version=2, checklist_version=2)
    assert not run_is_done("checklist", scored=True, judged_version=1, checklist_version=2)
    assert not run_is_done("checklist", scored=False, judged_version=2, checklist_version=2)
    assert run_is_done("code-qa-bench", scored=True, judged_version=None, checklist_version=2)


def _entry(score, key="correctness"):
    return ScoreEntry(key=key, kind="dimension", score=score, max=10, allowed=list(range(1, 11)))


def test_a_judgment_to_store_is_one_value_validated_in_core():
    j = NewJudgment.of("ans_1", "swe-qa-pro", "j1", entries=[_entry(8), _entry(6, "clarity").model_dump()],
                       run_index=2, seed=7, call_ids=[3, "4"])
    assert (j.score_rate, j.run_index, j.seed, j.call_ids) == (0.7, 2, 7, (3, 4))
    assert all(isinstance(e, ScoreEntry) for e in j.entries)
    unscored = NewJudgment.of("ans_1", "checklist", "j1", entries=[], status="unscored", reason="invalid output")
    assert unscored.score_rate is None
    bad = [
        ({"judge": "rubric"}, "unknown judge 'rubric'"),
        ({"judge_model": " "}, "judge model"),
        ({"status": "maybe"}, "unknown judgment status"),
        ({"run_index": -1}, "run index"),
        ({"entries": [_entry(8), _entry(7)]}, "score keys repeat"),
        ({"entries": [_entry(None)]}, "needs every score"),
        ({"entries": [{"key": "x", "kind": "vibe", "max": 1}]}, "invalid score entry"),
        ({"status": "unscored", "entries": []}, "needs the reason"),
    ]
    for change, message in bad:
        args = {"judge": "swe-qa-pro", "judge_model": "j1", "entries": [_entry(8)], **change}
        with pytest.raises(JudgmentError, match=message):
            NewJudgment.of("ans_1", args.pop("judge"), args.pop("judge_model"), **args)


def test_ledger_statuses_of_reason_kinds_is_public():
    assert judging.ledger_statuses(["truncated", "invalid output"]) == ["invalid", "truncated"]
    assert judging.REASON_KINDS[judging.CallStatus.REFUSED] == "refused"
