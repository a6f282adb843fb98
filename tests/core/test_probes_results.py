"""Model results on NITR cases (core/probes/results.py): reading NITR's pass matrix and design matrix, and the
aggregates of the paper's Table 3. The golden test reads the shared copy of NITR's own files."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.core.errors import InputFileError, NotFoundError
from benchwright.core.probes.results import (
    CaseInfo,
    CaseResult,
    case_number,
    configuration_name,
    merge_case_infos,
    parse_case_selection,
    parse_configuration,
    read_case_docs,
    read_design_matrix,
    read_pass_matrix,
    results_report,
)

NITR_DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr" / "docs"


def _nitr_docs() -> Path:
    if not (NITR_DOCS / "model_case_pass_matrix.csv").is_file():
        pytest.skip(f"real data {NITR_DOCS} is absent (the shared data folder ../shared/data is not checked out here)")
    return NITR_DOCS


def _write(tmp_path: Path, text: str, name: str = "matrix.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


HEADER = "model,001,002,003,pass_count,total_count,pass_rate\n"


# --------------------------------------------------------------------------------------------- golden
def test_the_shared_pass_matrix_reproduces_the_papers_table_3():
    """NITR, Table 3 and its discussion: micro 123/230, multi-step 52/253; API 53/120 vs 18/132, agent 70/110 vs
    34/121; D6 2/46 = 4.3 %, D3 15.2 %, D5 26.1 %, D2 31.9 %, D8 58.7 %, D1 and D9 47.8 %, D7 44.9 %; the best
    configurations solve 12 of 21; case 012 is solved by all 23 and five cases by none."""
    docs = _nitr_docs()
    matrix = read_pass_matrix(docs / "model_case_pass_matrix.csv")
    report = results_report(matrix.results, read_case_docs(docs))
    assert len(matrix.configurations) == 23 and len(report.suite) == 21 and report.suite[-1] == "021"
    assert set(report.left_out) == {"022", "023", "024"}
    g = {row.key: row for row in report.granularity}
    assert (g["micro"].tally.passes, g["micro"].tally.total) == (123, 230)
    assert (g["multi-step"].tally.passes, g["multi-step"].tally.total) == (52, 253)
    assert [(g[k].by_regime["api"].passes, g[k].by_regime["api"].total) for k in ("micro", "multi-step")] == [
        (53, 120), (18, 132)]
    assert [(g[k].by_regime["agent"].passes, g[k].by_regime["agent"].total) for k in ("micro", "multi-step")] == [
        (70, 110), (34, 121)]
    rates = {d.key: round(100 * d.tally.rate, 1) for d in report.dimensions}
    assert rates == {"D1": 47.8, "D2": 31.9, "D3": 15.2, "D4": 41.3, "D5": 26.1, "D6": 4.3, "D7": 44.9, "D8": 58.7,
                     "D9": 47.8}
    d6 = next(d for d in report.dimensions if d.key == "D6")
    assert d6.cases == ("008", "015") and (d6.tally.passes, d6.tally.total) == (2, 46)
    best = {c.configuration: (c.suite.passes, c.suite.total) for c in report.configurations}
    assert best["GPT-5.3-Cx (Agt)"] == best["Claude Opus 4.6 (Agt)"] == (12, 21)
    assert best["Gemini 3.1 Pro (API)"] == (8, 21)
    assert min(p for p, _ in best.values()) == 5
    cases = {c.info.case: c for c in report.cases}
    assert [n for n, c in cases.items() if c.saturated] == ["012"]
    assert [n for n, c in cases.items() if c.unsolved and c.in_suite] == ["002", "004", "005", "015", "021"]
    assert cases["021"].info.case_id == "021.inline-filter-entrypoint-reuse"
    assert cases["003"].failing == ("Gemini 3.1 Pro (Agt)",) and len(cases["003"].passing) == 22
    assert cases["023"].unsolved and not cases["023"].in_suite  # 0 of the 8 configurations evaluated on it


def test_every_case_counts_with_all_cases():
    docs = _nitr_docs()
    matrix = read_pass_matrix(docs / "model_case_pass_matrix.csv")
    report = results_report(matrix.results, read_case_docs(docs), all_cases=True)
    assert len(report.suite) == 24 and not report.left_out
    rows = {c.configuration: c for c in report.configurations}
    assert (rows["GPT-5.3-Cx (Agt)"].suite.passes, rows["GPT-5.3-Cx (Agt)"].suite.total) == (13, 24)
    assert report.regimes["all"].total == 507


# ------------------------------------------------------------------------------------ configurations
@pytest.mark.parametrize(("name", "model", "regime"), [
    ("GPT-5.4 (API)", "GPT-5.4", "api"), ("Claude Opus 4.6 (Agt)", "Claude Opus 4.6", "agent"),
    ("  Qwen3-80B   (agent) ", "Qwen3-80B", "agent"), ("x(api)", "x", "api"),
])
def test_a_configuration_names_its_model_and_regime(name, model, regime):
    c = parse_configuration(name)
    assert (c.model, c.regime) == (model, regime)
    assert parse_configuration(configuration_name(c.model, c.regime)) == parse_configuration(c.name)


@pytest.mark.parametrize("name", ["GPT-5.4", "GPT-5.4 (batch)", "(API)", "GPT (API) x"])
def test_a_configuration_without_a_regime_is_refused(name):
    with pytest.raises(ValueError, match=r"\(API\), \(Agt\), \(Agent\)"):
        parse_configuration(name)


def test_case_numbers():
    assert case_number("021.inline-filter-entrypoint-reuse") == "021"
    assert case_number("21") == "021"
    assert case_number("021-inline") == "021"
    assert case_number("pricing-strategy") is None
    assert case_number("2021abc") is None


# ------------------------------------------------------------------------------------------ the matrix
def test_a_matrix_is_read_cell_by_cell(tmp_path):
    path = _write(tmp_path, HEADER + "A (API),pass,fail,N/A,1,2,0.5000\nB (Agt),PASS,pass,fail,2,3,0.6667\n")
    m = read_pass_matrix(path)
    assert m.cases == ("001", "002", "003") and [c.name for c in m.configurations] == ["A (API)", "B (Agt)"]
    assert [(r.configuration, r.case, r.outcome, r.line) for r in m.results] == [
        ("A (API)", "001", "pass", 2), ("A (API)", "002", "fail", 2),
        ("B (Agt)", "001", "pass", 3), ("B (Agt)", "002", "pass", 3), ("B (Agt)", "003", "fail", 3)]
    assert len(m.sha256) == 64


@pytest.mark.parametrize(("row", "field", "says"), [
    ("A (API),pass,fail,pass,1,3,0.3333", "pass_count", "says 1, but the row has 2 pass cells"),
    ("A (API),pass,fail,N/A,1,3,0.5000", "total_count", "says 3, but the row has 2 pass and fail cells"),
    ("A (API),pass,fail,N/A,1,2,0.4000", "pass_rate", "1/2 is 0.5000"),
    ("A (API),pass,maybe,N/A,1,2,0.5", "002", "'maybe' is not a verdict"),
    ("A,pass,fail,N/A,1,2,0.5", "model", "does not say its regime"),
    ("A (API),pass,fail,N/A,one,2,0.5", "pass_count", "'one' is not a whole number"),
])
def test_a_row_whose_counts_or_cells_are_wrong_is_an_error_naming_the_row(tmp_path, row, field, says):
    path = _write(tmp_path, HEADER + "B (Agt),pass,pass,pass,3,3,1.0\n" + row + "\n")
    with pytest.raises(InputFileError) as err:
        read_pass_matrix(path)
    assert len(err.value.problems) == 1
    p = err.value.problems[0]
    assert (p.line, p.field) == (3, field) and says in p.message, str(p)
    assert "nothing was imported" in str(err.value)


def test_every_bad_row_is_reported_at_once(tmp_path):
    path = _write(tmp_path, HEADER + "A (API),pass,pass,pass,2,3,0.6667\nA (API),fail,fail,fail,0,3,0\n"
                  "C (Agt),pass\n")
    with pytest.raises(InputFileError) as err:
        read_pass_matrix(path)
    assert [(p.line, p.field) for p in err.value.problems] == [(2, "pass_count"), (3, "model"), (4, None)]
    assert "appears twice (lines 2 and 3)" in err.value.problems[1].message


@pytest.mark.parametrize(("text", "says"), [
    ("configuration,001\n", "no configuration rows"),
    ("001,002\nx,y\n", "no 'model' column"),
    ("model,total\nA (API),1\n", "unknown column"),
    ("model,001,1\nA (API),pass,pass\n", "appears twice"),
])
def test_a_malformed_header_is_refused(tmp_path, text, says):
    with pytest.raises(InputFileError, match=says):
        read_pass_matrix(_write(tmp_path, text))


def test_counts_columns_are_optional(tmp_path):
    m = read_pass_matrix(_write(tmp_path, "model,001,002\nA (API),pass,\n"))
    assert [(r.case, r.outcome) for r in m.results] == [("001", "pass")]


def test_an_empty_or_missing_file_is_refused(tmp_path):
    with pytest.raises(InputFileError, match="empty"):
        read_pass_matrix(_write(tmp_path, "\n\n"))
    with pytest.raises(InputFileError, match="no such file"):
        read_pass_matrix(tmp_path / "absent.csv")


# ------------------------------------------------------------------------------------- design matrix
DESIGN = """# Design matrix

