"""A generated checklist is checked against the rules once (issue 19 item 2): the step checks the model's output
(and keeps the model it built), the store keeps it as valid without checking it again; any other checklist given
to save_outcome / save_checklist is still checked."""

from __future__ import annotations

import asyncio

import pytest
from services_helpers import checklist

import benchwright.core.curation as curation
import benchwright.db.checklists as db_checklists
from benchwright.core.curation import PairInput, StepOutcome, StepSettings, generate_checklist
from benchwright.core.llm import LLMClient, MemoryLedger, ScriptedProvider
from benchwright.db.checklists import InvalidChecklistError
from benchwright.tui.services.curation_runs import save_outcome


def counting(monkeypatch, module) -> list[int]:
    calls: list[int] = []
    real = module.validate

    def validate(cl):
        calls.append(1)
        return real(cl)

    monkeypatch.setattr(module, "validate", validate)
    return calls


def test_a_generated_checklist_is_checked_once_from_the_model_output_to_the_store(project, monkeypatch):
    store, ids = project
    in_step, in_store = counting(monkeypatch, curation), counting(monkeypatch, db_checklists)
    client = LLMClient(ScriptedProvider([checklist().model_dump(mode="json")]), MemoryLedger())
    pair = store.get_pair(ids[1])
    out = asyncio.run(generate_checklist(client, PairInput(pair=pair, question=pair.question,
                                                           answer=pair.reference_answer or ""), StepSettings(model="g")))
    assert out.ok and out.checklist_checked and out.checklist == checklist() and len(in_step) == 1
    save_outcome(store, ids[1], out, by="runner")
    assert in_store == []  # not checked again
    v = store.checklist_version(ids[1])
    assert (v.is_valid, v.violations, v.origin, v.checklist) == (True, [], "generated", checklist())


def test_an_unchecked_checklist_is_still_checked_by_the_store(project):
    store, ids = project
    bad = checklist()
    bad.items[0].weight = 7  # knowledge weights no longer sum to 9
    with pytest.raises(InvalidChecklistError, match="weights sum to 11"):
        save_outcome(store, ids[2], StepOutcome("checklist", "ok", model="g", checklist=bad), by="runner")
    with pytest.raises(InvalidChecklistError):
        store.save_checklist(ids[2], bad, author="ann")
    assert store.checklist_version(ids[2]) is None
    saved = store.save_checklist(ids[2], bad, author="ann", draft=True)
    assert not saved.is_valid and saved.violations
