"""Truncated output from the command line (issue 12 item 4): ``benchwright answer`` stores an answer cut off at
max_tokens flagged (never as complete) and exits 1 with a message; the retry's budget comes from benchwright.toml;
``answers show`` and ``calls`` say so."""

from __future__ import annotations

import json

from click.testing import CliRunner

from benchwright.core.llm import Reply, ScriptedProvider
from benchwright.db import Store
from benchwright.tui.cli import main


def invoke(db, args, provider=None):
    obj = {"provider_factory": (lambda config, role: provider)} if provider is not None else {}
    return CliRunner().invoke(main, ["--db", str(db), *args], obj=obj, catch_exceptions=False)


def test_answer_cut_off_twice_is_stored_flagged_and_exits_1(project_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    db, ids = project_factory(tmp_path, n=2)
    (db.parent / "benchwright.toml").write_text(
        "[roles.generator]\nmodel = \"m9\"\nmax_tokens = 40\nretry_max_tokens = 120\n", encoding="utf-8")
    cut = "It is defined in app.py, where the"
    provider = ScriptedProvider([Reply(cut, stop_reason="length"), Reply(cut + " app", stop_reason="length"),
                                 "Complete: app.py line 3."])
    r = invoke(db, ["answers", "generate", "--model", "m9", "--limit", "2"], provider)
    assert r.exit_code == 1, r.output
    assert "1 answer stored, 0 failed, 1 truncated (stored flagged)" in r.output
    assert "truncated #1" in r.output and "max_tokens 120" in r.output
    assert [c.params.get("max_tokens") for c in provider.calls] == [40, 120, 40]
    with Store.open(db) as store:
        [a] = store.answers(pair_id=ids[0], model="m9")
        assert a.text == cut + " app" and a.extra["truncated"]["max_tokens"] == 120
        calls = store.llm_calls(qa_pair_id=ids[0])
        assert [(str(c.status), c.stop_reason) for c in calls] == [("truncated", "length"), ("truncated", "length")]
    show = invoke(db, ["answers", "show", a.id])
    assert show.exit_code == 0 and "TRUNCATED" in show.output and "max_tokens 120" in show.output
    assert a.truncated == {"max_tokens": 120, "reason": a.extra["truncated"]["reason"]}
    listing = invoke(db, ["answers", "list", "--model", "m9"])
    assert listing.exit_code == 0
    rows = {line.split("\t")[0]: line for line in listing.output.splitlines() if "\t" in line}
    assert "[TRUNCATED]" in rows[a.id] and sum("[TRUNCATED]" in line for line in rows.values()) == 1
    assert "1 answer cut off at the token budget" in listing.output
    listed = invoke(db, ["calls", "--status", "truncated", "--json"])
    assert listed.exit_code == 0
    assert [json.loads(line)["stop_reason"] for line in listed.output.splitlines()] == ["length", "length"]
