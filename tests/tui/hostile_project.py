"""A project with hostile text in every field the app shows: markup that would crash (``[/]``, an unclosed
``[``), markup that would act or style (``[@click=app.quit]``, ``[link=...]``, ``[bold]``), ANSI and OSC 8
escapes. Used by tests/tui/test_literal_text.py; run as a script to build one for trying the app by hand:

    .venv/bin/python tests/tui/hostile_project.py /tmp/hostile     # then: benchwright --db /tmp/hostile/project.db review
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchwright.core.checklist import Checklist, ChecklistItem, RubricTier, clarity_item
from benchwright.core.importers import parse
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.models import Repository
from benchwright.core.probes import probe_fingerprint, read_probe_folder, sample_probe_dirs
from benchwright.core.probes.runner import ModuleResult, OracleRun
from benchwright.core.review import CRITERIA, Criteria, Verdict
from benchwright.db import Store

BREAKERS = ("[/]", "[unclosed")
"""Markup that raises ``MarkupError`` (or swallows text) when parsed."""

ACTORS = ("[bold]x[/bold]", "[link=https://x]y[/link]", "[@click=app.quit]x[/]")
"""Well-formed markup that would style, link or run an action when parsed."""

ANSI = "\x1b[31mred\x1b[0m"
OSC8 = "\x1b]8;;http://x\x1b\\y\x1b]8;;\x1b\\"

HOSTILE = " ".join((*BREAKERS, *ACTORS, ANSI, OSC8))
"""Every hostile form in one string: the app shows it literally or it crashes."""

LITERAL_MARKS = ("[/]", "[bold]x[/bold]", "[link=https://x]y[/link]", "[@click=app.quit]x[/]", "␛[31m")
"""What must appear on screen, as typed, where a hostile string is shown (``␛`` is ESC made visible)."""


def hostile(tag: str, text: str = HOSTILE) -> str:
    """``text`` after a short ``tag`` naming the field, so a test can tell which field it sees."""
    return f"{tag} {text}"


def make_hostile_project(root: Path, text: str = HOSTILE) -> dict:
    """Build ``root/project.db`` with ``text`` in every field shown by some screen. Returns a dict with
    ``db``, ``ids`` (pair ids in queue order), ``annotators`` (two hostile names, blind mode on),
    ``adjudicator``, ``probe_id``, ``answer_id``."""
    root.mkdir(parents=True, exist_ok=True)
    repo = root / "repo"
    (repo / "src" / "pkg").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "pkg" / "app.py").write_text("\n".join(f"x_{i} = {i!r}  # {text}" for i in range(1, 60)) + "\n")
    repo_name = hostile("repo", text)
    records = [
        {"question": hostile(f"question {i}", text) + "?", "answer": hostile(f"answer {i}", text)
         + " See `src/pkg/app.py:12`.", "qa_type": "Why", "qa_subtype": hostile("subtype", text),
         "category": hostile("category", text), "theme": hostile("theme", text),
         "cluster_id": hostile("cluster", text), "cluster_name": hostile("cluster name", text),
         "language": hostile("language", text)}
        for i in range(1, 4)
    ]
    data = root / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    db = root / "project.db"
    a, b = hostile("ada", text), hostile("bob", text)
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name=repo_name, version_label=hostile("v", text), local_path=str(repo)),
                             "setup")
        mapping = tuple(f"{k}={k}" for k in ("qa_type", "qa_subtype", "category", "theme", "cluster_id",
                                             "cluster_name", "language"))
        result = parse("jsonl", data, repository=repo_name, mapping=mapping)
        assert not result.problems, result.problems
        store.apply_import(result, annotator="setup", file_path=data)
        ids = [row.id for row in store.queue_page("setup", limit=100)]
        store.assign([a, b], 2, by="lead")  # blind mode: each edits in their own line

        def checklist(who: str) -> Checklist:
            return Checklist(items=[
                ChecklistItem(key_point=hostile(f"key point of {who}", text), weight=5, rubric=[
                    RubricTier(score=5, criterion=hostile("criterion full", text)),
                    RubricTier(score=0, criterion=hostile("criterion none", text))]),
                ChecklistItem(key_point=hostile("second key point", text), weight=4, rubric=[
                    RubricTier(score=4, criterion=hostile("criterion yes", text)),
                    RubricTier(score=0, criterion=hostile("criterion no", text))]),
                clarity_item(),
            ])

        for pid in ids:
            store.save_checklist(pid, checklist("llm"), author=hostile("author", text), origin="generated")
        store.save_checklist(ids[0], checklist("ada"), author=a, expected_version=1, visible_to=a)
        store.save_checklist(ids[0], checklist("bob"), author=b, expected_version=1, visible_to=b)
        good, bad = Criteria(), Criteria()
        for name in CRITERIA:
            good.verdicts[name], bad.verdicts[name] = Verdict.PASS, Verdict.FAIL
            good.notes[name] = bad.notes[name] = hostile(f"note on {name}", text)
        store.record_decision(ids[0], a, "accept", criteria=good, notes=hostile("decision note", text))
        store.record_decision(ids[0], b, "revise", criteria=bad, notes=hostile("decision note", text))
        for who in (a, b):
            store.add_note(ids[0], who, hostile("pair note", text))
        store.add_note(ids[0], "ann", hostile("pair note", text))

        # Answers, judgments, an override, a failure mode.
        trajectory = [  # benchwright's agent format (core/agent/model.py Turn.as_json), hostile everywhere
            {"index": 1, "text": hostile("turn text", text), "usage": {"input_tokens": 10, "output_tokens": 2},
             "cached": False, "elided": [hostile("elided id", text)], "context_tokens": 12, "call_ids": [],
             "tool_uses": [{"call_id": "c1", "name": hostile("tool", text), "arguments": {"q": hostile("arg", text)},
                            "output": hostile("tool output", text) + "\n" + text, "ok": False, "truncated": True,
                            "arguments_raw": None, "elided_at_turn": 1}]}]
        store.import_answers([AnswerRecord(line=1, text=hostile("model answer", text) + " `src/pkg/app.py:3`",
                                           pair_ref=ids[0], trajectory=trajectory,
                                           extra={"citations": {"resolving": 0, "not_resolving": 1, "items": [
                                               {"cited": hostile("cited", text), "status": "missing",
                                                "path": None, "resolves": False}]}})],
                             model=hostile("model", text), condition="agentic", created_by="t")
        (answer,) = store.answers(pair_id=ids[0])
        entries = [
            {"key": "1", "label": hostile("label 1", text), "kind": "knowledge", "score": 5, "max": 5,
             "allowed": [0, 5], "rationale": hostile("rationale 1", text)},
            {"key": "2", "label": hostile("label 2", text), "kind": "knowledge", "score": 0, "max": 4,
             "allowed": [0, 4], "rationale": hostile("rationale 2", text)},
            {"key": "3", "label": "Clarity & Organization", "kind": "clarity", "score": 1, "max": 1,
             "allowed": [0, 1], "rationale": hostile("rationale 3", text)},
        ]
        j1 = store.save_judgment(answer.id, "checklist", hostile("judge model", text), entries=entries, run_index=0,
                                 checklist_version=1, critique=hostile("critique", text), created_by="t")
        store.save_judgment(answer.id, "checklist", hostile("judge model", text),
                            entries=[{**e, "score": 0} for e in entries], run_index=1, checklist_version=1,
                            created_by="t")
        store.add_override(j1.id, "1", 0, hostile("override reason", text), a)
        store.add_failure_mode(answer.id, "hallucination", hostile("failure rationale", text), "annotator",
                               annotator=a)

        # A probe whose id, title, variants and modules are hostile, with one recorded run.
        probe, variants = read_probe_folder(next(p for p in sample_probe_dirs() if p.name == "token_clock"))
        modules = [m.model_copy(update={"name": hostile(f"module {i}", text)})
                   for i, m in enumerate(probe.pipeline.modules)]
        probe = probe.model_copy(update={"id": hostile("probe", text), "title": hostile("probe title", text),
                                          "pipeline": probe.pipeline.model_copy(update={"modules": modules})})
        variants = [v.model_copy(update={"name": hostile(f"variant {i}", text)}) for i, v in enumerate(variants)]
        fingerprint = probe_fingerprint(probe, variants)
        store.save_probe(probe, variants, fingerprint, by="t")
        run = OracleRun(probe_id=probe.id, variant=variants[0], outcome="fail", expected=variants[0].expected,
                        matches_expectation=variants[0].expected == "fail",
                        modules=[ModuleResult(name=modules[0].name, module_name=modules[0].module_name, passed=False,
                                              reason=hostile("reason", text), log=hostile("log", text))],
                        apply_error=hostile("apply error", text))
        store.record_run(run, fingerprint=fingerprint, by="t")
        store.sign_off(probe.id, a, "not-signed-off", hostile("sign-off reason", text))
        store.save_curation_result(ids[0], "classify", status="ok", flagged=True, by="t",
                                   output={"rationale": hostile("classify rationale", text),
                                           "code_understanding_relevant": False, "category": hostile("cat", text)})
    return {"db": db, "ids": ids, "annotators": [a, b], "adjudicator": hostile("lead", text),
            "probe_id": probe.id, "answer_id": answer.id}


if __name__ == "__main__":  # pragma: no cover - a helper for trying the app by hand
    made = make_hostile_project(Path(sys.argv[1]))
    print(made["db"])
    print("annotators:", *(json.dumps(x) for x in made["annotators"]))
