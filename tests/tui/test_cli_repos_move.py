"""``benchwright repos move`` (issue 16 item 7, stale evidence) on a git repository with two commits: a moved
function, a deleted file, an untouched file, a changed line of hostile text."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from stale_evidence_repo import D_NEW, StaleFixture, git, make_stale_fixture

from benchwright.core.evidence_drift import CHANGED, DELETED, MOVED, UNCHANGED
from benchwright.db import QueueFilter, Store
from benchwright.tui.cli.root import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def run(fx: StaleFixture, *args: str):
    return CliRunner().invoke(main, ["--db", str(fx.db), *args], catch_exceptions=False)


@pytest.fixture
def fx(tmp_path) -> StaleFixture:
    return make_stale_fixture(tmp_path)


def _snapshot(db) -> dict:
    """Every table's rows (to show a refused or dry run wrote nothing)."""
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
    finally:
        conn.close()


def test_move_flags_moved_and_deleted_citations_stale_and_leaves_the_rest(fx):
    r = run(fx, "repos", "move", "demo", str(fx.new_tree), "--commit", fx.two[:10], "--as", "ada")
    assert r.exit_code == 0, r.output
    out = r.output
    assert f"moved demo@{fx.one[:12]} ({fx.checkout}) to demo@{fx.two[:12]} ({fx.new_tree})" in out
    assert "#1 stale\n   a.py:4-5 moved: now lines 8-9\n" in out
    assert "#2 stale\n   b.py:1-2 deleted\n" in out
    assert "#3 ok (1 citation unchanged)" in out
    assert "#5 ok (cites no file)" in out
    assert "totals: 5 pairs: 3 stale, 2 ok, 0 unknown" in out
    with Store.open(fx.db) as store:
        repo = store.get_repository("demo")
        assert (repo.commit, repo.local_path, repo.commit_verified) == (fx.two, str(fx.new_tree), True)
        statuses = [store.evidence_check(pid).status for pid in fx.pair_ids]
        assert statuses == ["stale", "stale", "ok", "stale", "ok"]
        first = store.evidence_check(fx.pair_ids[0])
        assert [(c.status, c.new_range) for c in first.changes] == [(MOVED, (8, 9))]
        assert first.from_pin == f"demo@{fx.one[:12]}" and first.to_pin == f"demo@{fx.two[:12]}"
        assert first.created_by == "ada"
        assert [c.status for c in store.evidence_check(fx.pair_ids[1]).changes] == [DELETED]
        assert [c.status for c in store.evidence_check(fx.pair_ids[2]).changes] == [UNCHANGED]
        (changed,) = store.evidence_check(fx.pair_ids[3]).changes
        assert changed.status == CHANGED and changed.diff.splitlines()[-1] == "+" + D_NEW.rstrip("\n")
        # reopened: only the stale pairs, with the evidence reason
        rows = store.db.conn.execute("SELECT id, reopened_at, reopened_reason FROM qa_pairs ORDER BY ordinal").fetchall()
        assert [(r[1] is not None, r[2]) for r in rows] == [
            (True, "evidence-stale"), (True, "evidence-stale"), (False, None), (True, "evidence-stale"), (False, None)]
        # the filter
        assert store.filtered_pair_ids("x", QueueFilter(evidence="stale")) == [fx.pair_ids[i] for i in (0, 1, 3)]
        assert store.filtered_pair_ids("x", QueueFilter(evidence="ok")) == [fx.pair_ids[i] for i in (2, 4)]
        assert store.filtered_pair_ids("x", QueueFilter(evidence="unchecked")) == []
        # the pin history: the first pin (registered before any move) and the new one
        pins = store.repository_pins("demo")
        assert [(p.commit, p.local_path) for p in pins] == [(fx.one, str(fx.checkout)), (fx.two, str(fx.new_tree))]
        assert pins[-1].created_by == "ada"


