"""Issue 12 items 3 and 7 end to end over the real SDKs (httpx2.MockTransport): lone surrogates in model output and
checklist imports are stored with U+FFFD and flagged, never crash; API keys echoed in JSON ``\\u`` escapes are
scrubbed from every table and from a release."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import httpx2
import pytest
from click.testing import CliRunner

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.importers.answers import AnswerRecord
from benchwright.db import Store
from benchwright.tui.cli import main

OPENAI_KEY = "sk-test-OPENAI-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-0123456789"
CHECKLIST = Checklist(items=[
    ChecklistItem(key_point="Names app.py", weight=6, rubric=binary_rubric(6)),
    ChecklistItem(key_point="Gives the line", weight=3, rubric=binary_rubric(3)),
    clarity_item(),
])


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def judged(project_factory, tmp_path):
    db, ids = project_factory(tmp_path, n=2)
    with Store.open(db) as store:
        store.save_checklist(ids[0], CHECKLIST, author="setup")
        store.import_answers([AnswerRecord(line=1, text="answer 0", pair_ref=ids[0])], model="m1",
                             condition="closed-book", created_by="setup")
    return db, ids


# Written as the model writes it: JSON text inside the chat message, so the surrogate is a JSON escape the
# *model* produced (decoded by our parser), and a second one the *server's* JSON decodes (a raw lone surrogate in
# the message text the SDK hands over).
def judgment_text(rationale_json_escape: str = "\\udc81") -> str:
    return ('{"items": [{"item": 1, "rationale": "names it ' + rationale_json_escape + '", "score": 6}, '
            '{"item": 2, "rationale": "no line", "score": 0}, {"item": 3, "rationale": "clear", "score": 1}]}')


def openai_reply(content: str) -> httpx2.Response:
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "judge-x",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    return httpx2.Response(200, content=json.dumps(body).encode("ascii"),
                           headers={"content-type": "application/json"})


def anthropic_reply(content: str) -> httpx2.Response:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "judge-x",
            "content": [{"type": "text", "text": content}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}}
    return httpx2.Response(200, content=json.dumps(body).encode("ascii"),
                           headers={"content-type": "application/json"})


class Server:
    def __init__(self, reply):
        self.reply = reply
        self.calls = 0

    def __call__(self, request):
        self.calls += 1
        return self.reply()


def provider_of(kind: str, server: Server):
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    if kind == "openai":
        from benchwright.core.llm.openai_provider import OpenAIProvider

        return OpenAIProvider(base_url="http://llm.test/v1", http_client=client, max_retries=0)
    from benchwright.core.llm.anthropic_provider import AnthropicProvider

    return AnthropicProvider(base_url="http://llm.test", http_client=client, max_retries=0)


def invoke(db, args, provider=None):
    obj = {"provider_factory": (lambda config, role: provider)} if provider is not None else {}
    return CliRunner().invoke(main, ["--db", str(db), *args], obj=obj)


def dump_all_rows(db) -> str:
    """Every value of every table of the project, as text (JSON columns as stored and decoded)."""
    conn = sqlite3.connect(db)
    out = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f"SELECT * FROM [{table}]"):
            for v in row:
                if isinstance(v, str):
                    out.append(v)
                    with contextlib.suppress(ValueError):
                        out.append(json.dumps(json.loads(v), ensure_ascii=False))
    conn.close()
    return "\n".join(out)


@pytest.mark.parametrize("kind,reply", [("openai", openai_reply), ("anthropic", anthropic_reply)])
@pytest.mark.parametrize("where", ["model-json-escape", "server-json-escape"])
def test_a_lone_surrogate_in_a_judge_rationale_is_stored_repaired_and_flagged(judged, kind, reply, where):
    db, _ = judged
    # model-json-escape: the model wrote \udc81 inside its JSON; server-json-escape: the server's JSON carries
    # \udc81, so the SDK hands over a lone surrogate.
    content = judgment_text("\\udc81" if where == "model-json-escape" else "\udc81")
    server = Server(lambda: reply(content))
    r = invoke(db, ["judgments", "run", "checklist", "--model", "judge-x", "--as", "alice"], provider_of(kind, server))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    assert "judge checklist: 1 scored" in r.output
    assert server.calls == 1
    with Store.open(db) as store:
        calls = store.llm_calls()
        assert len(calls) == 1 and calls[0].status == "ok"  # the ledger row exists
        (j,) = store.judgments(judge="checklist")
        assert j.status == "scored"
        rationale = j.entries[0].rationale
        assert rationale == "names it \ufffd"
        assert store.text_repaired("judgments", j.id)
        assert store.text_repaired("llm_calls", calls[0].id)
    assert "\udc81" not in dump_all_rows(db)
    # A rerun takes the cached reply: no call, no crash, nothing new judged.
    r = invoke(db, ["judgments", "run", "checklist", "--model", "judge-x", "--as", "alice"], provider_of(kind, server))
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    assert server.calls == 1
    r = invoke(db, ["status"])
    assert r.exit_code == 0, r.output
    assert "U+FFFD" in r.output and "judgment" in r.output, r.output


def test_checklist_import_with_a_lone_surrogate_is_stored_repaired_and_flagged(judged, tmp_path):
    db, ids = judged
    rec = {"qa_pair_id": ids[1], "items": [
        {"kind": "knowledge", "key_point": "Names \udc81 app.py", "weight": 9,
         "rubric": [{"score": 0, "criterion": "no"}, {"score": 9, "criterion": "yes \ud800"}]},
        {"kind": "clarity", "key_point": "Clear", "weight": 1,
         "rubric": [{"score": 0, "criterion": "no"}, {"score": 1, "criterion": "yes"}]}]}
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(rec) + "\n", encoding="ascii")  # json.dumps writes the escapes
    r = invoke(db, ["checklists", "import", str(f), "--as", "alice"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    assert "U+FFFD" in r.output
    with Store.open(db) as store:
        v = store.checklist_version(ids[1])
        assert v.checklist.items[0].key_point == "Names \ufffd app.py"
        assert v.checklist.items[0].rubric[1].criterion == "yes \ufffd"
        (rowid,) = store.db.conn.execute("SELECT id FROM checklist_versions WHERE qa_pair_id = ? AND version = ?",
                                         (ids[1], v.version)).fetchone()
        assert store.text_repaired("checklist_versions", rowid)
    assert "\udc81" not in dump_all_rows(db)
    r = invoke(db, ["checklists", "show", ids[1]])
    assert r.exit_code == 0 and "\ufffd" in r.output


# ------------------------------------------------------------------------------------------------ item 7
def escaped(key: str) -> str:
    """``key`` with every other letter written as a JSON \\u escape, as a model may echo it."""
    return "".join(f"\\u{ord(c):04x}" if i % 2 and c.isalpha() else c for i, c in enumerate(key))


def checklist_text(note: str) -> str:
    return ('{"items": [{"kind": "knowledge", "key_point": "Names app.py ' + note + '", "weight": 9, "rubric": '
            '[{"score": 0, "criterion": "No."}, {"score": 9, "criterion": "Yes, ' + note + '"}]}, '
            '{"kind": "clarity", "key_point": "Clear", "weight": 1, "rubric": [{"score": 0, "criterion": "No."}, '
            '{"score": 1, "criterion": "Yes."}]}]}')


def test_a_key_echoed_in_json_escapes_reaches_no_table_and_no_release(judged, tmp_path):
    db, ids = judged
    hidden = escaped(OPENAI_KEY)
    assert OPENAI_KEY not in hidden and json.loads(f'"{hidden}"') == OPENAI_KEY
    server = Server(lambda: openai_reply(judgment_text(f"my key is {hidden}")))
    r = invoke(db, ["judgments", "run", "checklist", "--model", "judge-x", "--as", "alice"], provider_of("openai", server))
    assert r.exit_code == 0, r.output
    # A checklist generated by a model that echoes the key the same way, for the pair that gets released.
    server = Server(lambda: openai_reply(checklist_text(f"key {hidden}")))
    r = invoke(db, ["curation", "run", "checklist", "--model", "gen-x", "--pair", ids[1], "--as", "alice"],
               provider_of("openai", server))
    assert r.exit_code == 0, r.output
    assert server.calls == 1
    with Store.open(db) as store:
        (j,) = store.judgments(judge="checklist")
        assert j.entries[0].rationale == "names it my key is ***"
        v = store.checklist_version(ids[1])
        assert v.checklist.items[0].key_point == "Names app.py key ***"
        store.record_decision(ids[1], "alice", "accept")
    dump = dump_all_rows(db)
    assert OPENAI_KEY not in dump
    assert hidden not in dump and "\\u0065" not in dump
    out = tmp_path / "rel"
    r = invoke(db, ["releases", "create", "t", "--version", "1.0.0", "--out", str(out), "--as", "alice"])
    assert r.exit_code == 0, r.output
    files = [f for f in out.rglob("*") if f.is_file()]
    assert any(f.suffix == ".jsonl" for f in files)
    for f in files:
        assert OPENAI_KEY.encode() not in f.read_bytes(), f
    assert OPENAI_KEY not in dump_all_rows(db)


# ------------------------------------------------------------------------------------- imports, notes, editor
@pytest.mark.parametrize("fmt,extra", [("swe-qa", []), ("jsonl", []), ("swe-qa-categorized", [])])
def test_a_pair_import_with_lone_surrogates_is_stored_repaired_and_flagged(project_factory, tmp_path, fmt, extra):
    db, _ = project_factory(tmp_path, n=2)
    if fmt == "swe-qa-categorized":
        body = "# WHAT CATEGORIES\n## architecture\n" + json.dumps(
            {"question": "Why \udc81?", "ground_truth": "Because \ud800.", "category_type": "what"}) + "\n"
    else:
        body = (json.dumps({"question": "Fine?", "answer": "Yes."}) + "\n"
                + json.dumps({"question": "Why \udc81?", "answer": "Because \ud800 and \ud83d\ude00."}) + "\n")
    f = tmp_path / "hostile.jsonl"
    f.write_text(body, encoding="ascii")
    r = invoke(db, ["pairs", "import", fmt, str(f), "--repo", "pkg", *extra])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output and "U+FFFD" in r.output, r.output
    with Store.open(db) as store:
        (pid,) = store.find_pairs_by_question("Why \ufffd?")
        pair = store.get_pair(pid)
        assert pair.reference_answer.startswith("Because \ufffd")
        if fmt != "swe-qa-categorized":
            assert pair.reference_answer.endswith("\U0001F600.")  # an escaped pair is one character, kept
        assert store.text_repaired("qa_pairs", pid)
        assert not store.text_repaired("qa_pairs", store.find_pairs_by_question("Question number 2?")[0])
    r = invoke(db, ["status"])
    assert "U+FFFD): 1 pair\n" in r.output and "1 pairs" not in r.output
    # Importing the same file again adds nothing and flags nothing twice.
    r = invoke(db, ["pairs", "import", fmt, str(f), "--repo", "pkg", *extra])
    assert r.exit_code == 0 and "U+FFFD" not in r.output, r.output


def test_notes_editor_and_criterion_notes_never_pass_a_surrogate_to_sqlite(project_factory, tmp_path):
    """Text typed or pasted into the app goes through the store's write path, which repairs and flags it."""
    from benchwright.core.review import Criteria

    db, ids = project_factory(tmp_path, n=2)
    with Store.open(db) as store:
        note_id = store.add_note(ids[0], "alice", "pasted \udc81 bytes")
        cl = Checklist(items=[ChecklistItem(key_point="Edited \ud800 point", weight=9, rubric=binary_rubric(9)),
                              clarity_item()])
        store.save_checklist(ids[0], cl, author="alice")
        crit = Criteria(notes={"qa_consistency": "odd \udfff note"})
        decision_id = store.record_decision(ids[1], "alice", "accept", criteria=crit, notes="review \udc81 note")
        assert store.text_repaired("review_notes", note_id)
        assert store.text_repaired("review_decisions", decision_id)
        v = store.checklist_version(ids[0])
        assert v.checklist.items[0].key_point == "Edited \ufffd point"
        (rowid,) = store.db.conn.execute("SELECT id FROM checklist_versions WHERE qa_pair_id = ? AND version = ?",
                                         (ids[0], v.version)).fetchone()
        assert store.text_repaired("checklist_versions", rowid)
    dump = dump_all_rows(db)
    assert "\udc81" not in dump and "\ud800" not in dump and "\udfff" not in dump
    assert "pasted \ufffd bytes" in dump and "review \ufffd note" in dump


