"""Tester findings on ``releases push`` (issue 20): ``--private`` on an existing public repository is reported and
the real visibility recorded; ``--revision`` and ``--endpoint`` are checked before any request and echoed
literally; huggingface_hub's progress bars stay off, our own one-line progress goes to stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.tui.services.hub import HubError, check_endpoint, check_revision

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hub_server import FakeHub
from test_release_push import TOKEN, project, pushes, run  # noqa: F401  (project: the fixture used below)


def test_private_on_an_existing_public_repo_warns_and_records_public(project):  # noqa: F811 (the imported fixture)
    db, folder, _waits = project
    with FakeHub(tokens={TOKEN}) as hub:
        assert run(db, "releases", "push", str(folder), "--repo-id", "acme/pub", "--endpoint", hub.url).exit_code == 0
        r = CliRunner().invoke(__import__("benchwright.tui.cli", fromlist=["main"]).main,
                               ["--db", str(db), "releases", "push", str(folder), "--repo-id", "acme/pub",
                                "--endpoint", hub.url, "--private"])
        assert r.exit_code == 0, r.output
        assert not hub.repos["acme/pub"]["private"]
    assert "the repo acme/pub exists and is public: --private changed nothing; change it on the Hub" in r.stderr
    assert [p["private"] for p in pushes(db)] == [False, False]


@pytest.mark.parametrize("revision", ["v1\x1b[31m", "a b", "a..b", "x~1", "x^", "a:b", "-?", "a*", "[x", "a\\b",
                                      "/x", "x/", "x.", "x.lock", ".x", "a//b", "a@{b", "@", "a\u202eb"])
def test_a_bad_revision_is_refused_literally_before_any_request(project, revision):  # noqa: F811 (the imported fixture)
    db, folder, _waits = project
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url,
                "--revision", revision)
        assert hub.calls == []
    assert r.exit_code != 0
    assert "--revision" in r.output and "not a valid branch name" in r.output
    assert "\x1b" not in r.output and "\u202e" not in r.output
    assert pushes(db) == []


def test_good_revisions_pass():
    for revision in ("main", "v1.0.0", "release/2026-12", "feature_x", "refs-like/a.b"):
        assert check_revision(revision) == revision


@pytest.mark.parametrize("endpoint", ["ftp://hub.example", "file:///tmp/x", "hub.example", "https://", "http://a b",
                                      "https://h\x1b[2J"])
def test_a_non_http_endpoint_is_refused_before_any_request(project, endpoint):  # noqa: F811 (the imported fixture)
    db, folder, waits = project
    r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", endpoint)
    assert r.exit_code != 0
    assert "--endpoint" in r.output and "expected an http:// or https:// URL" in r.output
    assert "\x1b" not in r.output
    assert waits == [] and pushes(db) == []
    with pytest.raises(HubError):
        check_endpoint(endpoint)


def test_hub_progress_bars_are_off_and_our_progress_is_one_line(project, monkeypatch):  # noqa: F811 (the imported fixture)
    from huggingface_hub.utils import are_progress_bars_disabled

    from benchwright.tui.services import hub as hub_service

    seen = []
    real = hub_service._commit

    def spy(*args, **kwargs):
        seen.append(are_progress_bars_disabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(hub_service, "_commit", spy)
    db, folder, _waits = project
    before = are_progress_bars_disabled()
    with FakeHub(tokens={TOKEN}) as hub:
        r = run(db, "releases", "push", str(folder), "--repo-id", "acme/golden", "--endpoint", hub.url)
    assert r.exit_code == 0, r.output
    assert seen == [True]
    assert are_progress_bars_disabled() == before  # put back as it was
    assert "commit attempt 1 of 4: 5 files\n" in r.stderr
    assert "it/s" not in r.stderr and "%|" not in r.stderr
