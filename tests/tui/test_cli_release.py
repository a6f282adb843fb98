"""Releases through the CLI on a reviewed project: preflight, create, verify, rebuild byte for byte,
a second version with its changelog, loading with the Hugging Face datasets library, import release."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.adjudication import Exclusion
from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.db import Store
from benchwright.tui.cli import main


def run(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def good_checklist(tag: str = "") -> Checklist:
    return Checklist(items=[
        ChecklistItem(key_point=f"Names the module{tag}", weight=5, rubric=binary_rubric(5)),
        ChecklistItem(key_point="Explains the order", weight=4, rubric=binary_rubric(4)),
        clarity_item(),
    ])


@pytest.fixture
def reviewed(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    code = tmp_path / "code"
    code.mkdir()
    assert run(db, "init").exit_code == 0
    assert run(db, "repos", "add", "demo", str(code), "--version", "1.0", "--url", "https://example.org/demo").exit_code == 0
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": f"Question {i}?", "answer": f"Answer {i}."}) + "\n" for i in range(5)))
    assert run(db, "pairs", "import", "jsonl", str(data), "--repo", "demo").exit_code == 0
    with Store.open(db) as store:
        ids = [r.id for r in store.queue_page("x", limit=10)]
        for pid in ids[:4]:
            store.save_checklist(pid, good_checklist(), author="llm", origin="generated")
        for pid in ids[:3]:
            store.record_decision(pid, "ada", "accept")
            store.record_decision(pid, "bob", "accept")
        store.record_decision(ids[3], "ada", "reject")
        store.record_decision(ids[3], "bob", "reject")
    return db, ids, tmp_path


def test_preflight_lists_what_is_included_and_why_others_are_not(reviewed):
    db, _ids, _ = reviewed
    r = run(db, "releases", "preflight", "--list")
    assert r.exit_code == 0, r.output
    assert "included: 3 pairs" in r.output
    assert "not accepted (final decision: reject)" in r.output and "not reviewed" in r.output


def test_create_verify_rebuild_and_tamper(reviewed):
    db, ids, tmp = reviewed
    out = tmp / "releases"
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out), "--as", "lead")
    assert r.exit_code == 0, r.output
    folder = out / "demo-qa-1.0.0"
    for name in ("data/test.jsonl", "data/test.parquet", "README.md", "manifest.json", "CHANGELOG.md"):
        assert (folder / name).is_file(), name
    rows = [json.loads(line) for line in (folder / "data/test.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(ids[:3])
    assert all(a.startswith("annotator-") for row in rows for a in row["annotators"])  # pseudonymous
    assert '"ada"' not in (folder / "data/test.jsonl").read_text()  # the name, not 3 letters of a hash
    assert "configs:" in (folder / "README.md").read_text()
    assert run(db, "releases", "verify", str(folder)).exit_code == 0
    # the same version again is refused; nothing is written
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(tmp / "other"))
    assert r.exit_code == 1 and "exists already and is complete (3 pairs, made " in r.output
    assert str(folder) in r.output.replace("\n", "") and not (tmp / "other").exists()
    # the same state and recorded time give the same bytes
    r = run(db, "releases", "rebuild", "demo-qa", "--version", "1.0.0", "--out", str(tmp / "again"))
    assert r.exit_code == 0, r.output
    again = tmp / "again" / "demo-qa-1.0.0"
    files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for f in files:
        assert (folder / f).read_bytes() == (again / f).read_bytes(), f
    # one changed byte is caught
    data = bytearray((folder / "data/test.jsonl").read_bytes())
    data[10] ^= 1
    (folder / "data/test.jsonl").write_bytes(bytes(data))
    r = run(db, "releases", "verify", str(folder))
    assert r.exit_code == 1 and "test.jsonl" in r.output


def test_second_version_has_a_changelog_and_names_on_request(reviewed):
    db, ids, tmp = reviewed
    out = tmp / "releases"
    assert run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out)).exit_code == 0
    with Store.open(db) as store:
        store.save_checklist(ids[0], good_checklist(" and its entry point"), author="ada")
        store.record_decision(ids[2], "ada", "reject")
        store.record_decision(ids[2], "bob", "reject")
    r = run(db, "releases", "create", "demo-qa", "--version", "1.1.0", "--out", str(out), "--with-annotators")
    assert r.exit_code == 0, r.output
    log = (out / "demo-qa-1.1.0" / "CHANGELOG.md").read_text()
    assert ids[2] in log and "and its entry point" in log
    rows = [json.loads(line) for line in (out / "demo-qa-1.1.0" / "data/test.jsonl").read_text().splitlines()]
    assert {a for row in rows for a in row["annotators"]} == {"ada", "bob"}


def test_empty_release_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "empty.db"
    assert run(db, "init").exit_code == 0
    r = run(db, "releases", "create", "x", "--version", "1.0.0", "--out", str(tmp_path / "r"))
    assert r.exit_code == 1 and "empty" in r.output and not (tmp_path / "r" / "x-1.0.0").exists()
    r = run(db, "releases", "create", "x", "--version", "one", "--out", str(tmp_path / "r"))
    assert r.exit_code == 1 and "Traceback" not in r.output


def test_release_loads_with_datasets_and_imports_back(reviewed, monkeypatch):
    db, ids, tmp = reviewed
    out = tmp / "releases"
    assert run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out)).exit_code == 0
    folder = out / "demo-qa-1.0.0"
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp / "hf-cache"
    parquet = datasets.load_dataset("parquet", data_files=str(folder / "data/test.parquet"), cache_dir=str(cache))
    jsonl = datasets.load_dataset("json", data_files=str(folder / "data/test.jsonl"), cache_dir=str(cache))
    assert parquet["train"].num_rows == 3 and jsonl["train"].num_rows == 3
    row = parquet["train"][0]
    assert row["repository"]["url"] == "https://example.org/demo"
    assert [i["weight"] for i in row["checklist"]] == [5, 4, 1]
    # import the release into a new project: same ids, checklists back
    fresh = tmp / "fresh.db"
    assert run(fresh, "init").exit_code == 0
    r = run(fresh, "releases", "import", str(folder))
    assert r.exit_code == 0 and "added 3 Q&A pairs and 3 checklists" in r.output, r.output
    r = run(fresh, "releases", "import", str(folder))
    assert "added 0 Q&A pairs and 0 checklists" in r.output  # idempotent
    with Store.open(fresh) as store:
        assert sorted(r.id for r in store.queue_page("x", limit=10)) == sorted(ids[:3])
        assert store.checklist_version(ids[0]).checklist == good_checklist()
    os.environ.pop("HF_DATASETS_OFFLINE", None)


async def test_release_screen_shows_preflight_and_creates(reviewed, monkeypatch):
    from textual.widgets import Input

    from benchwright.tui.app import BenchwrightApp
    from benchwright.tui.screens.release import ReleaseScreen

    db, _ids, tmp = reviewed
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("R")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ReleaseScreen)
            assert len(screen.preflight.included) == 3
            assert dict(screen.preflight.reasons()) == {"not accepted (final decision: reject)": 1, "not reviewed": 1}
            await pilot.press("ctrl+s")  # no name yet: refused
            await pilot.pause()
            assert screen.created is None
            screen.query_one("#release-name", Input).value = "demo-qa"
            screen.query_one("#release-version", Input).value = "2.0.0"
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()
            # written beside the project file, wherever the app was started from
            assert screen.created == Path(db).resolve().parent / "releases" / "demo-qa-2.0.0"
            assert (Path(db).resolve().parent / "releases" / "demo-qa-2.0.0" / "manifest.json").is_file()
            assert store.release_exists("demo-qa", "2.0.0")


# slow, to keep the default run short; main path: test_release_screen_shows_preflight_and_creates
@pytest.mark.slow
async def test_release_screen_includes_dropped_pairs_on_ctrl_d(reviewed):
    import json

    from textual.widgets import Input

    from benchwright.tui.app import BenchwrightApp

    db, _ids, _tmp = reviewed
    with Store.open(db) as store:
        dropped = store.release_preflight().included[0].pair.id
        store.save_curation_result(dropped, "classify", status="ok", flagged=True, by="lead",
                                   output={"rationale": "r", "code_understanding_relevant": False,
                                           "category": "Business Logic"})
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("R")
            await pilot.pause()
            screen = app.screen
            assert len(screen.preflight.included) == 2  # the dropped pair is left out by default
            assert any("classify" in reason for reason in dict(screen.preflight.reasons()))
            await pilot.press("ctrl+g")
            await pilot.pause()
            assert len(screen.preflight.included) == 3 and screen.preflight.include_dropped
            screen.query_one("#release-name", Input).value = "with-dropped"
            screen.query_one("#release-version", Input).value = "1.0.0"
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()
            manifest = json.loads((screen.created / "manifest.json").read_text())
            assert manifest["include_dropped"] is True
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("R")
            await pilot.pause()
            assert len(app.screen.preflight.included) == 2  # a new visit starts from the default again


def test_release_guards(reviewed):
    db, ids, tmp = reviewed
    out = tmp / "releases"
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0\n", "--out", str(out))
    assert r.exit_code == 1 and "X.Y.Z" in r.output and not out.exists()
    r = run(db, "releases", "create", "demo qa/x", "--version", "1.0.0", "--out", str(out))
    assert r.exit_code == 1 and "release name" in r.output
    assert run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out)).exit_code == 0
    # after a change, rebuilding the old version would give other bytes: refused, nothing left behind
    with Store.open(db) as store:
        store.save_checklist(ids[0], good_checklist(" changed"), author="ada")
    r = run(db, "releases", "rebuild", "demo-qa", "--version", "1.0.0", "--out", str(tmp / "again"))
    assert r.exit_code == 1 and "has changed" in r.output
    assert not (tmp / "again" / "demo-qa-1.0.0").exists()
    # the previous release folder moved away: the changelog cannot be made silently
    (out / "demo-qa-1.0.0").rename(tmp / "moved")
    r = run(db, "releases", "create", "demo-qa", "--version", "1.1.0", "--out", str(out))
    assert r.exit_code == 1 and "is gone" in r.output
    r = run(db, "releases", "create", "demo-qa", "--version", "1.1.0", "--out", str(out), "--previous", str(tmp / "moved"))
    assert r.exit_code == 0, r.output
    assert "First release" not in (out / "demo-qa-1.1.0" / "CHANGELOG.md").read_text()


def test_pending_assigned_reviews_keep_a_pair_out(reviewed):
    db, _ids, _ = reviewed
    with Store.open(db) as store:
        store.assign(["ada", "bob", "cy"], 3, by="lead")
        pre = store.release_preflight()
    assert pre.included == [] and pre.reasons().get("reviews pending") == 4  # cy has reviewed none of the four


def test_a_text_updated_after_review_stays_out_until_reviewed_again(reviewed):
    """`import --update` of an accepted pair (reviewed, or adjudicated) must not publish the new, unreviewed
    text as accepted: the decision was made on the earlier text."""
    db, ids, tmp = reviewed
    with Store.open(db) as store:
        store.adjudicate(ids[1], "lead", "accept", "ok")
        q0, q1 = store.get_pair(ids[0]).question, store.get_pair(ids[1]).question
    data = tmp / "changed.jsonl"
    data.write_text("".join(json.dumps({"question": q, "answer": "A new text nobody reviewed."}) + "\n"
                            for q in (q0, q1)))
    r = run(db, "pairs", "import", "jsonl", str(data), "--repo", "demo", "--update")
    assert r.exit_code == 0 and "text version 2" in r.output, r.output
    with Store.open(db) as store:
        pre = store.release_preflight()
        assert sorted(c.pair.id for c in pre.included) == [ids[2]]
        assert dict(pre.excluded)[ids[0]] == dict(pre.excluded)[ids[1]] == "text changed after review"
        store.record_decision(ids[0], "ada", "accept")
        assert ids[0] not in {c.pair.id for c in store.release_preflight().included}  # bob's review is old
        store.record_decision(ids[0], "bob", "accept")
        store.adjudicate(ids[1], "lead", "accept", "the new text is right")
        # the checklists were written from the earlier text: stale until a checklist of the new text is saved
        pre = store.release_preflight()
        assert dict(pre.excluded)[ids[0]] == dict(pre.excluded)[ids[1]] == Exclusion.STALE_CHECKLIST
        for pid in ids[:2]:
            store.save_checklist(pid, store.checklist_version(pid).checklist, author="ada")
        assert sorted(c.pair.id for c in store.release_preflight().included) == sorted(ids[:3])


def test_card_agreement_covers_the_reviewed_pairs(reviewed):
    """Issue 12 item 11: the released pairs are all accepted, so agreement over them alone is undefined; the
    card computes it over the project's reviewed pairs (3 accepted and 1 rejected by ada and bob) and says so."""
    db, _ids, tmp = reviewed
    out = tmp / "releases"
    assert run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out)).exit_code == 0
    card = (out / "demo-qa-1.0.0" / "README.md").read_text(encoding="utf-8")
    section = card.split("## Review agreement", 1)[1].split("\n## ", 1)[0]
    assert "Computed over the 4 reviewed pairs of the project" in section and "3 released pairs" in section
    decision = next(line for line in section.splitlines() if line.startswith("| decision |"))
    assert "| 1.000 |" in decision and "| 4 |" in decision and "100.0%" in decision  # Fleiss, alpha: perfect
    assert "n/a" not in decision
    # unjudged criteria have no data: n/a, not a number
    assert "n/a" in next(line for line in section.splitlines() if line.startswith("| code_relevance |"))


