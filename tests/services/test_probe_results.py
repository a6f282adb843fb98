"""The services behind ``probes import-results`` and ``probes report``: the pass matrix with the checkout's docs,
through the store, gives the paper's Table 3; an imported probe describes a case the docs do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.core.errors import InputFileError
from benchwright.core.probes import read_probe_folder, sample_probe_dirs
from benchwright.db import Store
from benchwright.tui.services.probes import import_results, results_report

NITR_DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr" / "docs"


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "p.db") as s:
        yield s


def test_the_shared_matrix_through_the_store_gives_table_3(store):
    csv_path = NITR_DOCS / "model_case_pass_matrix.csv"
    if not csv_path.is_file():
        pytest.skip(f"real data {NITR_DOCS} is absent (the shared data folder ../shared/data is not checked out here)")
    report, docs = import_results(store, csv_path, by="ada")
    assert (report.added, report.cases) == (507, 44) and [Path(d).name for d in docs] == ["design_matrix.md",
                                                                                           "cases.md"]
    again, _ = import_results(store, csv_path, by="ada")
    assert (again.added, again.already_present) == (0, 507)
    rep = results_report(store)
    g = {row.key: row.tally for row in rep.granularity}
    assert (g["micro"].passes, g["micro"].total, g["multi-step"].passes, g["multi-step"].total) == (123, 230, 52, 253)
    assert round(100 * next(d for d in rep.dimensions if d.key == "D6").tally.rate, 1) == 4.3


def test_an_imported_probe_describes_a_case_the_docs_do_not(store, tmp_path):
    csv_path = tmp_path / "matrix.csv"
    csv_path.write_text("model,030,pass_count\nA (API),pass,1\nB (Agt),fail,0\n", encoding="utf-8")
    probe, _ = read_probe_folder(sample_probe_dirs()[0])
    store.save_probe(probe.model_copy(update={"id": "030.sample"}), [], "f" * 64, by="ada")
    import_results(store, csv_path, by="ada")
    rep = results_report(store)
    assert rep.cases[0].info.case_id == "030.sample" and rep.cases[0].info.primary_dimension == probe.primary_dimension
    assert [(d.key, d.tally.passes, d.tally.total) for d in rep.dimensions] == [(probe.primary_dimension, 1, 2)]
    assert not rep.unknown


def test_a_bad_matrix_writes_nothing(store, tmp_path):
    csv_path = tmp_path / "matrix.csv"
    csv_path.write_text("model,001,pass_count\nA (API),pass,0\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"line 2, field 'pass_count': says 0, but the row has 1 pass cell"):
        import_results(store, csv_path, by="ada")
    assert store.model_results() == []


def test_an_attempt_is_evaluated_stored_and_counted_in_the_report(store, tmp_path):
    import shutil
    import sys

    if shutil.which("git") is None:
        pytest.skip("git is needed to diff the trees")
    from benchwright.core.probes import probe_fingerprint
    from benchwright.tui.services.probes import attempt_probe

    folder = sample_probe_dirs()[1]  # token_clock: its shortcut patch, written into the tree by an "agent"
    probe, variants = read_probe_folder(folder)
    store.save_probe(probe, variants, probe_fingerprint(probe, variants), by="ada")
    apply = tmp_path / "apply.py"
    apply.write_text("import subprocess, sys\nsubprocess.run(['git', 'apply', sys.argv[1]], cwd=sys.argv[2], check=True)\n")
    agent = f"{sys.executable} {apply} {folder / 'variants' / 'shortcut' / 'patch.diff'} {{tree}}"
    attempt, run = attempt_probe(store, probe.id, model="Fake", regime="agent", agent_command=agent, timeout_s=120,
                                 by="ada")
    assert run.outcome == "fail" and attempt.verdict == "fail" and attempt.oracle_run_id
    assert Path(attempt.folder).parent == tmp_path / "attempts" / probe.id
    [result] = store.model_results()
    assert (result.configuration, result.case, result.outcome) == ("Fake (Agt)", probe.id, "fail")
    row = store.db.conn.execute("SELECT origin, oracle_run_id FROM model_results").fetchone()
    assert row == ("attempt", attempt.oracle_run_id)
    assert store.validation_state(probe.id) == "not run"  # an attempt is not one of the probe's variants
    assert results_report(store).configurations[0].suite.total == 1
