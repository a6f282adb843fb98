"""``benchwright probes import NITR_ROOT [--case ID]`` and ``probes run --repeat N / --submission DIR`` as a user
runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import test_cli_probe_results as cli_results

from benchwright.core.probes import sample_probe_dirs

NITR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr"
run, db = cli_results.run, cli_results.db  # the CLI runner and the fresh-project fixture


def test_import_the_shared_checkout_in_one_command(db):
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent (the shared data folder ../shared/data is not checked out here)")
    done = run("--db", db, "probes", "import", NITR)
    assert done.exit_code == 0, done.output
    assert "imported 41 NITR cases" in done.output
    assert "021.inline-filter-entrypoint-reuse\tmicro\tD2\t5 modules\t0 variants" in done.output
    listed = run("--db", db, "probes", "list").output
    assert len(listed.splitlines()) == 41 and "028.validator-global-mutation-python\tD9" in listed
    again = run("--db", db, "probes", "import", NITR, "--case", "021")
    assert again.exit_code == 0 and "imported 1 NITR case" in again.output
    unknown = run("--db", db, "probes", "import", NITR, "--case", "999")
    assert unknown.exit_code == 1 and "no case '999' in this checkout" in unknown.output
    # a case named by its number, as --case allows, is pointed at its probe id by the other commands
    by_number = run("--db", db, "probes", "run", "021")
    assert by_number.exit_code == 1 and "did you mean '021.inline-filter-entrypoint-reuse'?" in by_number.output


def test_a_checkouts_case_and_evaluator_folders_import_as_that_nitr_case(db):
    """``probes import ROOT/cases/ID ROOT/evaluator/ID [--spec ROOT/docs/ID/SPEC.md]`` reads NITR's spec layouts
    as ``probes import ROOT --case ID`` does (it refused case 033's bullet spec: no dimension found)."""
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent (the shared data folder ../shared/data is not checked out here)")
    case = next((NITR / "cases").glob("033.*"))
    spec = NITR / "docs" / case.name / "SPEC.md"
    done = run("--db", db, "probes", "import", case, NITR / "evaluator" / case.name, "--spec", spec)
    assert done.exit_code == 0, done.output
    assert f"imported probe {case.name} (micro, D9)" in done.output
    same = run("--db", db, "probes", "import", NITR, "--case", case.name[:3])
    assert same.exit_code == 0, same.output
    assert len(run("--db", db, "probes", "list").output.splitlines()) == 1  # the same probe, not a second one


def test_the_differential_tests_variants_import_with_the_checkout(db):
    """tests/data/nitr_variants (the variants the differential check against NITR's evaluator runs) is a folder
    ``probes import NITR_ROOT --variants DIR`` takes: each of its cases gets its intended and shortcut variants."""
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent (the shared data folder ../shared/data is not checked out here)")
    variants = Path(__file__).resolve().parents[1] / "data" / "nitr_variants"
    done = run("--db", db, "probes", "import", NITR, "--variants", variants)
    assert done.exit_code == 0, done.output
    for folder in sorted(p for p in variants.iterdir() if p.is_dir()):
        assert f"{folder.name}\t" in done.output and "2 variants" in next(
            line for line in done.output.splitlines() if line.startswith(folder.name + "\t")), folder.name


def test_import_refusals_say_what_to_do(db, tmp_path):
    folder = run("--db", db, "probes", "import", tmp_path)
    assert folder.exit_code == 1 and "not a NITR checkout" in folder.output and "CASE_DIR EVALUATOR_DIR" in folder.output
    probe = sample_probe_dirs()[0]
    wrong = run("--db", db, "probes", "import", probe / "case", probe / "evaluator", "--case", "021")
    assert wrong.exit_code == 1 and "--case and --skip-invalid are for a NITR checkout" in wrong.output


@pytest.fixture
def unconfined(monkeypatch):
    """Probe commands run without the sandbox: :func:`_python_probe`'s check keeps its counter outside the
    workspace, which a sandboxed check cannot write (tests/core/test_probes_sandbox.py)."""
    monkeypatch.setenv("BENCHWRIGHT_PROBE_SANDBOX", "off")


def _python_probe(tmp_path: Path) -> Path:
    """A tiny NITR checkout whose check reads a counter file: each run's verdict can be made to differ."""
    root = tmp_path / "nitr"
    counter = tmp_path / "counter"
    counter.write_text("0")
    files = {
        "cases/050.x/TASK.md": "Do it.\n", "cases/050.x/src/a.py": "A = 1\n",
        "docs/050.x/SPEC.md": "---\nprimary_dimension: testability\n---\n# X\n",
        "evaluator/050.x/checks/check.py": (
            "import pathlib, sys\n"
            f"c = pathlib.Path({str(counter)!r})\nn = int(c.read_text()) + 1\nc.write_text(str(n))\n"
            "src = (pathlib.Path(sys.argv[1]) / 'src/a.py').read_text()\n"
            "sys.exit(0 if 'A = 1' in src and (n % 2 == 1 or 'stable' in src) else 1)\n"),
        "evaluator/050.x/pipeline.json": json.dumps({
            "case_root": "../../.submit-output/m/cases/050.x", "baseline_case_root": "../../cases/050.x",
            "build_dir": "../../build", "modules": [
                {"module_name": "customized_check", "name": "check",
                 "command": ["{python}", "{evaluator_root}/checks/check.py", "{case_root}"]}]}),
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def test_repeat_marks_a_flaky_oracle_and_a_submission_is_judged(db, tmp_path, unconfined):
    root = _python_probe(tmp_path)
    assert run("--db", db, "probes", "import", root).exit_code == 0
    flaky = run("--db", db, "probes", "run", "050.x", "--repeat", "2")
    assert flaky.exit_code == 0, flaky.output
    assert [line.split("\t")[1] for line in flaky.output.splitlines() if line.startswith("(starter)")] == ["pass", "fail"]
    submission = tmp_path / "sub"
    shutil.copytree(root / "cases/050.x", submission)
    (submission / "src/a.py").write_text("A = 2\n")
    judged = run("--db", db, "probes", "run", "050.x", "--submission", submission, "--logs")
    assert judged.exit_code == 0, judged.output
    assert "(submission)\tfail" in judged.output and "check (customized_check): exit code 1" in judged.output
    assert "      | $ " in judged.output  # --logs prints each module's log
    assert '    not sandboxed (probes sandbox = "off")' in judged.output  # an unconfined run says so
    both = run("--db", db, "probes", "run", "050.x", "--submission", submission, "--repeat", "2")
    assert both.exit_code == 1 and "leave out --variant and --repeat" in both.output


def test_repeat_reports_flaky_variants(db, tmp_path, unconfined):
    root = _python_probe(tmp_path)
    assert run("--db", db, "probes", "import", root).exit_code == 0
    from benchwright.core.probes import Variant, probe_fingerprint
    from benchwright.db import Store

    trees = {}
    for name, text in (("good", "A = 1  # stable\n"), ("good2", "A = 1 # stable too\n"),
                       ("bad", "A = 3\n"), ("bad2", "A = 4\n"), ("wobbly", "A = 1\n")):
        tree = tmp_path / "v" / name / "src"
        tree.mkdir(parents=True)
        (tree / "a.py").write_text(text)
        trees[name] = tree.parent
    kinds = {"good": "intended", "good2": "intended", "bad": "shortcut", "bad2": "shortcut", "wobbly": "intended"}
    with Store.open(db) as store:
        record = store.probe_record("050.x")
        from benchwright.core.probes import Probe

        probe = Probe.model_validate(record["probe"])
        variants = [Variant(name=n, kind=k, expected="pass" if k == "intended" else "fail", tree=str(trees[n]))
                    for n, k in kinds.items()]
        store.save_probe(probe, variants, probe_fingerprint(probe, variants), by="t")
    stable = run("--db", db, "probes", "run", "050.x", "--variant", "good", "--variant", "good2", "--variant", "bad",
                 "--variant", "bad2", "--repeat", "2")
    assert "separation: stably separating" in stable.output, stable.output
    wobbly = run("--db", db, "probes", "run", "050.x", "--repeat", "2")
    assert "separation: not separating (flaky: wobbly)" in wobbly.output, wobbly.output
    assert "note: wobbly: flaky: 2 runs gave" in wobbly.output
    one = run("--db", db, "probes", "run", "050.x", "--variant", "good", "--variant", "bad", "--min-variants", "1")
    assert "separation: stably separating" in one.output
    default = run("--db", db, "probes", "run", "050.x", "--variant", "good", "--variant", "bad")
    assert "separation: not separating" in default.output and "needs 2 per family" in default.output


def test_variants_for_nitr_cases_are_imported_and_kept(db, tmp_path, unconfined):
    root = _python_probe(tmp_path)
    variants = tmp_path / "variants"
    for name, kind, text in (("fixed", "intended", "A = 1  # stable\n"), ("hack", "shortcut", "A = 5\n")):
        folder = variants / "050.x" / name
        (folder / "tree" / "src").mkdir(parents=True)
        (folder / "tree" / "src" / "a.py").write_text(text)
        (folder / "variant.json").write_text(json.dumps({"kind": kind}))
    done = run("--db", db, "probes", "import", root, "--variants", variants)
    assert done.exit_code == 0 and "050.x\tmicro\tD7\t1 module\t2 variants" in done.output, done.output
    again = run("--db", db, "probes", "import", root)  # no --variants: the case keeps its variants
    assert "2 variants" in again.output
    ran = run("--db", db, "probes", "run", "050.x", "--variant", "fixed", "--variant", "hack", "--min-variants", "1")
    assert "fixed\tpass\texpected pass" in ran.output and "hack\tfail\texpected fail" in ran.output, ran.output
    assert "separation: stably separating" in ran.output
    one = run("--db", db, "probes", "import", root, "--case", "050", "--variants", variants / "050.x")
    assert one.exit_code == 0 and "2 variants" in one.output
    none = run("--db", db, "probes", "import", root, "--variants", tmp_path / "counter_dir_absent")
    assert none.exit_code != 0


def test_skip_invalid_imports_the_cases_that_read_and_lists_the_others(db, tmp_path):
    root = _python_probe(tmp_path)
    shutil.copytree(root / "cases/050.x", root / "cases/051.y")
    shutil.copytree(root / "evaluator/050.x", root / "evaluator/051.y")
    (root / "docs/051.y").mkdir()
    (root / "docs/051.y/SPEC.md").write_text("---\nprimary_dimension: elegance\n---\n")
    refused = run("--db", db, "probes", "import", root)
    assert refused.exit_code == 1 and "'elegance' is not a dimension name" in refused.output
    assert run("--db", db, "probes", "list").output == ""  # all or nothing
    some = run("--db", db, "probes", "import", root, "--skip-invalid")
    assert some.exit_code == 1 and "imported 1 NITR case" in some.output
    assert "skipped 051.y:" in some.output and "docs/051.y/SPEC.md, line 2" in some.output
    assert run("--db", db, "probes", "list").output.startswith("050.x\t")


def test_a_variant_with_differing_outcomes_under_the_same_files_makes_the_stored_state_not_separating(db, tmp_path):
    from benchwright.core.probes import OracleRun, Probe, Variant, probe_fingerprint
    from benchwright.db import Store

    root = _python_probe(tmp_path)
    assert run("--db", db, "probes", "import", root).exit_code == 0
    with Store.open(db) as store:
        probe = Probe.model_validate(store.probe_record("050.x")["probe"])
        variants = [Variant(name="i", kind="intended", expected="pass"), Variant(name="s", kind="shortcut", expected="fail")]
        fingerprint = probe_fingerprint(probe, variants)
        store.save_probe(probe, variants, fingerprint, by="t")
        store.set_min_variants_per_family(1, by="t")  # one variant per family is enough here

        def record(variant, outcome):
            store.record_run(OracleRun(probe_id="050.x", variant=variant, outcome=outcome, expected=variant.expected,
                                       matches_expectation=outcome == variant.expected), fingerprint=fingerprint, by="t")

        record(variants[0], "pass")
        record(variants[1], "fail")
        assert store.run_state("050.x") == "separating"
        # a run on a machine without the toolchain is no verdict of the oracle: not flaky once it runs again
        store.record_run(OracleRun(probe_id="050.x", variant=variants[0], outcome="error", expected="pass",
                                   matches_expectation=False, error="cannot run here: missing cmake"),
                         fingerprint=fingerprint, by="t")
        assert store.run_state("050.x") == "not separating"  # its latest run tells nothing
        record(variants[0], "pass")
        assert store.run_state("050.x") == "separating"
        record(variants[0], "fail")
        record(variants[0], "pass")  # the latest runs are as expected, but the oracle said fail once
        assert store.run_state("050.x") == "not separating"


def test_set_switches_a_pipeline_variable_for_one_run(db, tmp_path):
    root = _python_probe(tmp_path)
    pipeline = json.loads((root / "evaluator/050.x/pipeline.json").read_text())
    pipeline["variables"] = {"hidden": False}
    pipeline["modules"].append({"module_name": "source_analysis", "name": "hidden rule", "enabled_if": "hidden",
                                "scan_roots": ["src"], "suffixes": [".py"], "rules": [{"id": "no-a", "any_substrings": ["A ="]}]})
    (root / "evaluator/050.x/pipeline.json").write_text(json.dumps(pipeline))
    assert run("--db", db, "probes", "import", root).exit_code == 0
    plain = run("--db", db, "probes", "run", "050.x")
    assert "hidden rule" not in plain.output
    hidden = run("--db", db, "probes", "run", "050.x", "--set", "hidden=TRUE")
    assert "hidden rule (source_analysis): rule no-a matched in src/a.py:1" in hidden.output, hidden.output
    assert "(runs with --set are not stored)" in hidden.output
    bad = run("--db", db, "probes", "run", "050.x", "--set", "hiden=true")
    assert bad.exit_code == 1 and "no variable 'hiden' in this pipeline; its variables: hidden" in bad.output
