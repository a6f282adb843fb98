"""Releases: files loadable with Hugging Face ``datasets``, byte-identical re-exports, all-or-nothing writes,
verification, changelogs, read-back, pseudonymous annotators, refusals, and the layer rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from benchwright.core.checklist import (
    Checklist,
    ChecklistItem,
    ItemKind,
    RubricTier,
    binary_rubric,
    clarity_item,
)
from benchwright.core.errors import BenchwrightError
from benchwright.core.models import QAPair, Repository, SourceRef
from benchwright.exports import (
    ReleaseError,
    ReleaseRow,
    ReleaseSpec,
    changelog,
    parquet_schema,
    pseudonymize,
    read_release,
    size_category,
    verify_release,
    write_release,
)
from benchwright.exports import release as release_mod
from benchwright.exports.rows import jsonable_extra

CREATED = "2026-11-29T10:00:00.000000+00:00"
FILES = ("CHANGELOG.md", "README.md", "data/test.jsonl", "data/test.parquet", "manifest.json")


def checklist(weights=(5, 4), tiers: bool = True) -> list[ChecklistItem]:
    items = []
    for k, w in enumerate(weights):
        rubric = binary_rubric(w)
        if tiers and k == len(weights) - 1 and w > 2:
            rubric = [RubricTier(score=w, criterion="Fully."), RubricTier(score=1, criterion="Partly."),
                      RubricTier(score=0, criterion="Not at all.")]
        items.append(ChecklistItem(key_point=f"Point {k}: the loader reads `config` ({w})", weight=w, rubric=rubric))
    return [*items, clarity_item()]


def row(i: int, **over) -> ReleaseRow:
    data = {
        "id": f"qa_{i:016x}",
        "question": f"How does step {i} of the app start — über `run()`?",
        "reference_answer": f"It calls `app.run()` in src/app.py:{i + 1}.\n\n```python\nrun()\n```",
        "repository": {"name": "flask", "url": "https://github.com/pallets/flask", "commit": "a" * 40},
        "checklist": checklist(),
        "category": ("Project Architecture", "Business Logic")[i % 2],
        "qa_type": ("What", "How", "Why")[i % 3],
        "qa_subtype": None,
        "cluster_id": f"c{i % 2}",
        "cluster_name": None,
        "language": "Python",
        "theme": "Web Framework" if i % 2 else None,
        "source": {"format": "swe-qa", "file": "flask.jsonl", "line": i + 1},
        "final_decision": "accept",
        "adjudicated": i == 2,
        "annotators": ["bob", "ada"],
    }
    data.update(over)
    return ReleaseRow(**data)


def spec(version: str = "1.0.0", **over) -> ReleaseSpec:
    data = {
        "name": "flask-qa", "version": version, "created_at": CREATED, "created_by": "ada", "schema_version": 5,
        "description": "Questions about flask.", "prompt_hashes": {"checklist-generation": "p" * 64},
        "judge_hashes": {"gpt-judge": "j" * 64},
        "agreement": {"decision": {"fleiss_kappa": 0.7, "n": 40}, "criteria": {"krippendorff_alpha": 0.55, "n": 40}},
        "excluded": [("qa_x1", "not reviewed"), ("qa_x2", "not reviewed"), ("qa_x3", "draft checklist")],
    }
    data.update(over)
    return ReleaseSpec(**data)


ROWS = [row(i) for i in range(5)]


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def reseal(folder: Path, name: str) -> None:
    """Update the manifest entry of ``name`` after a test changed the file on purpose."""
    mpath = folder / "manifest.json"
    manifest = json.loads(mpath.read_text())
    manifest["files"][name] = release_mod._file_entry(folder / name)
    mpath.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


@pytest.fixture
def released(tmp_path: Path) -> Path:
    return write_release(ROWS, spec(), tmp_path / "out")


# ------------------------------------------------------------------------------------------- layout
def test_layout_and_manifest(released: Path):
    assert released.name == "flask-qa-1.0.0"
    assert sorted(files_of(released)) == sorted(FILES)
    manifest = json.loads((released / "manifest.json").read_text())
    assert manifest["n_pairs"] == 5
    assert manifest["created_at"] == CREATED
    assert manifest["schema_version"] == 5
    assert manifest["release_format"] == 2  # no pair ships a text other than the imported one (format 3 adds it)
    assert manifest["benchwright_version"]
    assert manifest["prompt_hashes"] == {"checklist-generation": "p" * 64}
    assert manifest["judge_hashes"] == {"gpt-judge": "j" * 64}
    assert manifest["excluded"] == {"draft checklist": 1, "not reviewed": 2}
    assert manifest["previous_release"] is None
    assert sorted(manifest["files"]) == sorted(f for f in FILES if f != "manifest.json")
    for name, entry in manifest["files"].items():
        assert entry == release_mod._file_entry(released / name)
    lines = (released / "data/test.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and b"\r" not in b"".join(lines)
    first = json.loads(lines[0])
    assert list(first) == sorted(first)
    want = ROWS[0].model_dump(mode="json")
    want["annotators"] = sorted(pseudonymize(a, "flask-qa") for a in ROWS[0].annotators)
    assert first == want
    assert "über" in lines[0].decode("utf-8")  # not \u-escaped
    assert [json.loads(x)["id"] for x in lines[:-1]] == sorted(r.id for r in ROWS)
    assert pq.read_schema(released / "data/test.parquet").remove_metadata().equals(parquet_schema(2))
    assert set(pq.read_metadata(released / "data/test.parquet").metadata) == {b"ARROW:schema"}  # no pandas metadata


def test_progress_is_reported(tmp_path: Path):
    calls = []
    write_release(ROWS, spec(), tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(k, 7) for k in range(1, 8)]


# ---------------------------------------------------------------------------------- datasets library
@pytest.fixture
def offline_hf(tmp_path: Path, monkeypatch):
    """The ``datasets`` library, offline, with its caches in tmp_path."""
    home = tmp_path / "hf-home"
    for var, value in (
        ("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_HOME", str(home)),
        ("HF_DATASETS_CACHE", str(home / "datasets")), ("HF_HUB_DISABLE_TELEMETRY", "1"),
    ):
        monkeypatch.setenv(var, value)
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    datasets.disable_progress_bars()
    return datasets, str(home / "datasets")


@pytest.mark.parametrize("builder", ["parquet", "json"])
def test_datasets_loads_the_release(released: Path, offline_hf, builder):
    datasets, cache = offline_hf
    data_file = released / ("data/test.parquet" if builder == "parquet" else "data/test.jsonl")
    ds = datasets.load_dataset(builder, data_files=str(data_file), cache_dir=cache)["train"]
    assert ds.num_rows == len(ROWS)
    expected = sorted(ROWS, key=lambda r: r.id)
    assert ds["id"] == [r.id for r in expected]
    first, want = ds[0], expected[0]
    assert first["question"] == want.question
    assert first["reference_answer"] == want.reference_answer
    assert first["repository"]["commit"] == "a" * 40
    assert first["source"]["line"] == 1 and first["source"]["file"] == "flask.jsonl"
    items = first["checklist"]
    assert [it["kind"] for it in items] == ["knowledge", "knowledge", "clarity"]
    assert [it["weight"] for it in items] == [5, 4, 1]
    assert items[1]["key_point"] == want.checklist[1].key_point
    assert [(t["score"], t["criterion"]) for t in items[1]["rubric"]] == [(4, "Fully."), (1, "Partly."), (0, "Not at all.")]
    assert items[2]["rubric"][1] == {"score": 1, "criterion": clarity_item().rubric[1].criterion}
    assert ds[2]["adjudicated"] is True
    assert all(a.startswith("annotator-") for a in first["annotators"])
    if builder == "parquet":
        checklist_type = str(ds.features.arrow_schema.field("checklist").type)
        assert "rubric: list<" in checklist_type and "score: int64" in checklist_type
        assert ds.features.arrow_schema.field("repository").type.field("name").type == pa.string()


# ---------------------------------------------------------------------------------------- determinism
def test_same_state_gives_byte_identical_files(tmp_path: Path):
    a = write_release(ROWS, spec(), tmp_path / "a")
    b = write_release(list(reversed(ROWS)), spec(), tmp_path / "b")
    fa, fb = files_of(a), files_of(b)
    assert sorted(fa) == sorted(FILES)
    for name in FILES:
        assert fa[name] == fb[name], name
    # also with a previous release to compare against
    a2 = write_release([*ROWS[:4], row(9)], spec("1.1.0"), tmp_path / "a", previous_dir=a)
    b2 = write_release([*ROWS[:4], row(9)], spec("1.1.0"), tmp_path / "b", previous_dir=b)
    assert files_of(a2) == files_of(b2)


def test_only_the_release_time_is_written(tmp_path: Path):
    a = write_release(ROWS, spec(), tmp_path / "a")
    b = write_release(ROWS, spec(created_at="2027-01-01T00:00:00+00:00"), tmp_path / "b")
    fa, fb = files_of(a), files_of(b)
    assert fa["data/test.jsonl"] == fb["data/test.jsonl"]
    assert fa["data/test.parquet"] == fb["data/test.parquet"]
    assert fa["README.md"] != fb["README.md"]
    assert b"2027-01-01T00:00:00+00:00" in fb["manifest.json"]


# ------------------------------------------------------------------------------------- all or nothing
@pytest.mark.parametrize("step", ["_write_jsonl", "_write_parquet", "_write_changelog", "_write_card", "_write_manifest"])
def test_interrupted_release_leaves_nothing(tmp_path: Path, monkeypatch, step):
    out = tmp_path / "out"

    def boom(*args, **kwargs):
        raise RuntimeError(f"disk on fire in {step}")

    monkeypatch.setattr(release_mod, step, boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_release(ROWS, spec(), out)
    assert not (out / "flask-qa-1.0.0").exists()
    assert list(out.iterdir()) == []  # no temporary folder either


def test_interrupt_at_the_rename_leaves_nothing(tmp_path: Path, monkeypatch):
    out = tmp_path / "out"

    def replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(release_mod.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write_release(ROWS, spec(), out)
    assert list(out.iterdir()) == []


# --------------------------------------------------------------------------------------------- verify
def test_verify_accepts_an_intact_release(released: Path):
    report = verify_release(released)
    assert report.ok, report.problems
    assert report.problems == [] and report.n_pairs == 5 and report.files_checked == 4
    assert "verified" in str(report)


def test_verify_catches_a_changed_byte(released: Path):
    p = released / "data/test.jsonl"
    data = bytearray(p.read_bytes())
    at = data.index(b"step 3")
    data[at + 5] = ord("4")
    p.write_bytes(bytes(data))
    report = verify_release(released)
    assert not report.ok
    assert any(x.startswith("data/test.jsonl: sha256 is") for x in report.problems), report.problems
    assert not any("size" in x for x in report.problems)


def test_verify_catches_a_removed_file(released: Path):
    (released / "CHANGELOG.md").unlink()
    report = verify_release(released)
    assert report.problems == ["CHANGELOG.md: listed in the manifest but missing"]


def test_verify_catches_an_extra_file(released: Path):
    (released / "data" / "notes.txt").write_text("hi")
    report = verify_release(released)
    assert report.problems == ["data/notes.txt: not listed in the manifest"]


def test_verify_catches_a_wrong_schema(released: Path):
    p = released / "data/test.parquet"
    table = pq.read_table(p)
    table = table.drop_columns(["theme"]).set_column(
        table.schema.get_field_index("adjudicated"), "adjudicated", table.column("adjudicated").cast(pa.int8())
    )
    pq.write_table(table, p)
    reseal(released, "data/test.parquet")
    report = verify_release(released)
    assert not report.ok
    assert "data/test.parquet: schema differs: column 'theme' is missing" in report.problems
    assert any("column 'adjudicated' is int8" in x for x in report.problems), report.problems
    assert all(x.startswith("data/test.parquet: schema differs") for x in report.problems)


def test_verify_catches_invalid_rows_and_manifest_fields(released: Path):
    p = released / "data/test.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1])
    bad["checklist"][0]["weight"] = "five"
    del bad["question"]
    lines[1] = json.dumps(bad, ensure_ascii=False)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reseal(released, "data/test.jsonl")
    mpath = released / "manifest.json"
    manifest = json.loads(mpath.read_text())
    del manifest["judge_hashes"]
    mpath.write_text(json.dumps(manifest))
    report = verify_release(released)
    assert "manifest.json: field 'judge_hashes' is missing" in report.problems
    assert any(x.startswith("data/test.jsonl, line 2, field '") for x in report.problems), report.problems
    assert "data/test.jsonl: 4 rows, the manifest says 5" in report.problems


def test_verify_checks_checklist_rules(released: Path):
    p = released / "data/test.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[0])
    bad["checklist"][0]["weight"] = 6  # weights now sum to 10, and the rubric lacks score 6
    lines[0] = json.dumps(bad, ensure_ascii=False)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reseal(released, "data/test.jsonl")
    report = verify_release(released)
    assert report.problems == [
        f"data/test.jsonl, line 1: the checklist of {bad['id']} breaks the checklist rules",
        f"data/test.parquet and data/test.jsonl differ for pair {bad['id']} (fields: checklist)",
    ]


def test_verify_catches_jsonl_and_parquet_saying_different_things(released: Path):
    p = released / "data/test.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["final_decision"] = "reject"  # a consistent-looking edit, resealed in the manifest
    lines[0] = json.dumps(row, ensure_ascii=False)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reseal(released, "data/test.jsonl")
    report = verify_release(released)
    assert not report.ok
    assert report.problems == [f"data/test.parquet and data/test.jsonl differ for pair {row['id']} (fields: final_decision)"]


def test_verify_of_a_folder_without_manifest(tmp_path: Path):
    assert verify_release(tmp_path).problems == ["manifest.json is missing"]
    assert not verify_release(tmp_path / "nope").ok


# ------------------------------------------------------------------------------------------ changelog
def test_changelog_between_two_releases(tmp_path: Path):
    v1 = write_release(ROWS, spec(), tmp_path)
    reweighted = checklist((6, 3))
    new_rows = [
        row(1, question="How does step 1 of the app stop?"),  # edited question (same id)
        row(2, checklist=reweighted),                          # checklist weight change
        row(3), row(4),
        row(7),                                                # added; row 0 removed
    ]
    v2 = write_release(new_rows, spec("1.1.0"), tmp_path, previous_dir=v1)
    text = (v2 / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n\n## flask-qa 1.1.0 against flask-qa 1.0.0\n")
    assert "| added | 1 |" in text and "| removed | 1 |" in text
    assert "| question or answer edited | 1 |" in text and "| checklist changed | 1 |" in text
    added = text.split("### Added (1)")[1].split("###")[0]
    removed = text.split("### Removed (1)")[1].split("###")[0]
    assert row(7).id in added and row(0).id in removed
    edited = text.split("### Edited (1)")[1].split("\n### ")[0]
    assert row(1).id in edited
    assert "How does step 1 of the app [-start — über `run()`-]{+stop+}?" in edited
    assert "reference answer:" not in edited
    changes = text.split("### Checklist changes (1)")[1]
    assert row(2).id in changes
    assert "weight: 5 -> 6" in changes and "weight: 4 -> 3" in changes
    manifest = json.loads((v2 / "manifest.json").read_text())
    prev = manifest["previous_release"]
    assert prev["name"] == "flask-qa" and prev["version"] == "1.0.0"
    assert len(prev["manifest_sha256"]) == 64
    assert verify_release(v2).ok


def test_changelog_function():
    first = changelog(None, ROWS, label="x 1.0.0")
    assert "First release: 5 pairs." in first
    same = changelog(ROWS, ROWS)
    assert "No pair changed." in same
    moved = changelog(ROWS, [row(0, repository={"name": "flask", "commit": "b" * 40}, category="Business Logic"), *ROWS[1:]])
    assert "### Other field changes (1)" in moved
    assert "commit=" + "a" * 40 in moved and "commit=" + "b" * 40 in moved
    assert "category: Project Architecture -> Business Logic" in moved
    # an answer holding a code fence stays inside one longer fence
    fenced = changelog(ROWS, [row(0, reference_answer="Now ```` four ```` ticks."), *ROWS[1:]])
    assert "`````text" in fenced


# ------------------------------------------------------------------------------------------ read back
def test_read_release_round_trip(tmp_path: Path):
    path = write_release(ROWS, spec(), tmp_path, with_annotators=True)
    manifest, rows = read_release(path)
    assert manifest["name"] == "flask-qa" and manifest["annotators"] == "named"
    assert rows == [r.model_copy(update={"annotators": ["ada", "bob"]}) for r in sorted(ROWS, key=lambda r: r.id)]
    pair, repo, cl = rows[0].to_domain()
    assert isinstance(pair, QAPair) and pair.id == ROWS[0].id and pair.repository == "flask"
    assert repo == Repository(name="flask", url="https://github.com/pallets/flask", commit="a" * 40)
    assert cl == Checklist(items=ROWS[0].checklist)


def test_read_release_refuses_a_damaged_release(released: Path):
    (released / "README.md").write_text("changed")
    with pytest.raises(ReleaseError, match=r"README\.md: size is"):
        read_release(released)


def test_from_domain():
    pair = QAPair(
        id="qa_0123456789abcdef", repository="click", question="Where?", reference_answer="Here.",
        qa_type="Where", source=SourceRef(format="jsonl", file="/home/ada/data/click.jsonl", line=3),
    )
    repo = Repository(name="click", version_label="8.1.7", local_path="/home/ada/click", language="Python", theme="CLI")
    r = ReleaseRow.from_domain(pair, repo, Checklist(items=checklist()), "accept", False, ["ada"])
    assert r.source.file == "click.jsonl"  # no local folders in a release
    assert r.repository.version_label == "8.1.7" and "local_path" not in r.repository.model_dump()
    assert (r.language, r.theme) == ("Python", "CLI")
    assert r.checklist[-1].kind is ItemKind.CLARITY
    with pytest.raises(ReleaseError, match="no reference answer"):
        ReleaseRow.from_domain(pair.model_copy(update={"reference_answer": " "}), repo, Checklist(items=checklist()),
                               "accept", False, [])


# ---------------------------------------------------------------------------------------- annotators
def test_annotators_are_pseudonymous_by_default(released: Path):
    everything = b"".join(files_of(released).values())
    assert b"ada" not in everything and b"bob" not in everything
    _, rows = read_release(released)
    expected = sorted([pseudonymize("ada", "flask-qa"), pseudonymize("bob", "flask-qa")])
    assert all(r.annotators == expected for r in rows)
    manifest = json.loads((released / "manifest.json").read_text())
    assert manifest["created_by"] == pseudonymize("ada", "flask-qa")
    assert manifest["annotators"] == "pseudonymous"


def test_pseudonyms_with_a_project_salt_and_real_names_on_request(tmp_path: Path):
    salted = write_release(ROWS, spec(pseudonym_salt="s3cret"), tmp_path / "a")
    _, rows = read_release(salted)
    assert pseudonymize("ada", "s3cret") in rows[0].annotators
    assert b"s3cret" not in b"".join(files_of(salted).values())
    named = write_release(ROWS, spec(), tmp_path / "b", with_annotators=True)
    _, rows = read_release(named)
    assert rows[0].annotators == ["ada", "bob"]
    assert json.loads((named / "manifest.json").read_text())["created_by"] == "ada"


def test_pseudonymize():
    a = pseudonymize("ada", "salt")
    assert a == pseudonymize("ada", "salt") and a.startswith("annotator-") and len(a) == len("annotator-") + 8
    assert a != pseudonymize("ada", "other") and a != pseudonymize("bob", "salt")


# ------------------------------------------------------------------------------------------- refusals
def test_refuses_an_empty_release(tmp_path: Path):
    with pytest.raises(ReleaseError, match="at least one pair"):
        write_release([], spec(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_refuses_an_existing_version(released: Path):
    before = files_of(released)
    with pytest.raises(ReleaseError, match="exists already"):
        write_release(ROWS, spec(), released.parent)
    assert files_of(released) == before
    assert sorted(p.name for p in released.parent.iterdir()) == ["flask-qa-1.0.0"]
    assert issubclass(ReleaseError, BenchwrightError)


def test_refuses_repeated_ids(tmp_path: Path):
    with pytest.raises(ReleaseError, match="repeat"):
        write_release([row(1), row(1)], spec(), tmp_path)


@pytest.mark.parametrize("field, value", [
    ("version", "1.0"), ("version", "01.0.0"), ("version", "v1.0.0"), ("created_at", "2026-11-29T10:00:00+02:00"),
    ("created_at", "yesterday"), ("name", "../up"), ("name", ""),
])
def test_spec_validation(field, value):
    with pytest.raises(ValueError, match=field if field != "name" else "release name"):
        spec(**{field: value})


# ----------------------------------------------------------------------------------------------- card
def test_dataset_card(released: Path):
    text = (released / "README.md").read_text()
    assert text.startswith("---\n")
    meta = yaml.safe_load(text[4: text.index("\n---\n", 4)])
    assert meta["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test.parquet"}]}]
    assert meta["license"] == "cc-by-4.0"
    assert meta["task_categories"] == ["question-answering"]
    assert meta["language"] == ["en"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["pretty_name"] == "flask-qa" and "code" in meta["tags"]
    body = text[text.index("\n---\n", 4):]
    assert "Questions about flask." in body
    assert "| Python | 5 | 100.0% |" in body                      # by language
    assert "| Project Architecture | 3 | 60.0% |" in body        # by category
    assert "| (none) | 3 | 60.0% |" in body                      # by theme: 3 without one
    assert "| How | 2 | 40.0% |" in body                         # by QA type
    assert "| 2 | 5 | 100.0% |" in body                          # knowledge items per checklist
    assert "| 5 | 5 | 50.0% |" in body and "| 4 | 5 | 50.0% |" in body  # weights
    assert "| 5 + 4 | 5 | 100.0% |" in body
    assert "5 binary (scores 0 or the weight), 5 multi-tier" in body
    assert "| measure | fleiss_kappa | krippendorff_alpha | n |" in body
    assert "| decision | 0.700 |  | 40 |" in body
    assert "| not reviewed | 2 |" in body and "3 pairs of the project were not released" in body
    assert "| judge `gpt-judge` | `" + "j" * 64 + "` |" in body
    assert "| adjudicated pairs | 1 (20.0%) |" in body


def test_size_categories():
    assert [size_category(n) for n in (1, 999, 1000, 9999, 10_000, 100_000, 2_000_000)] == [
        "n<1K", "n<1K", "1K<n<10K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M",
    ]


def test_agreement_of_any_shape_is_flattened(tmp_path: Path):
    path = write_release(ROWS, spec(agreement={"decision": {"kappa": 0.5}, "pairs_double_reviewed": 12}), tmp_path)
    body = (path / "README.md").read_text()
    assert "| decision / kappa | 0.500 |" in body and "| pairs_double_reviewed | 12 |" in body


# ------------------------------------------------------------------------------------------ the layer
def test_exports_load_no_ui_and_no_store():
    code = (
        "import sys, benchwright.exports, benchwright.exports.release, benchwright.exports.card\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'sqlite_utils', 'sqlite3', '_sqlite3')"
        " or m.startswith(('benchwright.db', 'benchwright.tui')))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"benchwright.exports pulled in {out.stdout.strip()}"


# ----------------------------------------------------------------------- extra fields (issue 12 item 15)
EXTRA = {"difficulty": "hard", "meta": {"tags": ["io", {"z": 1, "a": None}], "score": 0.5}, "big": 2**70}


def test_extra_fields_are_kept_in_both_data_files_and_listed_in_the_card(tmp_path: Path):
    rows = [row(0, extra=jsonable_extra(EXTRA)), row(1), row(2, extra={"difficulty": "easy"})]
    path = write_release(rows, spec(), tmp_path)
    lines = [json.loads(x) for x in (path / "data/test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0]["extra"] == {"difficulty": "hard", "meta": {"tags": ["io", {"a": None, "z": 1}], "score": 0.5},
                                 "big": str(2**70)}  # a number JSON readers cannot hold becomes its text
    assert lines[1]["extra"] == {}
    table = pq.read_table(path / "data/test.parquet")
    assert table.schema.field("extra").type == pa.string()
    assert [json.loads(x) for x in table.column("extra").to_pylist()] == [x["extra"] for x in lines]
    assert table.column("extra").to_pylist()[2] == '{"difficulty":"easy"}'
    assert verify_release(path).ok, verify_release(path)
    _manifest, back = read_release(path)
    assert back[0].to_domain()[0].extra == lines[0]["extra"]
    card = (path / "README.md").read_text(encoding="utf-8")
    assert "| `extra` |" in card
    section = card.split("### Extra fields", 1)[1].split("\n## ", 1)[0]
    assert "| `difficulty` | 2 |" in section and "| `meta` | 1 |" in section and "| `big` | 1 |" in section


def test_extra_fields_changed_are_named_in_the_changelog(tmp_path: Path):
    first = write_release([row(0, extra={"difficulty": "hard"}), row(1)], spec(), tmp_path)
    second = write_release([row(0, extra={"difficulty": "easy"}), row(1)], spec("1.1.0"), tmp_path, previous_dir=first)
    log = (second / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "extra fields changed: difficulty" in log


def test_a_release_of_format_1_without_extra_still_verifies_and_reads(released: Path):
    """Releases written before the extra field (release_format 1) stay readable."""
    jsonl = released / "data/test.jsonl"
    rows = [json.loads(x) for x in jsonl.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        del r["extra"]
    jsonl.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    table = pq.read_table(released / "data/test.parquet").drop_columns(["extra"])
    pq.write_table(table, released / "data/test.parquet")
    for name in ("data/test.jsonl", "data/test.parquet"):
        reseal(released, name)
    manifest = json.loads((released / "manifest.json").read_text())
    manifest["release_format"] = 1
    (released / "manifest.json").write_text(json.dumps(manifest))
    assert verify_release(released).ok, verify_release(released)
    assert len(read_release(released)[1]) == 5
    manifest["release_format"] = 2  # the same files claimed as format 2 lack the column
    (released / "manifest.json").write_text(json.dumps(manifest))
    assert any("'extra' is missing" in p for p in verify_release(released).problems)


def test_extra_text_that_is_not_unicode_is_an_error_naming_the_pair(tmp_path: Path):
    with pytest.raises(ReleaseError, match="qa_0000000000000000"):
        write_release([row(0, extra={"note": "bad \udc81"})], spec(), tmp_path)
    assert not list(tmp_path.iterdir()) or not any(p.name.startswith("flask-qa") for p in tmp_path.iterdir())
