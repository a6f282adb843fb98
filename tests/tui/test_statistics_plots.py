"""Issue 20 item 2: the statistics screen's plots, switched with keys 1-5 (t back to the tables), show the numbers
of ``benchwright report`` and ``benchwright agreement`` on a project built here (the judged project of
test_cli_report, plus reviews by two annotators on two days and a model whose name holds an escape and a newline);
names from data are drawn literally; a plot without data says "no data"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from test_cli_report import MODEL_A, _answer, _judgment, checklist
from test_cli_report import make_project as make_judged_project

from benchwright.core.models import Repository
from benchwright.core.review import Criteria, Verdict
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.cli import main
from benchwright.tui.screens.statistics import StatisticsScreen
from benchwright.tui.widgets_plots import PlotPanel, plot_label, plot_text

ADA = "[bold]ada[/bold]"
BOB = "bob[@click=app.quit]"
EVIL = "evil\x1b[31m\nmodel"
DAY1, DAY2 = "2026-03-02", "2026-03-04"


def _clock(monkeypatch, times):
    """Store times from ``times`` (ISO strings), in order."""
    it = iter(times)
    monkeypatch.setattr("benchwright.db.store.utc_now", lambda: next(it))


@pytest.fixture
def project(tmp_path, monkeypatch):
    db = make_judged_project(tmp_path)
    with Store.open(db) as store:
        p1, p2 = (row.id for row in store.queue_page("x", limit=10))
        with store.write() as conn:  # a model with a hostile name, judged twice (a second stability row)
            aid = _answer(conn, p2, EVIL, "agentic")
            _judgment(conn, aid, checklist(5, 2, 0), judge_model="jx")
            _judgment(conn, aid, checklist(2, 2, 0), judge_model="jx", run_index=1)
        start = datetime(2026, 3, 2, 9, tzinfo=UTC)
        times = [(start + timedelta(days=d, minutes=i)).isoformat(timespec="microseconds")
                 for i, d in enumerate([0, 0, 0, 2, 2, 2, 2, 2])]
        _clock(monkeypatch, times)

        def crit(verdict):
            return Criteria(verdicts={"qa_consistency": verdict, "checklist_quality": Verdict.PASS,
                                      "task_validity": None, "code_relevance": None})

        store.record_decision(p1, ADA, "accept", criteria=crit(Verdict.PASS))   # day 1
        store.record_decision(p2, ADA, "reject", criteria=crit(Verdict.FAIL))   # day 1
        store.record_decision(p1, BOB, "accept", criteria=crit(Verdict.PASS))   # day 1
        store.record_decision(p2, BOB, "accept", criteria=crit(Verdict.PASS))   # day 3
    return db


def _cli(*args) -> str:
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


async def _open(pilot, app):
    await pilot.pause()
    await pilot.press("S")
    await pilot.pause()
    assert isinstance(app.screen, StatisticsScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()


async def _plot(pilot, app, key: str) -> tuple[PlotPanel, str]:
    await pilot.press(key)
    await pilot.pause()
    panel = app.screen.query_one(PlotPanel)
    return panel, plot_text(panel)


async def test_plots_show_the_report_numbers_with_names_literally(project, tmp_path):
    report_file = tmp_path / "report.json"
    _cli("--db", str(project), "report", "--json", str(report_file))
    report = json.loads(report_file.read_text())
    agreement = json.loads(_cli("--db", str(project), "agreement", "--json"))["reviews"]
    with Store.open(project) as store:
        progress = {who: done for who, _assigned, done in store.annotator_progress()}
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await _open(pilot, app)
            switcher = app.screen.query_one("ContentSwitcher")
            assert switcher.current == "tables"

            panel, text = await _plot(pilot, app, "1")
            assert switcher.current == "plots" and panel.kind == "progress"
            assert dict(panel.figures) == {ADA: (2, 2), BOB: (1, 2)}  # cumulative over DAY1, DAY2
            assert {who: cum[-1] for who, cum in panel.figures} == progress
            assert DAY1 in text and DAY2 in text and "2026-03-03" not in text  # days without reviews left out
            assert ADA in text and BOB in text  # literally, markup and all

            panel, text = await _plot(pilot, app, "2")
            assert panel.kind == "agreement"
            expected = {f: a["krippendorff"]["value"] for f, a in agreement.items()
                        if a["krippendorff"]["value"] is not None}
            assert expected and dict(panel.figures) == pytest.approx(expected)
            assert "task validity: n/a" in text  # a field without an alpha is named in the caption

            panel, text = await _plot(pilot, app, "3")
            assert panel.kind == "scores"
            summary = {f"{r['model']} ({r['condition']}) · {r['judge']} / {r['judge_model']}": r["overall_pct"]
                       for r in report["summary"]}
            shown = {name: mean for name, (_counts, mean) in panel.figures}
            assert shown == pytest.approx(summary)
            assert {name: sum(counts) for name, (counts, _mean) in panel.figures} == {
                f"{r['model']} ({r['condition']}) · {r['judge']} / {r['judge_model']}": r["answers"]
                for r in report["summary"]}
            counts = dict(panel.figures)[f"{MODEL_A} (agentic) · checklist / jx"][0]
            assert counts[9] == 1 and counts[5] == 1 and sum(counts) == 2  # 90 % and 50 %
            assert MODEL_A in text  # "[red]m-a[/red]" literally
            assert "\x1b" not in text and "evil␛[31m␤model" in text  # the escape and newline made visible

            panel, text = await _plot(pilot, app, "4")
            assert panel.kind == "stability"
            stable = {f"{r['model']} ({r['condition']}) · {r['judge']} / {r['judge_model']}":
                      tuple(m["score_rate_pct"] for m in r["runs"]) for r in report["stability"] if len(r["runs"]) > 1}
            assert {name: means for name, (means, _lo, _hi) in panel.figures} == pytest.approx(stable)
            assert len(stable) == 2
            for r in report["stability"]:
                if len(r["runs"]) > 1:
                    name = f"{r['model']} ({r['condition']}) · {r['judge']} / {r['judge_model']}"
                    _means, lo, hi = dict(panel.figures)[name]
                    assert hi - lo == pytest.approx(r["range_pct"])
            assert "range 20.0 (80.0 to 100.0)" in text  # test_cli_report's hand values: 100 % and 80 %

            panel, text = await _plot(pilot, app, "5")
            assert panel.kind == "calibration" and "no data" in text

            await pilot.press("t")
            await pilot.pause()
            assert switcher.current == "tables"
        assert app.return_code in (None, 0)  # no [@click=app.quit] acted


async def test_a_project_without_data_says_no_data_on_every_plot(tmp_path):
    db = tmp_path / "empty.db"
    with Store.open(db) as store:
        store.add_repository(Repository(name="r", version_label="1"), "setup")
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await _open(pilot, app)
            for key in "12345":
                panel, text = await _plot(pilot, app, key)
                assert "no data" in text, (key, text)
                assert panel.figures == []
                assert not panel.query_one("PlotextPlot").display  # a message, not an empty axis


def test_plot_label_is_one_visible_line():
    assert plot_label("a\x1b[31m\nb\tc") == "a␛[31m␤b␉c"
    assert plot_label("[bold]x[/bold]") == "[bold]x[/bold]"
    assert plot_label("x" * 100, 10) == "x" * 9 + "…"


async def test_calibration_plot_shows_the_calibration_numbers(tmp_path):
    """The project of test_cli_judge_calibration: judge checklist:jx against ada, mean difference +0.5 overall,
    +2/3 on "[red]m-a[/red]"'s answers and +1/3 on m-b's (worked out by hand there)."""
    from test_cli_judge_calibration import project as calibration_project

    db = calibration_project.__wrapped__(tmp_path)
    data = json.loads(_cli("--db", str(db), "calibration", "--json"))
    with Store.open(db) as store:
        app = BenchwrightApp(store, "lead", resume=False)
        async with app.run_test(size=(160, 50)) as pilot:
            await _open(pilot, app)
            panel, text = await _plot(pilot, app, "5")
    shown = dict(panel.figures)
    assert shown["checklist:jx"] == pytest.approx(0.5)
    assert shown[f"checklist:jx · {MODEL_A}"] == pytest.approx(2 / 3)
    assert shown["checklist:jx · m-b"] == pytest.approx(1 / 3)
    judges = {j["label"]: j for j in data["judges"]}
    assert shown["checklist:jx"] == pytest.approx(judges["checklist:jx"]["overall"]["mean_diff"]["value"])
    assert f"checklist:jx · {MODEL_A}: n=3, exact 0.667" in text and "+0.500" in text


def test_plotext_loads_with_the_screen_not_with_the_app():
    """A fresh interpreter: the app and its queue load no plotext (a start-up benchmark watches the app's start);
    the statistics screen loads it, but not the statistics libraries (those load in its worker)."""
    import subprocess
    import sys

    code = ("import sys; import benchwright.tui.app, benchwright.tui.screens.queue; "
            "before = {m for m in sys.modules if 'plotext' in m}; "
            "import benchwright.tui.screens.statistics; "
            "print(sorted(before), 'textual_plotext' in sys.modules, 'sklearn' in sys.modules, "
            "'krippendorff' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "True", "False", "False"]


def test_calibration_labels_keep_the_model_distinguishable():
    """Finding 8: two bars of one judge and two models got the same cut label; a middle cut keeps both ends."""
    a = plot_label("checklist:sample-judge · model-alpha-2026", 24, middle=True)
    b = plot_label("checklist:sample-judge · model-beta-2026", 24, middle=True)
    assert a != b and len(a) == len(b) == 24 and a.startswith("checklist:") and "…" in a
    assert a.endswith("alpha-2026") and b.endswith("beta-2026")
    assert plot_label("short", 24, middle=True) == "short"


def test_no_data_hints_name_commands_that_parse():
    """Finding 7: every "(benchwright ...)" hint of the plots names a command the CLI knows (resolved with --help)."""
    import inspect
    import re

    from benchwright.tui import widgets_plots

    hints = re.findall(r"\(benchwright ([^),]+)", inspect.getsource(widgets_plots))
    assert len(hints) >= 2
    for hint in hints:
        result = CliRunner().invoke(main, [*hint.split(), "--help"])
        assert result.exit_code == 0, (hint, result.output)
        assert "No such command" not in result.output
