"""Plural wording (issue 19 testers' finding): "1 pair", never "1 pairs", in CLI and app messages, through the one
helper :func:`benchwright.core.text.plural`."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from benchwright.core.text import plural
from benchwright.tui.cli import main


def test_plural_helper():
    assert plural(1, "pair") == "1 pair"
    assert plural(2, "pair") == "2 pairs"
    assert plural(0, "checklist") == "0 checklists"
    assert plural(1, "batch") == "1 batch" and plural(3, "batch") == "3 batches"
    assert plural(2, "Q&A pair") == "2 Q&A pairs"
    assert plural(2, "invalid record") == "2 invalid records"
    assert plural(2, "repository", "repositories") == "2 repositories"
    assert plural(1, "repository", "repositories") == "1 repository"


def _project(tmp_path: Path) -> Path:
    db = tmp_path / "p.db"
    (tmp_path / "src").mkdir()
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    assert CliRunner().invoke(main, ["--db", str(db), "repos", "add", "r", str(tmp_path / "src"), "--version", "1"]
                              ).exit_code == 0
    return db


@pytest.mark.parametrize("n", [1, 2])
def test_pairs_import_and_checklists_export_count_words(tmp_path, n):
    db = _project(tmp_path)
    f = tmp_path / "pairs.jsonl"
    f.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"A{i}."}) + "\n" for i in range(n))
                 , encoding="utf-8")
    r = CliRunner().invoke(main, ["--db", str(db), "pairs", "import", "jsonl", str(f), "--repo", "r", "--as", "t"])
    assert r.exit_code == 0, r.output
    if n == 1:
        assert "read 1 record, added 1 Q&A pair" in r.output and "1 records" not in r.output
    else:
        assert "read 2 records, added 2 Q&A pairs" in r.output
    r = CliRunner().invoke(main, ["--db", str(db), "checklists", "export", "--out", str(tmp_path / "out.jsonl")])
    assert r.exit_code == 0 and "wrote 0 checklists" in r.output, r.output


@pytest.mark.parametrize("n, words", [(1, "1 pair has a checklist"), (2, "2 pairs have a checklist")])
def test_curation_idle_lines(n, words):
    from benchwright.tui.cli.curation import _idle_line
    from benchwright.tui.screens.curation import _idle_status

    plan = SimpleNamespace(matching=n, dropped={}, human=["p"] * n, done=0)
    from benchwright.tui.services.curation_runs import IdleReason

    plan.idle_reason = IdleReason.ONLY_HUMAN_CHECKLISTS
    assert words in _idle_line("checklist", plan)
    assert words in _idle_status("checklist", plan)


@pytest.mark.parametrize("n, words", [(1, "1 call"), (2, "2 calls")])
def test_curation_result_calls(n, words):
    from benchwright.tui.screens.curation import render_result

    result = SimpleNamespace(status="failed", flagged=False, model="m", created_at="2026-12-02T10:00:00",
                             calls_made=n, reason="bad", raw_text=None, output={})
    text = render_result("classify", result).plain
    assert f"{words}\n" in text and "1 calls" not in text


def test_status_and_init_say_1_qa_pair(tmp_path):
    db = _project(tmp_path)
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"question": "Q?", "answer": "A."}) + "\n", encoding="utf-8")
    assert CliRunner().invoke(main, ["--db", str(db), "pairs", "import", "jsonl", str(f), "--repo", "r", "--as", "t"]
                              ).exit_code == 0
    r = CliRunner().invoke(main, ["--db", str(db), "status", "--as", "t"])
    assert r.exit_code == 0 and ": 1 Q&A pair," in r.output and "1 Q&A pairs" not in r.output, r.output
    r = CliRunner().invoke(main, ["--db", str(db), "init"])
    assert "(1 Q&A pair)" in r.output, r.output


@pytest.mark.parametrize("n, title, words", [(1, "warnings (imported)", "1 warning (imported):"),
                                             (2, "warnings (imported)", "2 warnings (imported):"),
                                             (1, "invalid records", "skipped 1 invalid record:"),
                                             (2, "unmatched (not imported)", "2 unmatched (not imported):")])
def test_answer_import_rows_count_words(capsys, n, title, words):
    from benchwright.tui.cli.answers import _print_rows

    _print_rows(title, [f"row {i}" for i in range(n)], verbose=False)
    assert words in capsys.readouterr().out


@pytest.mark.parametrize("batches, words", [([12], "1 result stored, 0 already stored, 0 not from this project; "
                                                    "batch #12"),
                                            ([3, 4], "; batches #3, #4")])
def test_batches_import_count_words(tmp_path, monkeypatch, batches, words):
    import benchwright.tui.services.batches as svc

    db = _project(tmp_path)
    out = SimpleNamespace(lines=1, stored=1, already=0, unknown=0, batches=batches, conflicting=0)
    monkeypatch.setattr(svc, "import_results", lambda store, results: out)
    f = tmp_path / "out.jsonl"
    f.write_text("{}\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["--db", str(db), "batches", "import", str(f)])
    assert words in r.output and "1 results" not in r.output, r.output


def test_interrupted_all_or_nothing_import_says_nothing_was_imported(tmp_path, monkeypatch):
    """SIGTERM/Ctrl+C during ``checklists import`` (one transaction): the message must not claim a partial save."""
    from benchwright.db.store import Store

    db = _project(tmp_path)

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "import_checklist_records", interrupted)
    from benchwright.core.checklist import clarity_item

    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"question": "Q?", "items": [clarity_item().model_dump(mode="json")]}) + "\n",
                 encoding="utf-8")
    r = CliRunner().invoke(main, ["--db", str(db), "checklists", "import", str(f)])
    assert r.exit_code == 130, (r.output, r.exception)
    assert "nothing was imported" in r.stderr and "what finished is saved" not in r.stderr, r.stderr


def test_interrupt_message_default_and_reset():
    from benchwright.tui import signals

    with signals.signals_as_interrupt():
        assert "what finished is saved" in signals.interrupt_message()
        signals.declare_all_or_nothing("imported")
        assert "nothing was imported" in signals.interrupt_message()
    with signals.signals_as_interrupt():  # the next command starts afresh
        assert "what finished is saved" in signals.interrupt_message()
