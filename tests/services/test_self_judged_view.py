"""The judge inspector's view says when a judgment is self-evaluation (judge separation, RepoProbe §5.1.3): the
judge model wrote the answer, or generated the pair's current checklist."""

from __future__ import annotations

from services_helpers import checklist

from benchwright.core.judges import SelfJudging, generated_checklist_author
from benchwright.core.judgment import ScoreEntry
from benchwright.tui.services.views import judge_runs_view

ENTRIES = [ScoreEntry(key="1", label="Names the module", kind="knowledge", score=5, max=5, allowed=[0, 5]),
           ScoreEntry(key="2", label="Explains the order", kind="knowledge", score=4, max=4, allowed=[0, 4]),
           ScoreEntry(key="3", label="Clarity", kind="clarity", score=1, max=1, allowed=[0, 1])]


def test_judge_runs_view_names_self_judging(project, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    store, ids = project
    store.save_checklist(ids[0], checklist(), author=generated_checklist_author("gen"), origin="generated")
    store.save_checklist(ids[1], checklist(), author="lead", origin="imported")
    own = store.add_generated_answer(ids[1], "openai:judge-a", "direct", "mine", extra={}, by="lead")
    other = store.add_generated_answer(ids[1], "m1", "direct", "theirs", extra={}, by="lead")
    on_generated = store.add_generated_answer(ids[0], "m1", "direct", "on a generated checklist", extra={}, by="lead")
    for aid, model in ((own, "judge-a"), (other, "judge-a"), (on_generated, "GEN")):
        store.save_judgment(aid, "checklist", model, entries=ENTRIES, checklist_version=1, created_by="lead")
    assert judge_runs_view(store, own, "checklist", "judge-a").self_judged is SelfJudging.WROTE_ANSWER
    assert judge_runs_view(store, other, "checklist", "judge-a").self_judged is None
    assert judge_runs_view(store, on_generated, "checklist", "GEN").self_judged is SelfJudging.GENERATED_CHECKLIST
