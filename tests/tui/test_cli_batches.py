"""``--batch`` on the LLM commands and ``benchwright batches`` end to end over the scripted provider's batch API
(core/llm/fake.py ``ScriptedBatchBackend``): one batch for a whole job, results matched out of order, errored
requests retried online and never scored, the ledger at the batch price, a rerun that submits nothing, the
``batches`` listing, usage errors."""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.llm import ScriptedProvider
from benchwright.db import Store
from benchwright.tui.cli import main

CHECKLIST = Checklist(items=[
    ChecklistItem(key_point="Names app.py", weight=6, rubric=binary_rubric(6)),
    ChecklistItem(key_point="Gives the line", weight=3, rubric=binary_rubric(3)),
    clarity_item(),
])


@pytest.fixture
def project(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    db, ids = project_factory(tmp_path, n=6)
    (db.parent / "benchwright.toml").write_text(
        '[batch]\ngather_s = 0.05\npoll_interval_s = 0.01\n[prices."j1"]\ninput = 2.0\noutput = 8.0\n',
        encoding="utf-8")
    with Store.open(db) as store:
        for pid in ids:
            store.save_checklist(pid, CHECKLIST, author="setup")
        store.import_answers([AnswerRecord(line=i + 1, text=f"answer {i}", pair_ref=pid) for i, pid in enumerate(ids)],
                             model="m1", condition="closed-book", created_by="setup")
    return db, ids


def judge_provider():
    def answer(req):
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", req.messages[0].content, re.S).group(1)
        return {"items": [{"item": 1, "rationale": f"about {cand}", "score": 6 if cand.endswith(("0", "2", "4")) else 0},
                          {"item": 2, "rationale": "no line", "score": 0},
                          {"item": 3, "rationale": "clear", "score": 1}]}

    return ScriptedProvider(answer)


def invoke(db, args, provider):
    return CliRunner().invoke(main, ["--db", str(db), *args], obj={"provider_factory": lambda config, role: provider},
                              catch_exceptions=False)


def test_a_judge_job_goes_in_one_batch_at_the_batch_price_and_a_rerun_submits_nothing(project):
    db, _ = project
    provider = judge_provider()
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "2", "--batch"], provider)
    assert r.exit_code == 0, r.output
    assert "judge checklist: 12 scored, 0 unscored" in r.output
    backend = provider.batch
    assert backend.submissions == 1 and len(backend.answered) == 12 and provider.calls == []
    with Store.open(db) as store:
        (batch,) = store.batches()
        assert batch.request_count == 12 and str(batch.status) == "collected" and batch.command[:3] == [
            "judgments", "run", "checklist"]
        rows = store.db.conn.execute("SELECT batch_id, cost_usd, input_tokens, output_tokens FROM llm_calls").fetchall()
        assert len(rows) == 12 and {r[0] for r in rows} == {batch.id}
        assert all(r[1] == pytest.approx((r[2] * 1.0 + r[3] * 4.0) / 1e6) for r in rows)  # half of $2 / $8
        js = store.judgments(judge="checklist", judge_model="j1")
        assert len(js) == 12 and sorted({j.score_rate for j in js}) == pytest.approx([0.1, 0.7])
    r = invoke(db, ["batches"], provider)
    assert r.exit_code == 0 and re.search(r"1\s+fake\s+collected\s+12\s+12\s+0\s+0\s+12\s", r.output), r.output
    r = invoke(db, ["batches", "--json"], provider)
    assert json.loads(r.output)[0]["used"] == 12
    again = judge_provider()
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "2", "--batch"], again)
    assert "nothing to do" in r.output and again.batch.submissions == 0


