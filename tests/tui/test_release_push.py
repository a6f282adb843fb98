"""``benchwright releases push`` (issue 20 item 4) against a loopback fake Hub (tests/hub_server.py): the routes
huggingface_hub calls, the files that land (names and bytes), a refused token, interrupted commits retried,
``--private``, ``--revision``, the alias ``release push``, the record in the project, and ``datasets`` reading the
release folder with the card's YAML header. No network, no real token."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchwright.db import Store
from benchwright.tui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hub_server import FakeHub

GOLDEN = Path(__file__).resolve().parents[1] / "exports" / "golden_release" / "format4" / "golden-1.0.0"
TOKEN = "hf_good_test_token_0123456789"


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project, a copy of a verified release folder, the token in HF_TOKEN, Xet off (not faked) and
    no waiting between commit attempts."""
    from huggingface_hub import constants

    from benchwright.tui.services import hub

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    # huggingface_hub reads HF_HUB_OFFLINE once, at import: imported first under the offline datasets fixture of
    # tests/exports/test_release.py (one pytest process in CI), it would refuse every call to the fake Hub
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    waits: list[float] = []
    monkeypatch.setattr(hub.time, "sleep", waits.append)  # huggingface_hub's own backoff waits land here too
    db = tmp_path / "p.db"
    assert run(db, "init").exit_code == 0
    folder = tmp_path / "golden-1.0.0"
    shutil.copytree(GOLDEN, folder)
    return db, folder, waits


def release_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def pushes(db: Path) -> list[dict]:
    with Store.open(db) as store:
        return store.release_pushes()


def test_push_creates_the_repo_and_commits_every_file_of_the_release_once(project):
    db, folder, _waits = project
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url, "--as", "ada")
        assert r.exit_code == 0, r.output
        assert hub.files("acme/golden") == release_files(folder)  # names and bytes, manifest.json included
        routes = [(m, p) for m, p in hub.calls if not p.startswith("/lfs/")]
        assert routes == [
            ("POST", "/api/repos/create"),
            ("GET", "/api/datasets/acme/golden"),  # repo_info: the visibility recorded is the Hub's
            ("POST", "/api/validate-yaml"),
            ("POST", "/api/datasets/acme/golden/preupload/main"),
            ("POST", "/datasets/acme/golden.git/info/lfs/objects/batch"),
            ("POST", "/api/datasets/acme/golden/commit/main"),
        ]
        parquet = (folder / "data" / "test.parquet").read_bytes()
        assert ("PUT", f"/lfs/{__import__('hashlib').sha256(parquet).hexdigest()}") in hub.calls
        assert hub.created[0]["type"] == "dataset" and "visibility" not in hub.created[0]
        assert not hub.repos["acme/golden"]["private"]
        assert hub.repos["acme/golden"]["commits"][0]["summary"] == "benchwright release golden 1.0.0"
        assert set(hub.authorizations) == {f"Bearer {TOKEN}"}
        oid = hub.repos["acme/golden"]["commits"][0]["oid"]
    assert TOKEN not in r.output
    assert "pushed golden 1.0.0 (5 files) to acme/golden (revision main)" in r.output
    assert oid in r.output
    (rec,) = pushes(db)
    assert rec["release_name"] == "golden" and rec["release_version"] == "1.0.0"
    assert rec["repo_id"] == "acme/golden" and rec["revision"] == "main" and rec["private"] is False
    assert rec["commit_oid"] == oid and rec["commit_url"].endswith(f"/commit/{oid}")
    assert rec["pushed_by"] == "ada" and rec["endpoint"] == hub.url
    assert TOKEN.encode() not in db.read_bytes()
    listed = run(db, "releases", "pushes", "golden")
    assert listed.exit_code == 0 and f"golden 1.0.0\tacme/golden@main\t{rec['commit_url']}" in listed.output
    assert "ada" in listed.output
    assert run(db, "releases", "pushes", "other").output == "no push recorded for other\n"


def test_private_and_revision_reach_the_hub_and_the_record(project):
    db, folder, _waits = project
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url,
                "--private", "--revision", "v1.0.0")
        assert r.exit_code == 0, r.output
        assert hub.created[0]["visibility"] == "private" and hub.repos["acme/golden"]["private"]
        assert ("POST", "/api/datasets/acme/golden/branch/v1.0.0") in hub.calls
        assert ("POST", "/api/datasets/acme/golden/commit/v1.0.0") in hub.calls
        assert hub.files("acme/golden", "v1.0.0") == release_files(folder)
        assert hub.files("acme/golden", "main") == {}
        # a second push to the same repository and branch: the repo and branch exist (409 is fine), a new commit
        r = run(db, "release", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url,
                "--revision", "v1.0.0")
        assert r.exit_code == 0, r.output
        assert len(hub.repos["acme/golden"]["commits"]) == 2
    # the second push did not ask for --private, but the repository is private: the record says what the Hub says
    assert [(p["revision"], p["private"]) for p in pushes(db)] == [("v1.0.0", True), ("v1.0.0", True)]


def test_a_refused_token_is_a_clear_error_and_nothing_is_recorded(project, monkeypatch):
    db, folder, _waits = project
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_token_987")
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
        assert not any(p.endswith("/commit/main") for _, p in hub.calls)
        assert hub.repos == {}
    assert r.exit_code == 1
    assert "refused the token (HTTP 401)" in r.output and "nothing was pushed" in r.output
    assert "hf_wrong_token_987" not in r.output
    assert pushes(db) == []


