"""``benchwright pairs leakage`` (issue 17 item 8): the rewritten pairs whose question leaks terms of the reference
answer or the checklist, each term with its kind and source, printed literally; counts; --where leakage=...,
--recheck, --min-words; errors without a traceback."""

from __future__ import annotations

import json

from test_cli_pair_texts import run

from benchwright.db import Store

ANSWER = "It reads `[bold]x_cfg[/]` in src/app/config.py and calls \x1b[31mload_settings()."


def project(tmp_path):
    db = str(tmp_path / "p.db")
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"question": "How is the configuration read at start?", "answer": ANSWER}) + "\n"
                 + json.dumps({"question": "Second?", "answer": "The session interface is used."}) + "\n"
                 + json.dumps({"question": "Third?", "answer": "No."}) + "\n", encoding="utf-8")
    assert run("--db", db, "init").exit_code == 0
    assert run("--db", db, "pairs", "import", "jsonl", str(f), "--as", "ada").exit_code == 0
    return db


def test_leaked_pairs_are_listed_with_their_terms_literally_and_counted(tmp_path):
    db = project(tmp_path)
    leaky = "How does \x1b[31mload_settings read [bold]x_cfg[/] from src/app/config.py at start?"
    r = run("--db", db, "pairs", "edit", "#1", "--question", leaky, "--as", "bo")
    assert r.exit_code == 0, r.output
    assert run("--db", db, "pairs", "edit", "#2", "--question", "Second, asked again?", "--as", "bo").exit_code == 0
    r = run("--db", db, "pairs", "leakage")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    with Store.open(db) as s:
        pid = s.resolve_pair("1")
    assert lines[0] == f"#1 {pid} (text v2 edited by bo): leaked 3 terms"
    assert "    identifier  from the reference answer  31mload_settings" in lines  # the escape's tail is a word
    assert "    identifier  from the reference answer  x_cfg" in lines
    assert "    path        from the reference answer  src/app/config.py" in lines
    assert lines[-1] == "2 rewritten pairs: 1 leaked, 1 clean; 0 checked now"
    assert "\x1b" not in r.output
    # the filter works with every command that takes --where
    r = run("--db", db, "pairs", "leakage", "--where", "leakage=clean")
    assert r.output.splitlines() == ["1 rewritten pair matching --where: 0 leaked, 1 clean; 0 checked now"]
    r = run("--db", db, "pairs", "leakage", "--where", "leakage=leaked", "--recheck")
    assert r.output.splitlines()[-1] == "1 rewritten pair matching --where: 1 leaked, 0 clean; 1 checked now"


def test_recheck_with_min_words_and_an_unchecked_old_version(tmp_path):
    db = project(tmp_path)
    with Store.open(db) as s:  # a version written without the hook: unchecked until pairs leakage
        pid = s.resolve_pair("2")
        s.save_text_version(pid, "Second: is a session interface used?", None, origin="refined", by="old", model="m")
    r = run("--db", db, "pairs", "leakage", "--where", "leakage=unchecked")
    assert r.output.splitlines() == ["1 rewritten pair matching --where: 0 leaked, 1 clean; 1 checked now"]
    r = run("--db", db, "pairs", "leakage", "--recheck", "--min-words", "2", "--as", "lead")
    assert r.exit_code == 0, r.output
    assert "    key-point   from the reference answer  session interface" in r.output.splitlines()
    assert r.output.splitlines()[-1] == "1 rewritten pair: 1 leaked, 0 clean; 1 checked now"
    with Store.open(db) as s:
        assert s.leakage_check(pid).created_by == "lead"


def test_errors_are_messages_not_tracebacks(tmp_path):
    db = project(tmp_path)
    r = run("--db", db, "pairs", "leakage", "--where", "leakage=maybe")
    assert r.exit_code != 0 and "unknown leakage filter 'maybe'" in r.output and "Traceback" not in r.output
    r = run("--db", db, "pairs", "leakage", "--min-words", "0")
    assert r.exit_code == 2 and "--min-words" in r.output
    r = run("--db", db, "pairs", "leakage")
    assert r.output.splitlines() == ["0 rewritten pairs: 0 leaked, 0 clean; 0 checked now"]
