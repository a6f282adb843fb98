"""``benchwright probes import-results``, ``probes report`` and ``probes attempt`` as a user runs them."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.probes import sample_probe_dirs
from benchwright.tui.cli import main

NITR_DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr" / "docs"


def run(*args):
    return CliRunner(env={"COLUMNS": "250"}).invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "p.db"
    assert run("--db", path, "init").exit_code == 0
    return path


def test_import_and_report_the_shared_matrix(db, tmp_path):
    matrix = NITR_DOCS / "model_case_pass_matrix.csv"
    if not matrix.is_file():
        pytest.skip(f"real data {NITR_DOCS} is absent (the shared data folder ../shared/data is not checked out here)")
    first = run("--db", db, "probes", "import-results", matrix)
    assert first.exit_code == 0, first.output
    assert "507 verdicts of 23 configurations: 507 added, 0 already present" in first.output
    assert "design_matrix.md, cases.md (44 cases recorded or changed)" in first.output
    again = run("--db", db, "probes", "import-results", matrix.parents[1])  # the checkout's root reads the same
    assert "0 added, 507 already present" in again.output
    out = run("--db", db, "probes", "report", "--csv", tmp_path / "csv", "--json", tmp_path / "r.json")
    assert out.exit_code == 0, out.output
    assert "123/230 53.5 %" in out.output and "52/253 20.6 %" in out.output
    assert "53/120 44.2 %" in out.output and "34/121 28.1 %" in out.output
    assert "2/46 4.3 %" in out.output and "saturated" in out.output and "unsolved" in out.output
    assert "left out of the aggregates" in out.output and "all but Gemini 3.1 Pro (Agt)" in out.output
    with (tmp_path / "csv" / "dimensions.csv").open() as f:
        rows = {r["key"]: r for r in csv.DictReader(f)}
    assert (rows["D6"]["passes"], rows["D6"]["total"]) == ("2", "46")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["granularity"][0]["by_regime"]["api"] == {"passes": 53, "total": 120, "rate": 53 / 120}


def test_a_row_whose_counts_disagree_is_an_error_naming_it(db, tmp_path):
    bad = tmp_path / "m.csv"
    bad.write_text("model,001,002,pass_count,total_count\nA (API),pass,fail,2,2\n", encoding="utf-8")
    out = run("--db", db, "probes", "import-results", bad)
    assert out.exit_code == 1
    assert "line 2, field 'pass_count': says 2, but the row has 1 pass cell" in out.output
    assert "Traceback" not in out.output
    assert "no model results yet" in run("--db", db, "probes", "report").output


def test_a_changed_verdict_needs_update(db, tmp_path):
    m = tmp_path / "m.csv"
    m.write_text("model,001\nA (API),fail\n", encoding="utf-8")
    run("--db", db, "probes", "import-results", m)
    m.write_text("model,001\nA (API),pass\n", encoding="utf-8")
    out = run("--db", db, "probes", "import-results", m)
    assert "1 verdict differ" in out.output and "line 2: A (API), case 001: fail -> pass" in out.output
    assert "1 updated" in run("--db", db, "probes", "import-results", m, "--update").output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to diff the trees")
def test_an_attempt_from_the_command_line(db, tmp_path):
    folder = sample_probe_dirs()[1]  # token_clock: an "agent" that writes the intended patch into the tree
    assert run("--db", db, "probes", "import", folder / "case", folder / "evaluator").exit_code == 0
    apply = tmp_path / "apply.py"
    apply.write_text("import subprocess, sys\nsubprocess.run(['git', 'apply', sys.argv[1]], cwd=sys.argv[2], check=True)\n")
    agent = f"{sys.executable} {apply} {folder / 'variants' / 'intended' / 'patch.diff'} {{tree}}"
    out = run("--db", db, "probes", "attempt", "token-clock", "--config", "Fake", "--regime", "api",
              "--agent-command", agent, "--out", tmp_path / "att")
    assert out.exit_code == 0, out.output
    assert "step 1 (TASK.md): ok" in out.output and "verdict: pass" in out.output
    assert (tmp_path / "att" / "step-1" / "tokens" / "issuer.py").is_file()
    report = run("--db", db, "probes", "report")
    assert "Fake (API)" in report.output and "1/1 100.0 %" in report.output
    failing = run("--db", db, "probes", "attempt", "token-clock", "--config", "Fake", "--regime", "api",
                  "--agent-command", "false", "--out", tmp_path / "att2")
    assert failing.exit_code == 1 and "the agent command failed: exit code 1" in failing.output
    both = run("--db", db, "probes", "attempt", "token-clock", "--config", "F", "--regime", "api")
    assert both.exit_code == 1 and "give either --submission DIR or --agent-command CMD" in both.output


def test_configuration_names_print_literally(db, tmp_path):
    m = tmp_path / "m.csv"
    m.write_text('model,001\n"[bold]M[/] (API)",pass\n"[/]\x1b[31mN (Agt)",fail\n', encoding="utf-8")
    assert run("--db", db, "probes", "import-results", m).exit_code == 0
    out = run("--db", db, "probes", "report")
    assert out.exit_code == 0, out.output
    assert "[bold]M[/] (API)" in out.output and "\x1b" not in out.output and "␛[31mN (Agt)" in out.output


def test_report_selects_configurations_and_cases(db, tmp_path):
    m = tmp_path / "m.csv"
    m.write_text("model,001,002,003\nA (API),pass,fail,pass\nB (Agt),pass,N/A,N/A\n", encoding="utf-8")
    run("--db", db, "probes", "import-results", m)
    assert "3/3 100.0 %" not in run("--db", db, "probes", "report").output
    only_a = run("--db", db, "probes", "report", "--config", "A (API)")
    assert "2/3 66.7 %" in only_a.output and "B (Agt)" not in only_a.output
    assert "1/1 100.0 %" in run("--db", db, "probes", "report", "--cases", "3", "--config", "A (API)").output
    bad = run("--db", db, "probes", "report", "--cases", "x")
    assert bad.exit_code == 2 and "'x' is not a case number" in bad.output
    unknown = run("--db", db, "probes", "report", "--config", "C (API)")
    assert unknown.exit_code == 1 and "there are: A (API), B (Agt)" in unknown.output