| Case | Primary dimension | Granularity |
|---|---|---|
| 001 add-no-callsite-spread | D1 Change Locality | multi-step |
| 008 map-dip | D6 | **micro** |
"""


def test_the_design_matrix_gives_dimension_and_granularity(tmp_path):
    infos = read_design_matrix(_write(tmp_path, DESIGN, "design_matrix.md"))
    assert infos == {"001": CaseInfo("001", None, "D1", "multi-step", "design_matrix.md line 5"),
                     "008": CaseInfo("008", None, "D6", "micro", "design_matrix.md line 6")}


@pytest.mark.parametrize(("row", "field", "says"), [
    ("| 009 x | D10 Nothing | micro |", "Primary dimension", "'D10 Nothing' is not a dimension; accepted: D1 Change"),
    ("| 009 x | D6 Change Locality | micro |", "Primary dimension", "is not a dimension"),
    ("| 009 x | D6 | tiny |", "Granularity", "'tiny' is not a granularity; accepted: micro, multi-step"),
    ("| x | D6 | micro |", "Case", "does not start with a case number"),
    ("| 001 again | D6 | micro |", "Case", "case 001 appears twice"),
])
def test_a_bad_design_matrix_row_names_file_line_and_value(tmp_path, row, field, says):
    with pytest.raises(InputFileError) as err:
        read_design_matrix(_write(tmp_path, DESIGN + row + "\n", "design_matrix.md"))
    p = err.value.problems[0]
    assert (p.line, p.field) == (7, field) and says in p.message, str(p)


def test_a_design_matrix_without_the_table_is_refused(tmp_path):
    with pytest.raises(InputFileError, match="no case table"):
        read_design_matrix(_write(tmp_path, "# nothing\n| a | b |\n", "design_matrix.md"))


def test_documented_cases_win_over_probes_and_disagreements_are_noted():
    documented = {"001": CaseInfo("001", "001.add", "D1", "multi-step", "design_matrix.md line 5")}
    probes = [CaseInfo("001", "001.add-no-callsite-spread", "D2", "multi-step", "probe 001.add-no-callsite-spread"),
              CaseInfo("030", "030.x", "D7", "micro", "probe 030.x")]
    merged, notes = merge_case_infos(documented, probes)
    assert merged["001"].primary_dimension == "D1" and merged["001"].case_id == "001.add"
    assert merged["030"].primary_dimension == "D7"
    assert notes == ["case 001: dimension D1 (design_matrix.md line 5) but D2 (probe 001.add-no-callsite-spread); "
                     "D1 is used"]


# -------------------------------------------------------------------------------------------- report
def _r(config: str, case: str, outcome: str) -> CaseResult:
    c = parse_configuration(config)
    return CaseResult(c.name, c.model, c.regime, case, outcome)


def test_the_report_counts_the_common_suite_and_flags_cases():
    results = [_r("A (API)", "001", "pass"), _r("A (API)", "002", "fail"), _r("A (API)", "003", "pass"),
               _r("B (Agt)", "001", "pass"), _r("B (Agt)", "002", "fail")]
    cases = {"001": CaseInfo("001", None, "D1", "micro"), "002": CaseInfo("002", None, "D6", "multi-step")}
    rep = results_report(results, cases)
    assert rep.suite == ("001", "002") and rep.left_out == {"003": 1}
    assert [(c.configuration, c.suite.passes, c.suite.total, c.evaluated.passes, c.evaluated.total)
            for c in rep.configurations] == [("A (API)", 1, 2, 2, 3), ("B (Agt)", 1, 2, 1, 2)]
    by_case = {c.info.case: c for c in rep.cases}
    assert by_case["001"].saturated and by_case["001"].passing == ("A (API)", "B (Agt)")
    assert by_case["002"].unsolved and not by_case["002"].saturated
    assert by_case["003"].saturated and not by_case["003"].in_suite
    assert [(g.key, g.tally.passes, g.tally.total) for g in rep.granularity] == [("micro", 2, 2), ("multi-step", 0, 2)]
    assert [(d.key, d.tally.rate) for d in rep.dimensions] == [("D1", 1.0), ("D6", 0.0)]
    assert rep.regimes["api"].passes == 1 and rep.regimes["agent"].total == 2
    assert "left out of the aggregates" in rep.notes[0]
    data = rep.to_dict()
    assert data["granularity"][0]["by_regime"]["api"] == {"passes": 1, "total": 1, "rate": 1.0}
    tables = rep.tables()
    assert set(tables) == {"configurations", "cases", "granularity", "dimensions"}
    header, rows = tables["cases"]
    assert len(rows) == 3 and all(len(row) == len(header) for row in rows)


def test_a_later_verdict_replaces_an_earlier_one_and_unknown_cases_are_listed():
    rep = results_report([_r("A (API)", "001", "fail"), _r("A (API)", "001", "pass")], {})
    assert rep.configurations[0].suite.passes == 1 and rep.unknown == ("001",)
    assert not rep.granularity and not rep.dimensions and "unknown" in rep.notes[-1]


def test_a_configuration_with_few_verdicts_can_be_left_out_or_the_cases_chosen():
    docs = _nitr_docs()
    matrix = read_pass_matrix(docs / "model_case_pass_matrix.csv")
    results = [*matrix.results, _r("New (API)", "021", "pass")]  # one attempt of a new configuration
    narrowed = results_report(results, read_case_docs(docs))
    assert narrowed.suite == ("021",) and "New (API) has verdicts on 1" in narrowed.notes[0]
    paper = [c.name for c in matrix.configurations]
    again = results_report(results, read_case_docs(docs), configurations=paper)
    assert len(again.suite) == 21 and again.granularity[0].tally.total == 230
    chosen = results_report(results, read_case_docs(docs), all_cases=True, only_cases=parse_case_selection("1-21"))
    assert len(chosen.suite) == 21 and chosen.granularity[0].tally.total == 231  # New (API)'s 021 counts too
    with pytest.raises(NotFoundError, match="no verdicts of configuration 'Nobody'"):
        results_report(results, configurations=["Nobody"])
    assert [c.configuration for c in results_report(results, configurations=["new(api)"]).configurations] == [
        "New (API)"]
    # cases without a verdict are named, as a configuration without one is (not "no model results yet")
    with pytest.raises(NotFoundError, match="no verdicts on case 999; cases with verdicts: 001, 002"):
        results_report(results, only_cases=parse_case_selection("999"))
    assert results_report([], only_cases=["999"]).is_empty


def test_case_selections():
    assert parse_case_selection("001-003, 021 7") == ["001", "002", "003", "021", "007"]
    for bad in ("", "a-b", "5-3", "1,,x"):
        with pytest.raises(ValueError):
            parse_case_selection(bad)
