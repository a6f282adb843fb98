"""Signed-off probes in releases (issue 14 item 7): in NITR's layout under probes/, only probes whose sign-off is
current, the validation matrix as JSON, named by the card, checked by verify, reproduced byte for byte by rebuild,
brought back by releases import. Oracle runs are recorded directly (no build), so these tests are fast."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.probes import ModuleResult, OracleRun, Variant, sample_probe_dirs
from benchwright.core.probes.release import ProbeExclusion
from benchwright.db import Store
from benchwright.exports import verify_release
from benchwright.tui.cli import main

NAME, VERSION = "demo", "1.0.0"
PROBE = "token-clock"
NITR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr"


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def record_separating_runs(store: Store, probe_id: str) -> None:
    """A run of every variant with the outcome it expects (what ``probes run`` records when the oracle separates)."""
    record = store.probe_record(probe_id)
    for v in record["variants"]:
        variant = Variant.model_validate(v)
        fail = variant.expected == "fail"
        modules = [
            ModuleResult(name="functional tests", module_name="unit_test", passed=True, reason="exit code 0",
                         log="ran 3 tests"),
            ModuleResult(name="structure", module_name="source_analysis", passed=not fail,
                         reason="rule no-wall-clock-call matched" if fail else "no finding", log="secret log text"),
        ]
        run_ = OracleRun(probe_id=probe_id, variant=variant, outcome=variant.expected, expected=variant.expected,
                         matches_expectation=True, modules=modules, duration_s=1.5, started_at="2026-12-01T10:00:00+00:00")
        store.record_run(run_, fingerprint=record["fingerprint"], by="ada")


def add_probe(db: Path, tmp: Path, *, sign: bool = True) -> Path:
    folder = tmp / "token_clock"
    shutil.copytree(next(p for p in sample_probe_dirs() if p.name == "token_clock"), folder)
    r = run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"), "--variants", str(folder / "variants"))
    assert r.exit_code == 0, r.output
    if sign:
        with Store.open(db) as store:
            record_separating_runs(store, PROBE)
            store.sign_off(PROBE, "lead", "signed-off", "separates")
    return folder


def add_pairs(db: Path, tmp: Path) -> None:
    (tmp / "code").mkdir()
    assert run(db, "repos", "add", "code", str(tmp / "code"), "--version", "1.0").exit_code == 0
    data = tmp / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": f"Question {i}?", "answer": f"Answer {i}."}) + "\n" for i in range(2)))
    assert run(db, "pairs", "import", "jsonl", str(data), "--repo", "code").exit_code == 0
    checklist = Checklist(items=[ChecklistItem(key_point="Names it", weight=9, rubric=binary_rubric(9)), clarity_item()])
    with Store.open(db) as store:
        for r in store.queue_page("x", limit=10):
            store.save_checklist(r.id, checklist, author="llm", origin="generated")
            store.record_decision(r.id, "ada", "accept")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    assert run(db, "init").exit_code == 0
    add_pairs(db, tmp_path)
    folder = add_probe(db, tmp_path)
    return db, tmp_path, folder


def create(db: Path, out: Path, *extra: str, version: str = VERSION):
    return run(db, "releases", "create", NAME, "--version", version, "--out", str(out), "--as", "lead", *extra)


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_release_holds_the_signed_off_probe_in_nitrs_layout(project):
    db, tmp, folder = project
    r = create(db, tmp / "rel")
    assert r.exit_code == 0, r.output
    assert "included: 1 probe (signed off)" in r.output and f"probe {PROBE}" in r.output
    rel = tmp / "rel" / f"{NAME}-{VERSION}"
    probes = rel / "probes"
    # NITR's layout: cases/<id>/ (the spec moved out), evaluator/<id>/, docs/<id>/SPEC.md, variants/<id>/<name>/
    assert (probes / "cases" / PROBE / "TASK.md").read_bytes() == (folder / "case" / "TASK.md").read_bytes()
    assert not (probes / "cases" / PROBE / "SPEC.md").exists()
    spec = folder / "case" / "SPEC.md" if (folder / "case" / "SPEC.md").is_file() else folder / "SPEC.md"
    assert (probes / "docs" / PROBE / "SPEC.md").read_bytes() == spec.read_bytes()
    assert (probes / "evaluator" / PROBE / "pipeline.json").read_bytes() == (folder / "evaluator" / "pipeline.json").read_bytes()
    for name in ("intended", "shortcut", "near-miss"):
        meta = json.loads((probes / "variants" / PROBE / name / "variant.json").read_text())
        assert meta["kind"] in ("intended", "shortcut", "near-miss") and meta["expected"] in ("pass", "fail")
    assert not [p for p in probes.rglob("*") if p.name == "__pycache__" or p.suffix == ".pyc"]
    # the validation matrix: per variant expected, outcome, per-module verdicts; no logs
    matrix = json.loads((probes / "validation" / f"{PROBE}.json").read_text())
    with Store.open(db) as store:
        fingerprint = store.probe_record(PROBE)["fingerprint"]
    assert matrix["fingerprint"] == fingerprint and matrix["signed_off"]["reason"] == "separates"
    assert matrix["signed_off"]["by"].startswith("annotator-")  # pseudonymous, like every name of a release
    shortcut = next(v for v in matrix["variants"] if v["variant"] == "shortcut")
    assert shortcut["expected"] == "fail" and shortcut["outcome"] == "fail" and shortcut["as_expected"] is True
    assert [(m["module"], m["verdict"]) for m in shortcut["modules"]] == [("unit_test", "pass"), ("source_analysis", "fail")]
    assert "secret log text" not in (probes / "validation" / f"{PROBE}.json").read_text()
    index = [json.loads(line) for line in (probes / "probes.jsonl").read_text().splitlines()]
    assert [(e["id"], e["fingerprint"], e["primary_dimension"]) for e in index] == [(PROBE, fingerprint, "D7")]
    # manifest, card, verify
    manifest = json.loads((rel / "manifest.json").read_text())
    assert manifest["probes"] == {"n_probes": 1, "ids": [PROBE], "index": "probes/probes.jsonl", "excluded": {}}
    assert f"probes/evaluator/{PROBE}/pipeline.json" in manifest["files"]
    card = (rel / "README.md").read_text()
    assert "## Probes" in card and f"| {PROBE} | D7 Testability and Determinism | micro |" in card
    assert "config_name: probes" not in card and "and 1 signed-off NITR probe (see Probes)" in card
    assert "First release: 1 probe." in (rel / "CHANGELOG.md").read_text()
    report = verify_release(rel)
    assert report.ok, report.problems
    assert report.n_probes == 1
    assert run(db, "releases", "verify", str(rel)).exit_code == 0


def test_rebuild_reproduces_every_byte_also_after_later_runs(project):
    db, tmp, _ = project
    assert create(db, tmp / "rel").exit_code == 0
    with Store.open(db) as store:  # a run after the sign-off (another outcome) does not change what was signed off
        record = store.probe_record(PROBE)
        shortcut = Variant.model_validate(next(v for v in record["variants"] if v["name"] == "shortcut"))
        store.record_run(OracleRun(probe_id=PROBE, variant=shortcut, outcome="pass", expected="fail",
                                   matches_expectation=False, started_at="2026-12-02T10:00:00+00:00"),
                         fingerprint=record["fingerprint"], by="bob")
    r = run(db, "releases", "rebuild", NAME, "--version", VERSION, "--out", str(tmp / "again"))
    assert r.exit_code == 0, r.output
    first, second = tree_bytes(tmp / "rel" / f"{NAME}-{VERSION}"), tree_bytes(tmp / "again" / f"{NAME}-{VERSION}")
    assert any(k.startswith("probes/") for k in first)
    assert first == second


def test_verify_catches_a_changed_missing_or_added_probe_file(project):
    db, tmp, _ = project
    assert create(db, tmp / "rel").exit_code == 0
    rel = tmp / "rel" / f"{NAME}-{VERSION}"
    pipeline = rel / "probes" / "evaluator" / PROBE / "pipeline.json"
    pipeline.write_text(pipeline.read_text().replace("no-wall-clock-call", "no-wall-clock-calls"))
    (rel / "probes" / "variants" / PROBE / "shortcut" / "patch.diff").unlink(missing_ok=True)
    (rel / "probes" / "cases" / PROBE / "extra.py").write_text("x = 1\n")
    report = verify_release(rel)
    assert not report.ok
    text = "\n".join(report.problems)
    assert f"probes/evaluator/{PROBE}/pipeline.json: sha256 is" in text
    assert f"probes/cases/{PROBE}/extra.py: not listed in the manifest" in text
    r = run(db, "releases", "verify", str(rel))
    assert r.exit_code == 1 and f"probes/evaluator/{PROBE}/pipeline.json" in r.output
    r = run(db, "releases", "import", str(rel))
    assert r.exit_code == 1 and "not an intact release" in r.output


def test_verify_checks_the_probe_index_against_the_manifest(project):
    db, tmp, _ = project
    assert create(db, tmp / "rel").exit_code == 0
    rel = tmp / "rel" / f"{NAME}-{VERSION}"
    manifest = json.loads((rel / "manifest.json").read_text())
    manifest["probes"]["ids"] = ["other"]
    (rel / "manifest.json").write_text(json.dumps(manifest))
    assert any("the manifest says ['other']" in p for p in verify_release(rel).problems)


def test_only_probes_with_a_current_sign_off_go_in_and_the_others_are_listed(project):
    db, tmp, folder = project
    # a second probe, imported but never signed off
    other = tmp / "pricing"
    shutil.copytree(next(p for p in sample_probe_dirs() if p.name == "pricing_strategy"), other)
    assert run(db, "probes", "import", str(other / "case"), str(other / "evaluator"), "--variants",
               str(other / "variants")).exit_code == 0
    # the signed-off probe changes on disk: its files no longer are what was signed off
    task = folder / "case" / "TASK.md"
    task.write_text(task.read_text() + "\nOne more line.\n")
    r = run(db, "releases", "preflight")
    assert f"excluded: probe {PROBE}: {ProbeExclusion.FILES_CHANGED}" in r.output
    assert f"excluded: probe pricing-strategy: {ProbeExclusion.NOT_SIGNED_OFF}" in r.output
    # imported again, the sign-off is stale
    assert run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"), "--variants",
               str(folder / "variants")).exit_code == 0
    r = create(db, tmp / "rel")
    assert r.exit_code == 0, r.output
    assert "included: 0 probes" in r.output and f"excluded: probe {PROBE}: {ProbeExclusion.STALE}" in r.output
    rel = tmp / "rel" / f"{NAME}-{VERSION}"
    assert not (rel / "probes").exists() and "probes" not in json.loads((rel / "manifest.json").read_text())
    # run again under the new files and sign off: it goes in, the others counted by reason in manifest and card
    with Store.open(db) as store:
        record_separating_runs(store, PROBE)
        store.sign_off(PROBE, "lead", "signed-off", "separates again")
    assert create(db, tmp / "rel", version="1.1.0").exit_code == 0
    rel = tmp / "rel" / f"{NAME}-1.1.0"
    manifest = json.loads((rel / "manifest.json").read_text())
    assert manifest["probes"]["ids"] == [PROBE]
    assert manifest["probes"]["excluded"] == {str(ProbeExclusion.NOT_SIGNED_OFF): 1}
    card = (rel / "README.md").read_text()
    assert f"| {ProbeExclusion.NOT_SIGNED_OFF} | 1 |" in card
    assert f"### Added probes (1)\n\n- `{PROBE}`" in (rel / "CHANGELOG.md").read_text()


def test_a_refused_sign_off_keeps_a_probe_out(project):
    db, _, _ = project
    with Store.open(db) as store:
        store.sign_off(PROBE, "lead", "not-signed-off", "the near-miss passes")
    r = run(db, "releases", "preflight")
    assert f"excluded: probe {PROBE}: {ProbeExclusion.REFUSED}" in r.output


def test_without_probes_the_release_is_the_qa_release_byte_for_byte(project):
    db, tmp, _ = project
    r = create(db, tmp / "rel", "--without-probes")
    assert r.exit_code == 0, r.output
    rel = tmp / "rel" / f"{NAME}-{VERSION}"
    assert not (rel / "probes").exists()
    manifest = json.loads((rel / "manifest.json").read_text())
    assert "probes" not in manifest and "## Probes" not in (rel / "README.md").read_text()
    # rebuilding a release made without probes leaves them out again, so it reproduces the bytes
    assert run(db, "releases", "rebuild", NAME, "--version", VERSION, "--out", str(tmp / "again")).exit_code == 0
    assert tree_bytes(rel) == tree_bytes(tmp / "again" / f"{NAME}-{VERSION}")


def test_a_release_of_probes_only(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    assert run(db, "init").exit_code == 0
    r = create(db, tmp_path / "rel")
    assert r.exit_code == 1 and "no pair is accepted with a valid checklist and no probe is signed off" in r.output
    add_probe(db, tmp_path)
    r = create(db, tmp_path / "rel")
    assert r.exit_code == 0, r.output
    rel = tmp_path / "rel" / f"{NAME}-{VERSION}"
    report = verify_release(rel)
    assert report.ok and report.n_pairs == 0 and report.n_probes == 1, report.problems
    assert (rel / "data" / "test.jsonl").read_bytes() == b""
    assert "1 signed-off NITR probe (see Probes), and no question-answer pairs." in (rel / "README.md").read_text()


def test_releases_import_brings_the_probes_back(project):
    db, tmp, _ = project
    assert create(db, tmp / "rel").exit_code == 0
    rel = tmp / "rel" / f"{NAME}-{VERSION}"
    fresh = tmp / "fresh.db"
    assert run(fresh, "init").exit_code == 0
    r = run(fresh, "releases", "import", str(rel))
    assert r.exit_code == 0, r.output
    assert "added 2 Q&A pairs" in r.output and "imported 1 probe" in r.output and PROBE in r.output
    with Store.open(db) as old, Store.open(fresh) as new:
        a, b = old.probe_record(PROBE), new.probe_record(PROBE)
        assert sorted(v["name"] for v in a["variants"]) == sorted(v["name"] for v in b["variants"])
        assert b["primary_dimension"] == a["primary_dimension"] and b["probe"]["steps"] == a["probe"]["steps"]
        assert b["probe"]["pipeline"]["modules"] == a["probe"]["pipeline"]["modules"]
        assert new.validation_state(PROBE) == "not run"  # runs and sign-offs are the releasing project's
    # imported again, and into the project it came from: the probes there are kept as they are (not re-pointed
    # at the release folder, their sign-offs not made stale)
    for db_ in (fresh, db):
        r = run(db_, "releases", "import", str(rel))
        assert r.exit_code == 0 and "imported" not in r.output, r.output
    with Store.open(db) as store:
        assert store.validation_state(PROBE) == "signed off"
        assert not store.probe_record(PROBE)["probe"]["case_dir"].startswith(str(rel))


def test_a_nitr_case_is_released_with_its_checkouts_shared_files_and_reads_back(tmp_path, monkeypatch):
    """Case 001 of the shared NITR checkout (its spec names no dimension: the design matrix is released too)."""
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent")
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    assert run(db, "init").exit_code == 0
    case = "001.add-no-callsite-spread"
    variants = tmp_path / "variants"
    for name, kind in (("intended", "intended"), ("intended-2", "intended"), ("shortcut", "shortcut"),
                       ("shortcut-2", "shortcut")):  # two of each family: stable separation
        (variants / name / "tree").mkdir(parents=True)
        (variants / name / "tree" / "NOTE.md").write_text(f"{name}\n")
        (variants / name / "variant.json").write_text(json.dumps({"kind": kind}))
    r = run(db, "probes", "import", str(NITR), "--case", "001", "--variants", str(variants))
    assert r.exit_code == 0, r.output
    with Store.open(db) as store:
        record_separating_runs(store, case)
        store.sign_off(case, "lead", "signed-off", "ok")
    r = create(db, tmp_path / "rel")
    assert r.exit_code == 0, r.output
    probes = tmp_path / "rel" / f"{NAME}-{VERSION}" / "probes"
    for relative in (f"cases/{case}", f"evaluator/{case}/pipeline.json", "evaluator/shared", "CMakeLists.txt",
                     "docs/design_matrix.md", "LICENSE", "CITATION.cff", f"variants/{case}/shortcut/tree/NOTE.md"):
        assert (probes / relative).exists(), relative
    assert not (probes / "third_party").exists() and not (probes / "cases" / "002.refactor-and-reuse").exists()
    assert verify_release(probes.parent).ok
    assert (probes / "LICENSE").read_bytes() == (NITR / "LICENSE").read_bytes()
    assert "keep that checkout's license" in (probes.parent / "README.md").read_text()
    fresh = tmp_path / "fresh.db"
    assert run(fresh, "init").exit_code == 0
    r = run(fresh, "releases", "import", str(probes.parent))
    assert r.exit_code == 0, r.output
    with Store.open(db) as old, Store.open(fresh) as new:
        assert new.probe_record(case)["primary_dimension"] == old.probe_record(case)["primary_dimension"]
        assert new.probe_record(case)["probe"]["pipeline"] == old.probe_record(case)["probe"]["pipeline"]


_KILLER = """
import os, signal, sys
from pathlib import Path
from benchwright.db import Store
from benchwright.tui.services.releases import create_release

