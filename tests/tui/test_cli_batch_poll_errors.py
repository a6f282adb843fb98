"""Issue 20: a batch status request that fails (a proxy answering 503, the batch server down while waiting) never
fails the job: transient failures are retried with backoff and the results used; failures past the limit, and an
HTTP 401, stop the job with the batch deferred (``batches resume`` collects it), no request marked errored, no
error row in the ledger."""

from __future__ import annotations

import pytest
from test_cli_batches import invoke, judge_provider  # tests/tui is on sys.path (rootdir-less import)

from benchwright.core.llm.base import LLMError
from benchwright.db import Store


@pytest.fixture
def project(project_factory, tmp_path, monkeypatch):
    from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
    from benchwright.core.importers.answers import AnswerRecord

    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    db, ids = project_factory(tmp_path, n=4)
    (db.parent / "benchwright.toml").write_text(
        '[batch]\ngather_s = 0.05\npoll_interval_s = 0.01\npoll_backoff_max_s = 0.02\npoll_max_failures = 4\n'
        '[prices."j1"]\ninput = 2.0\noutput = 8.0\n', encoding="utf-8")
    checklist = Checklist(items=[ChecklistItem(key_point="Names app.py", weight=6, rubric=binary_rubric(6)),
                                 ChecklistItem(key_point="Gives the line", weight=3, rubric=binary_rubric(3)),
                                 clarity_item()])
    with Store.open(db) as store:
        for pid in ids:
            store.save_checklist(pid, checklist, author="setup")
        store.import_answers([AnswerRecord(line=i + 1, text=f"answer {i}", pair_ref=pid) for i, pid in enumerate(ids)],
                             model="m1", condition="closed-book", created_by="setup")
    return db


def _503():
    return LLMError("fake: HTTP 503: Service Unavailable", http_status=503, transient=True)


def _ledger(db):
    with Store.open(db) as store:
        calls = store.db.conn.execute("SELECT count(*), sum(status != 'ok') FROM llm_calls").fetchone()
        kinds = store.db.conn.execute("SELECT count(*) FROM llm_batch_requests WHERE result_kind IS NOT NULL "
                                      "AND result_kind != 'succeeded'").fetchone()[0]
        return calls, kinds, [str(b.status) for b in store.batches()]


def test_transient_poll_failures_are_retried_and_every_result_is_used(project):
    provider = judge_provider()
    provider.batch.poll_errors = [_503(), _503(), LLMError("fake: connection refused", transient=True)]
    r = invoke(project, ["judgments", "run", "checklist", "--model", "j1", "--batch"], provider)
    assert r.exit_code == 0, r.output
    assert "4 scored, 0 unscored" in r.output and "poll broken" not in r.output
    assert _ledger(project) == ((4, 0), 0, ["collected"])
    assert provider.batch.submissions == 1 and provider.calls == []


def test_persistent_poll_failures_defer_the_batch_without_error_rows(project):
    provider = judge_provider()
    provider.batch.poll_errors = [_503() for _ in range(4)]
    r = invoke(project, ["judgments", "run", "checklist", "--model", "j1", "--batch"], provider)
    assert r.exit_code == 0, r.output  # as for the --no-wait deferral
    out = " ".join(r.output.split())  # the console wraps long lines
    assert "batch #1 still running at the provider; `benchwright batches resume 1` collects it" in out
    assert "HTTP 503" in out and "unscored" not in out
    assert _ledger(project) == ((0, None), 0, ["submitted"])  # nothing marked errored, no ledger row
    r = invoke(project, ["batches", "resume"], provider)  # the proxy is back
    assert r.exit_code == 0 and "4 scored" in r.output, r.output
    assert _ledger(project) == ((4, 0), 0, ["collected"]) and provider.batch.submissions == 1


def test_polling_gives_up_after_poll_give_up_s_seconds_of_failures(project):
    toml = project.parent / "benchwright.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("poll_max_failures = 4", "poll_max_failures = 1000\n"
                                                             "poll_give_up_s = 0.001"), encoding="utf-8")
    provider = judge_provider()
    provider.batch.poll_errors = [_503() for _ in range(50)]
    r = invoke(project, ["judgments", "run", "checklist", "--model", "j1", "--batch"], provider)
    out = " ".join(r.output.split())
    assert r.exit_code == 0 and "batch #1 still running at the provider" in out, out
    assert "polling failed 2 times in a row" in out and len(provider.batch.poll_errors) == 48
    assert _ledger(project) == ((0, None), 0, ["submitted"])


def test_an_unauthorized_poll_is_said_and_marks_nothing_errored(project):
    provider = judge_provider()
    provider.batch.poll_errors = [LLMError("fake: HTTP 401: invalid x-api-key", http_status=401)]
    r = invoke(project, ["judgments", "run", "checklist", "--model", "j1", "--batch"], provider)
    assert r.exit_code == 1, r.output  # the user must act (the key), unlike a deferral asked for
    out = " ".join(r.output.split())
    assert "unauthorized (HTTP 401" in out and "check the API key" in out, out
    assert "`benchwright batches resume 1` collects it" in out
    assert _ledger(project) == ((0, None), 0, ["submitted"])
    assert len(provider.batch.poll_errors) == 0 and provider.batch.batches["fakebatch-1"]["polls"] == 0


def test_a_results_download_cut_in_the_middle_is_tried_again(project):
    provider = judge_provider()
    provider.batch.results_errors = [_503()]
    r = invoke(project, ["judgments", "run", "checklist", "--model", "j1", "--batch"], provider)
    assert r.exit_code == 0 and "4 scored, 0 unscored" in r.output, r.output
    assert _ledger(project) == ((4, 0), 0, ["collected"]) and provider.batch.submissions == 1


def test_the_progress_line_says_a_poll_failed_and_when_it_retries():
    from benchwright.core.llm.batch import BatchProgress

    p = BatchProgress(batches={3: {"status": "in_progress", "requests": 5, "counts": {"processing": 5},
                                   "poll_error": "poll failed (HTTP 503), retrying in 60s"}})
    assert p.line().startswith("batch #3 in_progress 0/5, poll failed (HTTP 503), retrying in 60s;")