def test_an_answers_import_with_a_lone_surrogate_is_stored_repaired_flagged_and_reported(judged, tmp_path):
    db, ids = judged
    f = tmp_path / "answers.jsonl"
    f.write_text(json.dumps({"qa_pair_id": ids[1], "answer": "It is \udc81 there."}) + "\n", encoding="ascii")
    r = invoke(db, ["answers", "import", str(f), "--model", "m2", "--condition", "closed-book"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output and "U+FFFD" in r.output, r.output
    with Store.open(db) as store:
        (a,) = store.answers(ids[1], model="m2")
        assert a.text == "It is \ufffd there."
        assert store.text_repaired("answers", a.id)


def test_a_generated_checklist_with_a_lone_surrogate_is_stored_repaired_and_flagged(judged):
    db, ids = judged
    server = Server(lambda: openai_reply(checklist_text("\\udc81")))
    r = invoke(db, ["curation", "run", "checklist", "--model", "gen-x", "--pair", ids[1], "--as", "alice"],
               provider_of("openai", server))
    assert r.exit_code == 0, r.output
    with Store.open(db) as store:
        v = store.checklist_version(ids[1])
        assert v.checklist.items[0].key_point == "Names app.py \ufffd"
        (rowid,) = store.db.conn.execute("SELECT id FROM checklist_versions WHERE qa_pair_id = ? AND version = ?",
                                         (ids[1], v.version)).fetchone()
        assert store.text_repaired("checklist_versions", rowid)
        result = store.curation_current(ids[1])["checklist"]
        assert store.text_repaired("curation_results", result.id)


def test_a_probe_import_with_a_lone_surrogate_is_stored_repaired_and_flagged(tmp_path):
    import shutil

    from benchwright.core.probes import sample_probe_dirs

    source = next(p for p in sample_probe_dirs() if p.name == "token_clock")
    folder = tmp_path / "token_clock"
    shutil.copytree(source, folder)
    meta = folder / "variants" / "intended" / "variant.json"
    data = json.loads(meta.read_text())
    data["description"] = "is_valid \udc81 compares"
    meta.write_text(json.dumps(data), encoding="ascii")
    db = tmp_path / "p.db"
    assert invoke(db, ["init"]).exit_code == 0
    r = invoke(db, ["probes", "import", str(folder / "case"), str(folder / "evaluator"),
                    "--variants", str(folder / "variants")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    dump = dump_all_rows(db)
    assert "is_valid \ufffd compares" in dump and "\udc81" not in dump
    with Store.open(db) as store:
        assert store.text_repair_counts().get("probe_variants") == 1