def test_the_diff_of_a_changed_line_is_printed_with_control_characters_visible(fx):
    r = run(fx, "repos", "move", "demo", str(fx.new_tree))
    assert r.exit_code == 0, r.output
    assert "#4 stale\n   d.py:1 changed\n      --- a/d.py\n      +++ b/d.py\n      @@ -1 +1 @@\n" in r.output
    assert '      +LABEL = "[@click=app.quit]new[/] ␛[31mred␛[0m [link=file:///etc]x[/link]"' in r.output
    assert "\x1b" not in r.output


def test_dry_run_prints_the_same_and_writes_nothing(fx):
    before = _snapshot(fx.db)
    r = run(fx, "repos", "move", "demo", str(fx.new_tree), "--commit", fx.two, "--dry-run")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("would move demo@")
    assert "#1 stale\n   a.py:4-5 moved: now lines 8-9\n" in r.output
    assert "(would be sent back to review)" in r.output and r.output.rstrip().endswith("dry run: nothing was written")
    assert _snapshot(fx.db) == before


def test_a_path_not_at_the_given_commit_is_refused_and_nothing_written(fx):
    before = _snapshot(fx.db)
    r = run(fx, "repos", "move", "demo", str(fx.new_tree), "--commit", fx.one)
    assert r.exit_code == 1
    assert f"is checked out at commit {fx.two[:12]}, not {fx.one}" in r.output
    assert "Traceback" not in r.output
    assert _snapshot(fx.db) == before


def test_a_checkout_with_uncommitted_changes_is_refused(fx):
    (fx.new_tree / "c.py").write_text("changed\n")
    before = _snapshot(fx.db)
    r = run(fx, "repos", "move", "demo", str(fx.new_tree), "--commit", fx.two)
    assert r.exit_code == 1 and "uncommitted changes to 1 tracked file (c.py)" in r.output
    # the remedy names a command that works for a registered repository (repos add refuses its name)
    assert "(benchwright repos move demo DIR)" in r.output and "repos add" not in r.output
    assert _snapshot(fx.db) == before


def test_moving_in_place_reads_the_old_commit_from_git(fx):
    git(fx.checkout, "checkout", "-q", fx.two)  # the registered folder itself now holds commit 2
    r = run(fx, "repos", "move", "demo", str(fx.checkout), "--commit", fx.two)
    assert r.exit_code == 0, r.output
    assert f"old files read from git: commit {fx.one[:12]} in {fx.checkout}" in r.output
    assert "totals: 5 pairs: 3 stale, 2 ok, 0 unknown" in r.output
    again = run(fx, "repos", "move", "demo", str(fx.checkout), "--commit", fx.two)
    assert again.exit_code == 1 and "already pinned to" in again.output


