"""Issue texts in the store: an import is one transaction (a bad file writes nothing), a re-import adds nothing,
filtered texts are listed in the batch (and never counted by the funnel as pairs), issue_texts' shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchwright.core.errors import InputFileError, NotFoundError
from benchwright.core.importers.github_issues import FORMAT, parse_github_issues
from benchwright.core.models import Repository

DATA = Path(__file__).resolve().parents[1] / "data" / "github_issues"


@pytest.fixture
def flask(store):
    store.add_repository(Repository(name="flask", version_label="3.1.1"), "ada")
    return store


def imp(store, path: Path, repo: str = "flask"):
    return store.import_issues(parse_github_issues(path, path.name, repo), annotator="ada", file_path=path,
                               repository=repo)


def test_import_then_reimport_adds_nothing(flask):
    first = imp(flask, DATA / "issues.jsonl")
    assert (first.read, first.added, first.already_present, len(first.filtered)) == (7, 5, 0, 2)
    again = imp(flask, DATA / "issues.jsonl")
    assert (again.added, again.already_present, again.batch_id) == (0, 5, None)
    assert len(flask.issues()) == 5
    batches = flask.db.conn.execute("SELECT format, added_count, filtered_count, filtered_json FROM import_batches"
                                    ).fetchall()
    assert len(batches) == 1 and batches[0][:3] == (FORMAT, 5, 2)
    listed = json.loads(batches[0][3])
    assert [f["reason"] for f in listed] == ["too short: 9 bytes < 10 (#2)", "too long: 16385 bytes > 16384 (#5)"]
    assert flask.funnel_facts()[1] == []  # left-out issue texts are no filtered pairs


def test_issue_texts_shape_and_repository_filter(flask):
    flask.add_repository(Repository(name="click", version_label="8"), "ada")
    imp(flask, DATA / "rest.json")
    imp(flask, DATA / "graphql.jsonl", repo="click")
    texts = flask.issue_texts()
    assert all(isinstance(i, str) and i.startswith("iss_") and isinstance(t, str) for i, t in texts)
    assert [t.split("\n")[0] for _, t in flask.issue_texts("flask")] == [
        "Session cookie not refreshed", "send_file with a BytesIO fails on HEAD"]
    assert len(flask.issue_texts("click")) == 2 and len(texts) == 4
    assert flask.issue_counts() == {"click": 2, "flask": 2}
    [stored] = [i for i in flask.issues("flask") if i.number == 10]
    assert stored.labels == ("session",) and stored.import_batch_id is not None and stored.created_by == "ada"


def test_a_bad_file_writes_nothing(flask):
    with pytest.raises(InputFileError, match="line 2"):
        imp(flask, DATA / "bad_line.jsonl")
    assert flask.issues() == [] and flask.db.conn.execute("SELECT count(*) FROM import_batches").fetchone()[0] == 0


def test_failure_inside_the_transaction_rolls_back(flask, monkeypatch, tmp_path):
    import benchwright.db.issues as mod

    real, calls = json.dumps, []

    def boom(*a, **k):  # the batch row's filtered_json and the first issue's labels pass; the second issue fails
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("disk went away")
        return real(*a, **k)

    monkeypatch.setattr(mod.json, "dumps", boom)
    with pytest.raises(RuntimeError):
        imp(flask, DATA / "issues.jsonl")
    monkeypatch.undo()
    assert len(calls) == 3
    assert flask.issues() == [] and flask.db.conn.execute("SELECT count(*) FROM import_batches").fetchone()[0] == 0


def test_unregistered_repository_is_refused(store):
    with pytest.raises(NotFoundError, match="repos add"):
        imp(store, DATA / "issues.jsonl", repo="nope")


def test_changed_text_of_a_known_number_is_reported_and_kept(flask, tmp_path):
    f = tmp_path / "v1.jsonl"
    f.write_text(json.dumps({"number": 9, "title": "First wording of it"}) + "\n")
    imp(flask, f)
    g = tmp_path / "v2.jsonl"
    shutil.copy(f, g)
    g.write_text(json.dumps({"number": 9, "title": "Second wording of it"}) + "\n")
    r = imp(flask, g)
    assert (r.added, r.already_present, r.changed) == (0, 1, [9])
    assert flask.issue_texts()[0][1] == "First wording of it"