def test_errored_and_expired_requests_are_retried_online_and_never_scored(project):
    db, _ = project
    provider = judge_provider()
    bad = {"answer 1": "errored", "answer 3": "expired"}

    def outcome(custom_id, request):
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", request.messages[0].content, re.S).group(1)
        return bad.get(cand)

    provider.batch.outcome = outcome
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--batch"], provider)
    assert r.exit_code == 0, r.output
    assert "judge checklist: 6 scored, 0 unscored" in r.output
    assert len(provider.calls) == 2  # the errored and the expired one, online
    with Store.open(db) as store:
        kinds = dict(store.db.conn.execute(
            "SELECT result_kind, count(*) FROM llm_batch_requests GROUP BY 1").fetchall())
        assert kinds == {"succeeded": 4, "errored": 1, "expired": 1}
        online = store.db.conn.execute("SELECT count(*) FROM llm_calls WHERE batch_id IS NULL").fetchone()[0]
        assert online == 2


def test_retry_in_a_new_batch_sends_nothing_online(project):
    db, _ = project
    provider = judge_provider()
    first: dict[str, str] = {}

    def outcome(custom_id, request):  # answer 5's request errors in its first batch only (its first custom_id)
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", request.messages[0].content, re.S).group(1)
        if cand == "answer 5" and first.setdefault(cand, custom_id) == custom_id:
            return "errored"
        return None

    provider.batch.outcome = outcome
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--batch", "--retry", "batch"], provider)
    assert r.exit_code == 0 and "6 scored" in r.output, r.output
    assert provider.calls == [] and provider.batch.submissions == 2


def test_batch_options_without_batch_and_batch_with_an_agent_are_usage_errors(project):
    db, _ = project
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--retry", "batch"], judge_provider())
    assert r.exit_code == 2 and "--retry only apply with --batch" in r.output
    r = invoke(db, ["answers", "generate", "--model", "m2", "--agent", "--batch"], judge_provider())
    assert r.exit_code == 2 and "--batch is for direct answers" in r.output


def test_direct_answers_in_a_batch(project):
    db, _ = project
    provider = ScriptedProvider(lambda req: "It is in app.py.")
    r = invoke(db, ["answers", "generate", "--model", "m9", "--samples", "2", "--batch"], provider)
    assert r.exit_code == 0, r.output
    assert provider.batch.submissions == 1 and len(provider.batch.answered) == 12 and provider.calls == []
    with Store.open(db) as store:
        assert len(store.answers(model="m9")) == 12


def test_batches_when_there_are_none_and_an_unknown_batch(project):
    db, _ = project
    r = invoke(db, ["batches"], judge_provider())
    assert r.exit_code == 0 and "no batches" in r.output
    r = invoke(db, ["batches", "show", "7"], judge_provider())
    assert r.exit_code == 1 and "no batch #7" in r.output
    r = invoke(db, ["batches", "resume"], judge_provider())
    assert r.exit_code == 0 and "no batch to resume" in r.output


