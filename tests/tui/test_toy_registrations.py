"""Issue 13 item 1: a new judge is one registration in core plus its prompt, and a new curation step one
registration. A toy judge and a toy step registered here (nothing else changed) are CLI choices, named in the help,
accepted by the store on write, run over the scripted provider, and in the report."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchwright.core.curation import StepOutcome
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.judges import JUDGE_REGISTRY, JudgeKind, JudgeSpec, register_judge
from benchwright.core.llm import ScriptedProvider
from benchwright.core.steps import STEP_REGISTRY, StepSpec, register_step
from benchwright.db import Store
from benchwright.tui.cli import main

TOY_JUDGE = JudgeSpec("toy", "grounding and brevity, 0-2, a toy judge", JudgeKind.SCALAR,
                      dimensions=("grounding", "brevity"), scale=2, allowed=(0, 1, 2), template_id="judge_toy")
TOY_PROMPT = ("Score the candidate on grounding and brevity, 0-2 each.\n$question\n$reference_answer\n"
              "$candidate_answer\n")


@pytest.fixture
def toy_judge():
    register_judge(TOY_JUDGE)
    yield TOY_JUDGE
    JUDGE_REGISTRY.unregister("toy")


@pytest.fixture
def answered(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    db, ids = project_factory(tmp_path, n=3)
    with Store.open(db) as store:
        store.import_answers([AnswerRecord(line=i + 1, text=f"answer {i}", pair_ref=pid) for i, pid in enumerate(ids)],
                             model="m1", condition="closed-book", created_by="setup")
    return db, ids


def invoke(db, args, provider=None):
    obj = {"provider_factory": (lambda config, role: provider)} if provider is not None else {}
    return CliRunner().invoke(main, ["--db", str(db), *args], obj=obj, catch_exceptions=False)


def test_a_toy_judge_is_one_registration_plus_its_prompt(toy_judge, answered, tmp_path):
    db, _ = answered
    help_text = invoke(db, ["judgments", "run", "--help"]).output
    assert "toy (grounding and brevity, 0-2, a toy judge)" in help_text  # help text from the registry
    assert "toy 1" in help_text  # its default runs
    (db.parent / "prompts").mkdir()
    (db.parent / "prompts" / "judge_toy.md").write_text(TOY_PROMPT, encoding="utf-8")
    provider = ScriptedProvider(lambda req: {"grounding": {"rationale": "cites app.py", "score": 2},
                                             "brevity": {"rationale": "long", "score": 1}})
    r = invoke(db, ["judgments", "run", "toy", "--model", "j1", "--as", "alice"], provider)
    assert r.exit_code == 0, r.output
    assert "judge toy: 3 scored, 0 unscored" in r.output
    assert provider.calls[0].json_schema["required"] == ["grounding", "brevity"]
    assert "Score the candidate on grounding and brevity" in provider.calls[0].messages[0].content
    with Store.open(db) as store:
        judgments = store.judgments(judge="toy")
        assert [(j.status, j.score_rate, j.scale_max) for j in judgments] == [("scored", 0.75, 2)] * 3
        assert [e.key for e in judgments[0].entries] == ["grounding", "brevity"]
    again = invoke(db, ["judgments", "run", "toy", "--model", "j1", "--as", "alice"], provider)
    assert again.exit_code == 0 and "nothing to do" in again.output  # resumes like any judge
    report = invoke(db, ["report", "--judge", "toy", "--json", str(tmp_path / "r.json")])
    assert report.exit_code == 0, report.output
    assert "Scalar judge toy (0-2 per dimension, final = mean/2)" in report.output
    data = json.loads((tmp_path / "r.json").read_text())
    assert [(r["judge"], r["overall_pct"]) for r in data["summary"]] == [("toy", 75.0)]
    assert [d["key"] for d in data["scalar"][0]["dimensions"]] == ["grounding", "brevity"]


def test_without_the_registration_the_toy_judge_is_refused_everywhere(answered):
    db, _ = answered
    r = invoke(db, ["judgments", "run", "toy", "--model", "j1"])
    assert r.exit_code == 2 and "'toy' is not one of" in r.output
    with Store.open(db) as store, pytest.raises(Exception, match="unknown judge 'toy'"):
        store.save_judgment(store.answers()[0].id, "toy", "j1", entries=[], status="unscored", reason="x",
                            created_by="alice")


def test_a_toy_curation_step_is_one_registration(answered):
    db, ids = answered

    async def shout(client, item, settings):
        r = await client.call(_request(item, settings), force=settings.force, purpose="shout",
                              qa_pair_id=item.pair.id)
        out = StepOutcome("shout", "ok" if r.ok else "failed", template_hash=None)
        out.add(r)
        out.output = {"loud": str(r.parsed).upper()}
        return out

    register_step(StepSpec("shout", "Toy", "shout the question", "generator", (), "the question, loud", run=shout))
    try:
        help_text = invoke(db, ["curation", "run", "--help"]).output
        assert "shout" in help_text
        provider = ScriptedProvider(lambda req: "where?")
        r = invoke(db, ["curation", "run", "shout", "--model", "g1", "--as", "alice"], provider)
        assert r.exit_code == 0, r.output
        with Store.open(db) as store:
            assert store.curation_current(ids[0])["shout"].output == {"loud": "WHERE?"}
            assert store.curation_counts()["shout"]["ok"] == 3
    finally:
        STEP_REGISTRY.unregister("shout")


def _request(item, settings):
    from benchwright.core.llm.base import ChatMessage, LLMRequest

    return LLMRequest(model=settings.model, system="toy", messages=(ChatMessage("user", item.question),),
                      json_schema=None, schema_name="toy", params=dict(settings.params))
