"""``benchwright generate doc-chunks|chunks|gold|audit|question`` through click's CliRunner with the scripted
provider (answer-first generation, Code-QA-Bench "Methodology" 3 and 4), and the old ``generate STEP``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.llm import ScriptedProvider
from benchwright.db import Store
from benchwright.tui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "services"))
from test_answer_first import FIXTURE, HOSTILE, VERIFIED, script


@pytest.fixture
def project(tmp_path, cli_env):
    repo = tmp_path / "shop"
    shutil.copytree(FIXTURE, repo)
    (repo / "docs" / "hostile.md").write_text(
        f"# {HOSTILE} heading\n\n" + f"The `place_order` function {HOSTILE} reserves stock. " * 8, encoding="utf-8")
    db = tmp_path / "proj" / "p.db"
    db.parent.mkdir()
    for args in (["init"], ["repos", "add", "shop", str(repo), "--version", "1.0"], ["repos", "strip", "shop"]):
        r = invoke(db, args)
        assert r.exit_code == 0, r.output
    return db


def invoke(db, args, provider=None):
    obj = {"provider_factory": (lambda config, role: provider)} if provider is not None else {}
    return CliRunner().invoke(main, ["--db", str(db), *args], obj=obj, catch_exceptions=False)


def test_doc_chunks_lists_the_best_chunks_and_hostile_text_is_printed_literally(project):
    r = invoke(project, ["generate", "doc-chunks", "--repo", "shop", "--top", "3"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("doc-chunks shop@1.0: 5 chunks found, 3 kept (run 1); weights length 0.2, ")
    assert len(lines) == 4 and "README.md:5-20  Placing an order" in lines[1]
    assert invoke(project, ["generate", "doc-chunks", "--repo", "shop"]).exit_code == 0  # run 2: all five kept
    listed = invoke(project, ["generate", "chunks", "--repo", "shop"]).output
    assert "\x1b" not in listed and "␛[31m" in listed and "[bold]x[/] [@click=app.quit]" in listed
    hostile = next(line for line in listed.splitlines() if "hostile.md" in line).split()[2]
    shown = invoke(project, ["generate", "chunks", "--show", hostile]).output
    assert "\x1b" not in shown and "# [bold]x[/] [@click=app.quit] ␛[31m heading" in shown
    chunk_id = lines[1].split()[1]
    shown = invoke(project, ["generate", "chunks", "--show", chunk_id]).output
    assert shown.startswith(f"{chunk_id} · shop · README.md:5-20 · markdown · Placing an order · score ")
    assert "references: shop.orders.place_order() ✓" in shown and "--- text\n## Placing an order" in shown


def test_bad_weight_and_unknown_repository_are_errors_not_tracebacks(project):
    r = invoke(project, ["generate", "doc-chunks", "--repo", "shop", "--weight", "nope=1"])
    assert r.exit_code == 1 and "unknown chunk feature 'nope'" in r.output
    r = invoke(project, ["generate", "doc-chunks", "--repo", "shop", "--weight", "prose"])
    assert r.exit_code == 2 and "give NAME=VALUE" in r.output
    r = invoke(project, ["generate", "doc-chunks", "--repo", "nope"])
    assert r.exit_code == 1 and "nope" in r.output
    r = invoke(project, ["generate", "gold", "--repo", "shop"], ScriptedProvider(script))
    assert r.exit_code == 0 and "no documentation chunks" in r.output


def test_the_whole_path_then_nothing_to_do(project):
    assert invoke(project, ["generate", "doc-chunks", "--repo", "shop", "--top", "2"]).exit_code == 0
    provider = ScriptedProvider(script)
    r = invoke(project, ["generate", "audit", "--repo", "shop", "--model", "m"], provider)
    assert r.exit_code == 0 and "2 chunks wait for gold (benchwright generate gold first)" in r.output
    r = invoke(project, ["generate", "gold", "--repo", "shop", "--model", "m", "--max-turns", "4"], provider)
    assert r.exit_code == 0, r.output
    assert "gold (code-derivable): 2 ok, 0 failed, 0 flagged; 4 calls made, 0 cached" in r.output
    r = invoke(project, ["generate", "audit", "--repo", "shop", "--model", "m"], provider)
    assert "audit (code-derivable): 2 ok" in r.output
    assert "  audit: 6 claims, 2 documentation-only removed, 0 rewritten" in r.output
    r = invoke(project, ["generate", "question", "--repo", "shop", "--model", "m"], provider)
    assert r.exit_code == 0 and "question (code-derivable): 2 ok" in r.output and "  pairs: #1 qa_" in r.output
    with Store.open(project) as store:
        pairs = [store.get_pair(i) for i in store.filtered_pair_ids("")]
    assert [(p.task_set, p.reference_answer) for p in pairs] == [("code-derivable", VERIFIED)]
    calls = len(provider.calls)
    for step in ("gold", "audit", "question"):
        r = invoke(project, ["generate", step, "--repo", "shop", "--model", "m"], provider)
        assert r.exit_code == 0 and "nothing to do (2 chunks done; --force runs them again)" in r.output
    assert len(provider.calls) == calls
    listed = invoke(project, ["generate", "chunks"]).output
    assert "[code-derivable: g✓ a✓ q✓→#1]" in listed
    shown = invoke(project, ["generate", "chunks", "--show", listed.split()[2]]).output
    assert "  [documentation-only] Callers must know about the missing rollback\n    → removed" in shown


def test_the_doc_dependent_path(project):
    invoke(project, ["generate", "doc-chunks", "--repo", "shop", "--top", "1"])
    provider = ScriptedProvider(script)
    r = invoke(project, ["generate", "audit", "--repo", "shop", "--model", "m"], provider)
    r = invoke(project, ["generate", "gold", "--doc-dependent", "--repo", "shop", "--model", "m"], provider)
    assert r.exit_code == 0 and "gold (doc-dependent): 1 ok" in r.output
    r = invoke(project, ["generate", "question", "--doc-dependent", "--repo", "shop", "--model", "m"], provider)
    assert r.exit_code == 0 and "question (doc-dependent): 1 ok" in r.output
    with Store.open(project) as store:
        (pid,) = store.filtered_pair_ids("")
        assert store.get_pair(pid).task_set == "doc-dependent"


def test_generate_with_a_curation_step_is_still_curation_run(project):
    r = CliRunner().invoke(main, ["--db", str(project), "generate", "classify", "--model", "g"])
    assert "deprecated" in r.stderr and "curation run" in r.stderr
    assert "classify: no pair matches the filter" in r.stdout


def test_the_review_screen_text_of_an_answer_first_pair_is_literal():
    from benchwright.tui.screens.review import answer_first_text

    view = {"task_set": "code-derivable", "chunk_text": None,
            "chunk": {"path": "README.md", "start_line": 5, "end_line": 20, "kind": "markdown", "title": HOSTILE},
            "audit": {"claims": [{"claim": HOSTILE, "verdict": "documentation-only", "evidence": "doc", "rewrite": ""},
                                 {"claim": "kept", "verdict": "documentation-only", "evidence": "x",
                                  "rewrite": "[i]rewritten[/i]"},
                                 {"claim": "code", "verdict": "code-recoverable", "evidence": "y", "rewrite": ""}],
                      "removed": 1, "rewritten": 1, "original_answer": "A b [red]c[/red].", "answer": "A b."}}
    text = answer_first_text(view)
    plain = text.plain
    assert "README.md:5-20 (markdown: [bold]x[/] [@click=app.quit] ␛[31m)" in plain
    assert "the chunk is no longer in this project" in plain
    assert "audit     3 claims, 1 documentation-only removed, 1 rewritten" in plain
    assert "  ✗ [bold]x[/] [@click=app.quit] ␛[31m\n    → removed" in plain
    assert "  ✗ kept\n    → [i]rewritten[/i]" in plain and "code-recoverable" not in plain
    assert "gold answer → verified answer\nA b [red]c[/red]." in plain  # the diff: old and new words, literally
    assert any("strike" in str(span.style) for span in text.spans)  # the removed words struck through
    assert "\x1b" not in plain