def _vllm_outputs(requests_file, answer) -> list[dict]:
    """What ``vllm run-batch`` writes for a requests file: one OpenAI batch output line per request, each body a
    chat completion with ``answer(body)`` as its content."""
    out = []
    for n, text in enumerate(requests_file.read_text(encoding="utf-8").splitlines()):
        line = json.loads(text)
        content = json.dumps(answer(line["body"]))
        out.append({"id": f"vllm-{n}", "custom_id": line["custom_id"], "error": None,
                    "response": {"status_code": 200, "request_id": f"req-{n}", "body": {
                        "id": f"cmpl-{n}", "object": "chat.completion", "created": 0, "model": line["body"]["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}}}})
    random.Random(3).shuffle(out)  # any order
    return out


def test_batch_file_then_import_then_the_same_command_uses_the_results(project, tmp_path):
    from benchwright.core.llm.openai_provider import OpenAIProvider

    db, _ = project
    # an openai-kind provider whose server does not exist: the file mode and the import make no call
    provider = OpenAIProvider("local", base_url="http://127.0.0.1:9/v1", api_key_env=None, max_retries=0)
    out = tmp_path / "requests.jsonl"
    args = ["judgments", "run", "checklist", "--model", "j1", "--batch-file", str(out)]
    r = invoke(db, args, provider)
    assert r.exit_code == 0, r.output
    assert "vllm run-batch -i" in r.output and "batches import" in r.output
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 6 and {ln["url"] for ln in lines} == {"/v1/chat/completions"}
    assert all(ln["method"] == "POST" and ln["body"]["response_format"]["type"] == "json_schema" for ln in lines)
    with Store.open(db) as store:
        (batch,) = store.batches()
        assert str(batch.status) == "exported" and batch.file == str(out)
        assert store.db.conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 0
    # the same command again before the results are in: nothing new is written or sent
    r = invoke(db, args, provider)
    assert r.exit_code == 0 and "not imported yet" in r.output, r.output

    def judge(body):
        cand = re.search(r"<candidate_answer>\n(.*?)\n</candidate_answer>", body["messages"][-1]["content"], re.S)
        return {"items": [{"item": 1, "rationale": f"about {cand.group(1)}", "score": 6},
                          {"item": 2, "rationale": "no line", "score": 0}, {"item": 3, "rationale": "ok", "score": 1}]}

    results = tmp_path / "results.jsonl"
    outputs = _vllm_outputs(out, judge)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(outputs[0]) + "\n{not json\n", encoding="utf-8")
    r = invoke(db, ["batches", "import", str(bad)], provider)
    assert r.exit_code == 1 and "bad.jsonl, line 2: not JSON" in r.output
    with Store.open(db) as store:  # all or nothing: the good first line was not stored either
        assert store.batch_request_counts(batch.id)["waiting"] == 6
    results.write_text("".join(json.dumps(o) + "\n" for o in outputs), encoding="utf-8")
    r = invoke(db, ["batches", "import", str(results)], provider)
    assert r.exit_code == 0 and "6 results stored" in r.output, r.output
    r = invoke(db, ["batches", "resume"], provider)
    assert r.exit_code == 0, r.output
    assert "judge checklist: 6 scored, 0 unscored" in r.output
    with Store.open(db) as store:
        assert str(store.batches()[0].status) == "collected"
        rows = store.db.conn.execute("SELECT count(*), count(batch_id), min(status) FROM llm_calls").fetchone()
        assert rows == (6, 6, "ok")


def test_batches_resume_waits_and_never_picks_new_items_of_a_limit_command(project):
    db, _ = project
    provider = judge_provider()
    provider.batch.polls = 10**6  # still running when --no-wait ends the command
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--batch", "--no-wait", "--limit", "2"], provider)
    assert r.exit_code == 0 and "collect with: benchwright batches resume" in r.output, r.output
    with Store.open(db) as store:
        assert store.db.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0
    provider.batch.polls = 0
    # one of the two is judged meanwhile by an online run: resuming the --limit 2 command must not pick a third
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--limit", "1"], judge_provider())
    assert "1 scored" in r.output, r.output
    r = invoke(db, ["batches", "resume"], provider)
    assert r.exit_code == 0, r.output
    assert "nothing new is sent" in r.output and "1 scored" in r.output
    with Store.open(db) as store:
        assert store.db.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 2
    assert provider.batch.submissions == 1 and provider.calls == []


def test_a_refused_batch_is_said_and_its_requests_go_online(project):
    db, _ = project
    provider = judge_provider()
    from benchwright.core.llm.base import LLMError

    provider.batch.fail_submit = LLMError("fake: HTTP 404 from the batch route")
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--batch", "--limit", "2"], provider)
    assert r.exit_code == 0, r.output
    assert "batch #1 was refused by the provider (fake: HTTP 404" in r.output and "full price" in r.output
    assert len(provider.calls) == 2
    r = invoke(db, ["batches"], provider)
    assert "still to collect" not in r.output


def test_a_partial_import_waits_for_the_rest_and_the_file_is_never_overwritten(project, tmp_path):
    from benchwright.core.llm.openai_provider import OpenAIProvider

    db, _ = project
    provider = OpenAIProvider("local", base_url="http://127.0.0.1:9/v1", api_key_env=None, max_retries=0)
    out = tmp_path / "requests.jsonl"
    args = ["judgments", "run", "checklist", "--model", "j1", "--batch-file", str(out)]
    assert invoke(db, args, provider).exit_code == 0
    written = out.read_text(encoding="utf-8")

    def judge(body):
        return {"items": [{"item": 1, "rationale": "x", "score": 6}, {"item": 2, "rationale": "y", "score": 0},
                          {"item": 3, "rationale": "z", "score": 1}]}

    outputs = _vllm_outputs(out, judge)
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps(o) + "\n" for o in outputs[:2]), encoding="utf-8")
    assert "2 results stored" in invoke(db, ["batches", "import", str(part)], provider).output
    r = invoke(db, args, provider)  # the two imported are used; the rest waits
    assert r.exit_code == 0 and "2 of its 6 results are imported; import the rest" in r.output, r.output
    assert out.read_text(encoding="utf-8") == written  # nothing rewritten, nothing sent
    with Store.open(db) as store:
        assert store.db.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 2
    rest = tmp_path / "rest.jsonl"
    rest.write_text("".join(json.dumps(o) + "\n" for o in outputs[2:]), encoding="utf-8")
    assert "4 results stored" in invoke(db, ["batches", "import", str(rest)], provider).output
    r = invoke(db, args, provider)
    assert "judge checklist: 4 scored, 0 unscored, 2 already judged" in r.output, r.output
    # a new job into a file that holds requests: refused, naming the file
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--runs", "2", "--batch-file", str(out)],
               provider)
    assert r.exit_code == 1 and "exists and is not empty" in r.output, r.output


def test_batches_import_of_a_file_that_is_not_ours_or_empty_fails(project, tmp_path):
    db, _ = project
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"custom_id": "bw-" + "0" * 32, "response": {"status_code": 200, "body": {}},
                                 "error": None}) + "\n", encoding="utf-8")
    r = invoke(db, ["batches", "import", str(other)], judge_provider())
    assert r.exit_code == 1 and "none of its 1 line answers a request of this project's batches" in r.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    r = invoke(db, ["batches", "import", str(empty)], judge_provider())
    assert r.exit_code == 1 and "no result lines" in r.output