db, out, step = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])

def progress(done, total):
    assert total == 8  # rows, JSONL, Parquet, probes, changelog, card, manifest, move into place
    if done == step:
        os.kill(os.getpid(), signal.SIGKILL)

with Store.open(db) as store:
    create_release(store, store.release_preflight(), "demo", "1.0.0", out, by="lead", progress=progress)
"""


@pytest.mark.slow
@pytest.mark.parametrize("step", range(1, 9))
def test_kill_9_at_every_step_of_a_release_with_probes_then_the_same_command_finishes_it(project, step):
    """A real SIGKILL after each step (the probes' step among them); ``releases create`` run again succeeds, the
    record and the folder agree, and the folder is the one a clean run writes (byte for byte)."""
    import signal
    import subprocess
    import sys

    db, tmp, _ = project
    out = tmp / "rel"
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(db), str(out), str(step)], capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    r = create(db, out)
    assert r.exit_code == 0, r.output
    assert ("interrupted attempt" in r.output) == (step == 8)
    folder = out / f"{NAME}-{VERSION}"
    with Store.open(db) as store:
        assert store.pending_release(NAME, VERSION) is None and store.release_exists(NAME, VERSION)
        assert store.release_record(NAME, VERSION)["manifest"] == json.loads((folder / "manifest.json").read_text())
    assert verify_release(folder).ok and (folder / "probes" / "probes.jsonl").is_file()
    assert not [p.name for p in out.iterdir() if p.name.endswith(".partial")]
    assert run(db, "releases", "rebuild", NAME, "--version", VERSION, "--out", str(tmp / "again")).exit_code == 0
    assert tree_bytes(folder) == tree_bytes(tmp / "again" / f"{NAME}-{VERSION}")


def test_an_interrupted_release_with_probes_is_not_recorded_by_a_command_without_them(project):
    """The folder an interrupted attempt wrote with probes is adopted only by the same command: asked for
    --without-probes, it is refused and left in place."""
    import signal
    import subprocess
    import sys

    db, tmp, _ = project
    out = tmp / "rel"
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(db), str(out), "8"], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    r = create(db, out, "--without-probes")
    assert r.exit_code == 1 and "with probes" in r.output and "--without-probes" in r.output
    assert (out / f"{NAME}-{VERSION}" / "probes").is_dir()
    r = create(db, out)
    assert r.exit_code == 0 and "interrupted attempt" in r.output, r.output


def test_rebuild_is_refused_when_a_released_probe_changed_since(project):
    db, tmp, folder = project
    assert create(db, tmp / "rel").exit_code == 0
    task = folder / "case" / "TASK.md"
    task.write_text(task.read_text() + "\nChanged after the release.\n")
    r = run(db, "releases", "rebuild", NAME, "--version", VERSION, "--out", str(tmp / "again"))
    assert r.exit_code == 1 and "rebuilding gives different files" in r.output
    assert not (tmp / "again" / f"{NAME}-{VERSION}").exists()


def test_the_same_probes_written_twice_give_the_same_bytes(tmp_path):
    """write_release itself: two writes of the same rows, spec and probes (to other folders) are byte-identical,
    and file order or variant order does not matter."""
    from benchwright.core.probes import read_probe_folder
    from benchwright.exports import ReleaseProbe, ReleaseSpec, write_release

    probe, variants = read_probe_folder(next(p for p in sample_probe_dirs() if p.name == "token_clock"))
    runs = {v.name: {"outcome": v.expected, "modules": [{"name": "m", "module_name": "unit_test", "passed": True}]}
            for v in variants}
    spec = ReleaseSpec(name="x", version="1.0.0", created_at="2026-12-01T10:00:00+00:00", created_by="lead",
                       schema_version=1)
    paths = []
    for k, order in enumerate((variants, list(reversed(variants)))):
        item = ReleaseProbe(probe=probe, variants=order, fingerprint="f" * 64, signed_off_by="lead",
                            signed_off_at="2026-12-01T09:00:00+00:00", runs=runs)
        paths.append(write_release([], spec, tmp_path / str(k), probes=[item], probes_excluded=[("other", "not signed off")]))
    assert tree_bytes(paths[0]) == tree_bytes(paths[1])
    assert verify_release(paths[0]).ok


def test_the_probe_list_loads_with_datasets_and_the_card_config_still_loads(project, monkeypatch):
    """probes/probes.jsonl loads with the json builder; the folder's own config (the card's front matter) still
    loads the pairs: a second config for the probes would make the Hub read it with the Parquet builder."""
    db, tmp, _ = project
    assert create(db, tmp / "rel").exit_code == 0
    folder = tmp / "rel" / f"{NAME}-{VERSION}"
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    probes = datasets.load_dataset("json", data_files=str(folder / "probes" / "probes.jsonl"), split="train",
                                   cache_dir=str(tmp / "hf-cache"))
    assert probes.num_rows == 1 and probes[0]["id"] == PROBE and probes[0]["primary_dimension"] == "D7"
    pairs = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp / "hf-cache"))
    assert pairs.num_rows == 2


def test_a_symlink_in_a_probe_is_refused_by_name_and_nothing_is_left(project):
    db, tmp, folder = project
    # a link inside the evaluator (import refuses only absolute or outward ones), which a release still refuses
    (folder / "evaluator" / "link.py").symlink_to("pipeline.json")
    assert run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"), "--variants",
               str(folder / "variants")).exit_code == 0
    with Store.open(db) as store:
        record_separating_runs(store, PROBE)
        store.sign_off(PROBE, "lead", "signed-off", "separates")
    r = create(db, tmp / "rel")
    assert r.exit_code == 1 and "link.py is a symlink" in r.output and "Traceback" not in r.output
    assert not list((tmp / "rel").iterdir())
    with Store.open(db) as store:
        assert store.pending_release(NAME, VERSION) is None and not store.release_exists(NAME, VERSION)
    assert create(db, tmp / "rel", "--without-probes").exit_code == 0


def test_no_key_of_the_environment_is_published_with_a_probe(project, monkeypatch):
    """A probe file holding an API key of this environment refuses the release (its bytes are what was signed
    off: never edited silently); a key in a stored run's reason is written as ***."""
    db, tmp, folder = project
    key = "sk-proj-PROBEKEY-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with Store.open(db) as store:  # a reason line echoing the key, recorded before a second sign-off
        record = store.probe_record(PROBE)
        intended = Variant.model_validate(next(v for v in record["variants"] if v["name"] == "intended"))
        store.record_run(OracleRun(probe_id=PROBE, variant=intended, outcome="pass", expected="pass",
                                   matches_expectation=True, modules=[ModuleResult(
                                       name="m", module_name="customized_check", passed=True, reason=f"saw {key}")]),
                         fingerprint=record["fingerprint"], by="ada")
        store.sign_off(PROBE, "lead", "signed-off", "again")
    assert create(db, tmp / "rel").exit_code == 0
    data = b"".join(p.read_bytes() for p in (tmp / "rel").rglob("*") if p.is_file())
    assert key.encode() not in data and b"saw ***" in data
    (folder / "case" / "notes.txt").write_text(f"token {key}\n")
    assert run(db, "probes", "import", str(folder / "case"), str(folder / "evaluator"), "--variants",
               str(folder / "variants")).exit_code == 0
    with Store.open(db) as store:
        record_separating_runs(store, PROBE)
        store.sign_off(PROBE, "lead", "signed-off", "separates")
    r = create(db, tmp / "rel", version="1.1.0")
    assert r.exit_code == 1 and "notes.txt holds an API key of this environment" in r.output
    assert key not in r.output
