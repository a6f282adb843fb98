"""``pairs text`` / ``edit`` / ``revert`` / ``accept-text`` (issue 16 item 1): versions with origin, model, who,
when and who accepted each, the word diff against the original, compare-and-set edits, files that are not UTF-8
refused naming the file, hostile text printed literally, errors without a traceback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from benchwright.db import Store
from benchwright.tui.cli import main

MARKUP = "[bold]x[/bold] [@click=quit]q[/]"


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def project(tmp_path):
    db = str(tmp_path / "p.db")
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"question": f"How does {MARKUP} load \x1b[31mconfig\x1b[0m?", "answer": "Lazily."}) + "\n"
                 + json.dumps({"question": "Second?", "answer": "Yes."}) + "\n", encoding="utf-8")
    assert run("--db", db, "init").exit_code == 0
    assert run("--db", db, "pairs", "import", "jsonl", str(f), "--as", "ada").exit_code == 0
    with Store.open(db) as s:
        pid = s.resolve_pair("1")
        s.save_text_version(pid, f"How does the {MARKUP} app load its config at start?", "Lazily, on first use.",
                            origin="refined", by="runner", model="openai:" + MARKUP, call_ids=[4, 5])
    return db, pid


def test_text_lists_versions_and_the_diff_literally(tmp_path):
    db, _ = project(tmp_path)
    r = run("--db", db, "pairs", "text", "#1")
    assert r.exit_code == 0, r.output
    assert f"current: text v2 refined by openai:{MARKUP}" in r.output
    assert "v1   original  by ada" in r.output and "from in.jsonl line 1" in r.output
    assert f"v2*  refined   model openai:{MARKUP}  by runner" in r.output and "calls 4,5" in r.output
    assert f"How does the {MARKUP} app load its config at start?" in r.output
    assert "\x1b" not in r.output
    r = run("--db", db, "pairs", "text", "#1", "--diff")
    assert "question diff against the original:" in r.output
    assert "{+the +}" in r.output and "\u241b[31mconfig\u241b[0m-]{+app load its config at start+}?" in r.output
    assert "Lazily{+, on first use+}." in r.output
    r = run("--db", db, "pairs", "text", "#1", "--version", "1")
    assert "version 1 (original text):" in r.output and "\u241b[31mconfig" in r.output
    r = run("--db", db, "pairs", "text", "#1", "--version", "1", "--diff")
    assert "this is the original text: nothing to compare" in r.output and "diff against" not in r.output
    r = run("--db", db, "pairs", "text", "#1", "--version", "7")
    assert r.exit_code == 1 and "no text version 7 (it has versions 1 to 2)" in r.output


def test_edit_accept_revert_and_the_pair_back_in_review(tmp_path):
    db, pid = project(tmp_path)
    with Store.open(db) as s:
        s.record_decision(pid, "bob", "accept")
    qf = tmp_path / "q.md"
    qf.write_text("Edited question\nover two lines?\n", encoding="utf-8")
    r = run("--db", db, "pairs", "edit", "#1", "--question-file", str(qf), "--as", "bob")
    assert r.exit_code == 0 and "recorded text v3 edited by bob; the pair is back in review" in r.output
    r = run("--db", db, "status", "--as", "bob")
    assert ", 0 decided, 0 by bob" in r.output
    assert "back in review (their earlier reviews no longer count): 1 pair (the text changed)" in r.output
    with Store.open(db) as s:
        t = s.text_version(pid)
        assert (t.question, t.reference_answer, t.origin) == ("Edited question\nover two lines?\n",
                                                              "Lazily, on first use.", "edited")
        assert s.reopened(pid, "bob") == "text"
    r = run("--db", db, "pairs", "edit", "#1", "--answer", "Eagerly.", "--expect-version", "2", "--as", "bob")
    assert r.exit_code == 1 and "now at version 3, after you opened version 2; nothing was overwritten" in r.output
    assert "Traceback" not in r.output
    assert run("--db", db, "pairs", "accept-text", "#1", "--version", "2", "--as", "ada").exit_code == 0
    r = run("--db", db, "pairs", "revert", "#1", "--as", "bob")
    assert "recorded text v4 edited by bob, restoring v1" in r.output
    r = run("--db", db, "pairs", "revert", "#1", "--as", "bob")
    assert "unchanged" in r.output
    r = run("--db", db, "pairs", "text", "#1")
    assert "accepted by ada" in r.output and "restores v1" in r.output
    with Store.open(db) as s:
        assert s.text_version(pid).question == s.original_text(pid).question


def test_edit_refuses_bad_input_naming_it(tmp_path):
    db, _ = project(tmp_path)
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"caf\xe9?\n")
    r = run("--db", db, "pairs", "edit", "#1", "--question-file", str(bad), "--as", "bob")
    assert r.exit_code == 1 and "bad.md" in r.output and "not UTF-8 text (byte 3)" in r.output
    r = run("--db", db, "pairs", "edit", "#1", "--question-file", str(tmp_path), "--as", "bob")
    assert r.exit_code == 1 and "is a folder" in r.output
    r = run("--db", db, "pairs", "edit", "#1", "--as", "bob")
    assert r.exit_code == 1 and "nothing to edit" in r.output
    r = run("--db", db, "pairs", "edit", "#1", "--question", "x", "--question-file", str(bad), "--as", "bob")
    assert r.exit_code == 1 and "not both" in r.output
    r = run("--db", db, "pairs", "edit", "#1", "--question", "   ", "--as", "bob")
    assert r.exit_code == 1 and "must not be empty" in r.output


def test_a_one_megabyte_question_round_trips(tmp_path):
    db, pid = project(tmp_path)
    big = tmp_path / "big.md"
    text = ("word " * 200_000) + MARKUP
    big.write_text(text, encoding="utf-8")
    assert run("--db", db, "pairs", "edit", "#1", "--question-file", str(big), "--as", "bob").exit_code == 0
    with Store.open(db) as s:
        assert s.text_version(pid).question == text
    r = run("--db", db, "pairs", "text", "#1", "--diff")
    assert r.exit_code == 0 and MARKUP in r.output