def test_no_token_at_all_is_refused_before_any_request(project, monkeypatch, tmp_path):
    db, folder, _waits = project
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no stored login either
    monkeypatch.setattr("huggingface_hub.constants.HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
    monkeypatch.setattr("huggingface_hub.constants.HF_STORED_TOKENS_PATH", str(tmp_path / "hf-home" / "stored"))
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
        assert hub.calls == []
    assert r.exit_code == 1 and "no Hugging Face token" in r.output and "HF_TOKEN" in r.output
    assert pushes(db) == []


@pytest.mark.parametrize("fail, drop", [(2, 0), (0, 1), (1, 1)], ids=["500-twice", "dropped", "dropped-then-500"])
def test_an_interrupted_commit_is_sent_again_and_then_succeeds(project, fail, drop):
    db, folder, _waits = project
    with FakeHub(tokens={TOKEN}, fail_commits=fail, drop_commits=drop) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
        assert r.exit_code == 0, r.output
        assert hub.commit_attempts == fail + drop + 1
        assert len(hub.repos["acme/golden"]["commits"]) == 1
        assert hub.files("acme/golden") == release_files(folder)
        assert sum(m == "PUT" for m, _ in hub.calls) == 1  # the Parquet file went up once, not once per commit
    assert f"{fail + drop + 1} attempts" in r.output
    assert len(pushes(db)) == 1


def test_a_dropped_large_file_upload_is_sent_again_by_huggingface_hub(project):
    db, folder, waits = project
    with FakeHub(tokens={TOKEN}, drop_uploads=1) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
        assert r.exit_code == 0, r.output
        assert sum(m == "PUT" for m, _ in hub.calls) == 2 and hub.commit_attempts == 1
        assert hub.files("acme/golden") == release_files(folder)
    assert waits  # huggingface_hub's backoff waited before the second PUT
    assert len(pushes(db)) == 1


def test_a_commit_that_keeps_failing_gives_up_without_a_record(project):
    db, folder, waits = project
    with FakeHub(tokens={TOKEN}, fail_commits=10) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
        assert hub.commit_attempts == 4
    assert waits == [2.0, 4.0, 8.0]  # doubling waits between the commits, none after the last
    assert r.exit_code == 1 and "failed after 4 attempts" in r.output and "HTTP 500" in r.output
    assert pushes(db) == []


def test_an_unverified_folder_is_refused_before_the_hub_is_called(project):
    db, folder, _waits = project
    card = folder / "README.md"
    card.write_bytes(card.read_bytes() + b"\nedited after release\n")
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
        assert hub.calls == []
    assert r.exit_code == 1
    assert "not pushed: the release does not verify" in r.output and "README.md" in r.output
    assert pushes(db) == []


@pytest.mark.parametrize("repo_id", ["golden", "a/b/c", "acme/", "acme/../x", "acme/na me"])
def test_a_bad_repo_id_names_the_option(project, repo_id):
    db, folder, _waits = project
    r = run(db, "releases", "push", str(folder), "--repo-id", repo_id, "--endpoint", "http://127.0.0.1:9")
    assert r.exit_code == 1 and "--repo-id" in r.output and "ORG/NAME" in r.output


def test_the_card_header_has_what_the_hub_and_datasets_expect(project):
    _db, folder, _waits = project
    text = (folder / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(text[4:text.index("\n---\n", 4)])
    assert meta["license"] == "cc-by-4.0"
    assert meta["task_categories"] == ["question-answering"]
    assert meta["size_categories"] == ["n<1K"] and meta["pretty_name"] and isinstance(meta["tags"], list)
    assert meta["configs"] == [{"config_name": "default",
                                "data_files": [{"split": "test", "path": "data/test.parquet"}]}]


def test_datasets_loads_the_release_folder_through_its_card(project, tmp_path, monkeypatch):
    """``load_dataset(FOLDER)`` reads the configs of README.md's header (only the Parquet file, not the JSONL)."""
    import datasets

    _db, folder, _waits = project
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = datasets.load_dataset(str(folder), split="test", cache_dir=str(tmp_path / "cache"))
    manifest = json.loads((folder / "manifest.json").read_text())
    rows = [json.loads(line) for line in (folder / "data" / "test.jsonl").read_bytes().split(b"\n") if line]
    assert ds.num_rows == manifest["n_pairs"] == len(rows)
    assert ds["id"] == [r["id"] for r in rows]
    assert ds["question"] == [r["question"] for r in rows]


def test_a_custom_license_becomes_other_with_its_name():
    from benchwright.exports.card import front_matter
    from benchwright.exports.rows import ReleaseSpec

    spec = ReleaseSpec(name="b", version="1.0.0", created_at="2026-12-02T00:00:00+00:00",
                       created_by="ada", schema_version=1, license="Acme Internal 2.0")
    meta = front_matter(3, spec)
    assert meta["license"] == "other" and meta["license_name"] == "acme-internal-2.0"
    assert front_matter(3, spec.model_copy(update={"license": "MIT"}))["license"] == "mit"
    assert "license_name" not in front_matter(3, spec.model_copy(update={"license": "apache-2.0"}))
