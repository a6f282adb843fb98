"""The stored validation state needs, by default, two intended and two shortcut variants (NITR's "stably
separating" a solution family); the project setting ``probe_min_variants_per_family`` changes it
(``benchwright probes min-variants N``), and ``probes run`` reports separation with the same minimum."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchwright.core.errors import BenchwrightError
from benchwright.core.probes import (
    OracleRun,
    Variant,
    probe_fingerprint,
    read_probe_folder,
    sample_probe_dirs,
)
from benchwright.db import Store
from benchwright.db.probes import MIN_VARIANTS_SETTING
from benchwright.tui.cli import main


def _probe_with(store: Store, variants: list[Variant]) -> str:
    """The shipped token-clock probe stored with ``variants``, each run once as its kind expects."""
    probe, _shipped = read_probe_folder(next(p for p in sample_probe_dirs() if p.name == "token_clock"))
    fingerprint = probe_fingerprint(probe, variants)
    store.save_probe(probe, variants, fingerprint, by="t")
    for v in variants:
        store.record_run(OracleRun(probe_id=probe.id, variant=v, outcome=v.expected, expected=v.expected,
                                   matches_expectation=True), fingerprint=fingerprint, by="t")
    return probe.id


ONE_EACH = [Variant(name="i", kind="intended", expected="pass"), Variant(name="s", kind="shortcut", expected="fail")]
TWO_EACH = [*ONE_EACH, Variant(name="i2", kind="intended", expected="pass"),
            Variant(name="s2", kind="shortcut", expected="fail")]


def test_one_variant_per_family_is_incomplete_by_default_and_says_why(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        pid = _probe_with(store, ONE_EACH)
        assert store.min_variants_per_family() == 2
        assert store.run_state(pid) == "incomplete"
        assert store.validation_state(pid) == "incomplete"
        why = store.family_shortfall(pid)
        assert why is not None and "1 intended and 1 shortcut variant" in why and "needs 2 of each" in why
        assert MIN_VARIANTS_SETTING in why


def test_two_per_family_separate_and_the_minimum_is_a_project_setting(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        pid = _probe_with(store, TWO_EACH)
        assert store.run_state(pid) == "separating" and store.family_shortfall(pid) is None
        store.set_min_variants_per_family(3, by="lead")
        assert store.run_state(pid) == "incomplete"
        store.set_min_variants_per_family(1, by="lead")
        assert store.run_state(pid) == "separating"
        store.set_setting(MIN_VARIANTS_SETTING, "bogus", by="someone")
        assert store.min_variants_per_family() == 2  # an unreadable value counts as unset


def test_a_sign_off_needs_the_family_minimum(tmp_path):
    with Store.open(tmp_path / "p.db") as store:
        pid = _probe_with(store, ONE_EACH)
        with pytest.raises(BenchwrightError, match="is incomplete"):
            store.sign_off(pid, "lead", "signed-off", "")


def test_cli_min_variants_shows_and_sets_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = str(tmp_path / "p.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "init"]).exit_code == 0
    shown = runner.invoke(main, ["--db", db, "probes", "min-variants"])
    assert shown.exit_code == 0 and "needs 2 intended and 2 shortcut variants" in shown.output
    changed = runner.invoke(main, ["--db", db, "probes", "min-variants", "1", "--as", "lead"])
    assert changed.exit_code == 0 and "needs 1 intended and 1 shortcut variant per probe" in changed.output
    with Store.open(tmp_path / "p.db") as store:
        assert store.min_variants_per_family() == 1
    refused = runner.invoke(main, ["--db", db, "probes", "min-variants", "0"])
    assert refused.exit_code != 0 and "Traceback" not in refused.output


def test_probes_run_judges_separation_with_the_project_minimum(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    folder = next(p for p in sample_probe_dirs() if p.name == "token_clock")
    db = str(tmp_path / "p.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "init"]).exit_code == 0
    assert runner.invoke(main, ["--db", db, "probes", "import", str(folder / "case"), str(folder / "evaluator"),
                                "--variants", str(folder / "variants")]).exit_code == 0
    two = ["probes", "run", "token-clock", "--variant", "intended", "--variant", "shortcut"]
    default = runner.invoke(main, ["--db", db, *two])
    assert "only 1 intended variant was run; stable separation needs 2 per family" in default.output
    assert "separation: not separating" in default.output
    assert runner.invoke(main, ["--db", db, "probes", "min-variants", "1"]).exit_code == 0
    lowered = runner.invoke(main, ["--db", db, *two])
    assert "separation: stably separating" in lowered.output, lowered.output