def test_old_text_unreadable_makes_pairs_unknown_not_stale(fx, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(fx.new_tree, plain, ignore=shutil.ignore_patterns(".git"))
    shutil.rmtree(fx.checkout)  # the old checkout is gone, and the plain folder has no git to read it from
    r = run(fx, "repos", "move", "demo", str(plain), "--version", "2.0")
    assert r.exit_code == 0, r.output
    assert "totals: 5 pairs: 0 stale, 1 ok, 4 unknown" in r.output
    assert "a.py:4-5 unknown (the old commit" in r.output
    # the header said "old files read from the old commit ... is not in the git repository ...": it read nothing
    assert "old files could not be read: the old commit" in r.output and "old files read from" not in r.output
    with Store.open(fx.db) as store:
        assert store.get_repository("demo").pin == "demo@2.0"
        assert store.db.conn.execute("SELECT count(*) FROM qa_pairs WHERE reopened_at IS NOT NULL").fetchone()[0] == 0
        assert len(store.filtered_pair_ids("x", QueueFilter(evidence="unknown"))) == 4


def test_derived_copies_are_listed_as_out_of_date_and_kept(fx):
    r = run(fx, "repos", "strip", "demo")
    assert r.exit_code == 0, r.output
    moved = run(fx, "repos", "move", "demo", str(fx.new_tree))
    assert moved.exit_code == 0, moved.output
    assert ("now out of date: demo-code-only (code-only copy of demo): re-run benchwright repos strip demo --as "
            "demo-code-only --force") in moved.output
    with Store.open(fx.db) as store:
        copy = store.get_repository("demo-code-only")
        assert copy.commit == fx.one  # nothing deleted or changed
    refused = run(fx, "repos", "move", "demo-code-only", str(fx.new_tree))
    assert refused.exit_code == 1 and "is the code-only copy of 'demo'" in refused.output
    # repos evidence of the copy pointed at 'repos move demo-code-only', which is the command refused above
    shown = run(fx, "repos", "evidence", "demo-code-only")
    assert shown.exit_code == 0 and "repos move demo-code-only" not in shown.output
    assert "demo-code-only is a code-only copy of demo: evidence is checked when demo moves" in shown.output


def test_repos_evidence_and_pins_print_the_latest_check_and_history(fx):
    assert run(fx, "repos", "evidence", "demo").output.startswith("no evidence checks of demo yet")
    assert "(never moved)" in run(fx, "repos", "pins", "demo").output
    run(fx, "repos", "move", "demo", str(fx.new_tree))
    out = run(fx, "repos", "evidence", "demo").output
    assert out.index("#1 stale") < out.index("#2 stale") < out.index("#4 stale") < out.index("#3 ok")
    assert "totals: 5 pairs: 3 stale, 2 ok, 0 unknown" in out
    one = run(fx, "repos", "evidence", "demo", "--pair", "#2").output
    assert f"-> demo@{fx.two[:12]}" in one and "b.py:1-2 deleted" in one
    pins = run(fx, "repos", "pins", "demo").output.splitlines()
    assert len(pins) == 2 and pins[0].endswith(f"demo@{fx.one[:12]}\t{fx.checkout}")


def test_status_counts_the_evidence_of_each_moved_repository(fx):
    assert "evidence after repos move" not in run(fx, "status").output
    run(fx, "repos", "move", "demo", str(fx.new_tree))
    assert "    evidence after repos move: 3 stale, 2 ok, 0 unknown (benchwright repos evidence demo)" in \
        run(fx, "status").output


def test_where_evidence_is_a_where_key(fx):
    from benchwright.tui.cli.common import parse_where

    assert parse_where(("evidence=stale",)).evidence == "stale"
    with pytest.raises(Exception, match="unknown evidence filter 'old'"):
        parse_where(("evidence=old",))


def test_many_pairs_print_the_first_twenty_then_counts(fx, tmp_path):
    import json

    from benchwright.core.importers import parse

    data = tmp_path / "more.jsonl"
    data.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"b.py:{1 + i % 2}"}) + "\n"
                            for i in range(30)))
    with Store.open(fx.db) as store:
        store.apply_import(parse("jsonl", data, repository="demo"), annotator="setup", file_path=data)
    out = run(fx, "repos", "move", "demo", str(fx.new_tree), "--dry-run").output
    assert "... 15 more pairs not shown (13 stale, 2 ok); --all shows every pair" in out
    assert "totals: 35 pairs: 33 stale, 2 ok, 0 unknown" in out
    listed = [line for line in out.splitlines() if line.startswith("#")]
    assert len(listed) == 20 and all(line.endswith(" stale") for line in listed)  # the stale ones first


def test_a_megabyte_line_and_invalid_utf8_in_a_changed_file_are_cut_and_replaced(fx):
    (fx.new_tree / "c.py").write_bytes(b"def h():\n    return '" + b"y" * 1_000_000 + b"\xff\xfe'\n")
    git(fx.new_tree, "commit", "-q", "-am", "three")
    r = run(fx, "repos", "move", "demo", str(fx.new_tree))
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("      +    return 'yyy"))
    assert line.endswith("… [999,616 more characters]") and len(line) < 500
    with Store.open(fx.db) as store:
        (change,) = store.evidence_check(fx.pair_ids[2]).changes
        assert change.status == CHANGED and change.diff.endswith("y\ufffd\ufffd'")  # stored whole, bytes replaced
