"""Issue 18 item 4: the 0-5 judge (Code-QA-Bench) takes the gold answer's key points as its completeness rubric when
the pair has them (``extra["gold_key_points"]``), before the checklist's; over the scripted fake."""

from __future__ import annotations

import dataclasses

from test_judging import ITEM, SETTINGS, client_for, run

from benchwright.core.judging import code_qa_bench_rubric, gold_key_points, run_judge

OUT = {d: {"rationale": "ok", "score": 4} for d in ("accuracy", "completeness", "specificity")}


def test_gold_key_points_come_from_extra_leniently():
    assert gold_key_points({"gold_key_points": [" send_file streams ", "", 3, "uses safe_join"]}) == (
        "send_file streams", "uses safe_join")
    assert gold_key_points({"gold_key_points": "one string"}) == ()
    assert gold_key_points({}) == () and gold_key_points(None) == ()


def test_gold_key_points_are_the_rubric_before_the_checklist():
    item = dataclasses.replace(ITEM, gold_key_points=("[bold]send_file[/] resolves the path with safe_join",
                                                      "It sets Content-Disposition"))
    assert code_qa_bench_rubric(item).splitlines() == ["- [bold]send_file[/] resolves the path with safe_join",
                                                       "- It sets Content-Disposition"]
    client, provider = client_for([OUT])
    o = run(run_judge("code-qa-bench", client, item, SETTINGS, 0))
    text = provider.calls[0].messages[0].content
    assert o.scored and "- It sets Content-Disposition" in text
    assert "- Names send_file as the entry point" not in text  # the checklist's key point is not used
    # without gold key points the checklist is the rubric, as before
    assert "- Names send_file as the entry point" in code_qa_bench_rubric(ITEM)
    no_checklist = dataclasses.replace(ITEM, checklist=None)
    assert "take the key points of the reference answer" in code_qa_bench_rubric(no_checklist)


def test_build_judge_input_reads_the_pairs_gold_key_points(tmp_path):
    import json as _json

    from click.testing import CliRunner

    from benchwright.db import Store
    from benchwright.tui.cli import main
    from benchwright.tui.services.judge_runs import build_judge_input

    db = str(tmp_path / "p.db")
    pairs, answers = tmp_path / "pairs.jsonl", tmp_path / "answers.jsonl"
    pairs.write_text(_json.dumps({"question": "Q?", "answer": "A.", "gold_key_points": ["k one", "k two"]}) + "\n"
                     + _json.dumps({"question": "R?", "answer": "B."}) + "\n")
    answers.write_text(_json.dumps({"question": "Q?", "answer": "x"}) + "\n" + _json.dumps({"question": "R?",
                                                                                           "answer": "y"}) + "\n")
    invoke = CliRunner().invoke
    assert invoke(main, ["--db", db, "init"]).exit_code == 0
    assert invoke(main, ["--db", db, "pairs", "import", "jsonl", str(pairs)]).exit_code == 0
    assert invoke(main, ["--db", db, "answers", "import", str(answers), "--model", "m", "--condition",
                         "documented"]).exit_code == 0
    with Store.open(db) as store:
        ids = [r[0] for r in store.db.conn.execute("SELECT a.id FROM answers a JOIN qa_pairs p ON p.id = "
                                                   "a.qa_pair_id ORDER BY p.question")]
        with_points, without = (build_judge_input(store, store.get_answer(i), "code-qa-bench") for i in ids)
    assert with_points.gold_key_points == ("k one", "k two") and without.gold_key_points == ()
    assert code_qa_bench_rubric(with_points) == "- k one\n- k two"