def test_batches_collect_stores_the_results_without_the_command_and_cancel_drop_gives_up_a_file(project, tmp_path):
    db, _ = project
    provider = judge_provider()
    provider.batch.polls = 10**6
    r = invoke(db, ["judgments", "run", "checklist", "--model", "j1", "--batch", "--no-wait"], provider)
    assert r.exit_code == 0, r.output
    r = invoke(db, ["batches", "collect"], provider)
    assert r.exit_code == 0 and "batch #1: in_progress" in r.output, r.output
    provider.batch.polls = 0
    r = invoke(db, ["batches", "collect", "1"], provider)
    assert "batch #1: collected" in r.output, r.output
    with Store.open(db) as store:
        counts = store.batch_request_counts(1)
        assert counts["succeeded"] == 6 and counts["unused"] == 6  # stored, paid for, not yet used
        assert store.db.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0
    r = invoke(db, ["batches", "resume"], provider)
    assert "6 scored" in r.output and provider.batch.submissions == 1
    # a --batch-file batch whose results will never come: given up, a rerun sends its requests anew
    from benchwright.core.llm.openai_provider import OpenAIProvider

    local = OpenAIProvider("local", base_url="http://127.0.0.1:9/v1", api_key_env=None, max_retries=0)
    out = tmp_path / "req.jsonl"
    invoke(db, ["answers", "generate", "--model", "m7", "--limit", "2", "--batch-file", str(out)], local)
    r = invoke(db, ["batches", "cancel", "2"], local)
    assert r.exit_code == 1 and "--drop" in r.output
    r = invoke(db, ["batches", "cancel", "2", "--drop"], local)
    assert r.exit_code == 0 and "given up (2 requests that were waiting)" in r.output, r.output
    r = invoke(db, ["batches"], local)
    assert "still to collect" not in r.output