def test_imported_extra_fields_reach_the_release_and_are_listed(tmp_path, monkeypatch):
    """Issue 12 item 15: fields of the imported records without a column of their own (``difficulty``, a
    nested object) are kept in each row's ``extra``, and ``release create`` says which ones it carries."""
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "p.db"
    (tmp_path / "code").mkdir()
    assert run(db, "init").exit_code == 0
    assert run(db, "repos", "add", "demo", str(tmp_path / "code"), "--version", "1.0").exit_code == 0
    data = tmp_path / "pairs.jsonl"
    records = [{"question": f"Question {i}?", "answer": f"Answer {i}.", "difficulty": ["easy", "hard"][i % 2],
                **({"meta": {"origin": {"tool": "x", "n": i}, "tags": ["a", "b"]}} if i == 0 else {})}
               for i in range(3)]
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert run(db, "pairs", "import", "jsonl", str(data), "--repo", "demo").exit_code == 0
    with Store.open(db) as store:
        for r in store.queue_page("x", limit=10):
            store.save_checklist(r.id, good_checklist(), author="llm", origin="generated")
            store.record_decision(r.id, "ada", "accept")
    out = tmp_path / "releases"
    r = run(db, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "extra fields kept in `extra`: difficulty (3 pairs), meta (1 pair)" in r.output
    folder = out / "demo-qa-1.0.0"
    rows = {x["question"]: x for x in map(json.loads, (folder / "data/test.jsonl").read_text().splitlines())}
    assert rows["Question 0?"]["extra"] == {"difficulty": "easy", "meta": {"origin": {"n": 0, "tool": "x"},
                                                                            "tags": ["a", "b"]}}
    assert rows["Question 1?"]["extra"] == {"difficulty": "hard"}
    assert "| `difficulty` | 3 |" in (folder / "README.md").read_text()
    assert run(db, "releases", "verify", str(folder)).exit_code == 0
    # and back: a release imported into a new project keeps them in the store
    fresh = tmp_path / "fresh.db"
    assert run(fresh, "init").exit_code == 0 and run(fresh, "releases", "import", str(folder)).exit_code == 0
    with Store.open(fresh) as store:
        assert sorted(store.get_pair(r.id).extra.get("difficulty") for r in store.queue_page("x", limit=10)) == [
            "easy", "easy", "hard"]


def test_verify_counts_one_problem_in_the_singular(tmp_path):
    db = tmp_path / "p.db"
    Store.open(db, create=True).close()
    (tmp_path / "empty").mkdir()
    r = run(db, "releases", "verify", str(tmp_path / "empty"))
    assert r.exit_code == 1 and "manifest.json is missing" in r.output, r.output
    assert "differs from its manifest (1 problem)" in r.output, r.output
