"""The importers' ``parse()`` without a database: real public data, modified copies, and every bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from benchwright.core.errors import BenchwrightError, InputFileError, InputProblem
from benchwright.core.importers import FORMATS, ParseResult, parse, parse_mapping
from benchwright.core.models import normalize_qa_type, qa_pair_id

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SWE_QA = DATA / "swe-qa"
BENCHMARK = SWE_QA / "Benchmark__flask.jsonl"
CATEGORIZED = SWE_QA / "origin_question__generated_questions_flask_categorized.jsonl"
CURSOR = SWE_QA / "cursor_agent_unidentified_question__flask.jsonl"
PRO = DATA / "swe-qa-pro" / "test.rows-0-10.parquet"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data {path} is absent (the shared data folder ../shared/data is not checked out here)")
    return path


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


def jsonl(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def problems_of(fmt: str, path: Path, **kwargs) -> tuple[ParseResult | None, list[InputProblem]]:
    """Problems of the file, whether whole-file (raised) or per record (returned)."""
    try:
        result = parse(fmt, path, **kwargs)
    except InputFileError as e:
        return None, e.problems
    return result, result.problems


def pro_rows() -> list[dict]:
    return pq.read_table(need(PRO)).to_pylist()


def write_pro(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path)
    return path


# ---------------------------------------------------------------------------------------------- real data
def test_swe_qa_benchmark_flask_reads_all_48_pairs_in_order():
    path = need(BENCHMARK)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = parse("swe-qa", path, repository="flask")
    assert result.problems == []
    assert result.read == 48
    assert len(result.pairs) == 48
    assert [p.question for p in result.pairs] == [r["question"] for r in records]
    assert [p.reference_answer for p in result.pairs] == [r["answer"] for r in records]
    assert [p.source.line for p in result.pairs] == list(range(1, 49))
    assert {p.repository for p in result.pairs} == {"flask"}
    assert {p.source.format for p in result.pairs} == {"swe-qa"}
    assert all(p.source.file == str(path) for p in result.pairs)
    assert len({p.id for p in result.pairs}) == 48
    assert all(p.extra == {} for p in result.pairs)
    assert not any(p.needs_reference for p in result.pairs)
    assert result.repositories == []


def test_swe_qa_ids_are_stable_across_parses_and_depend_on_repository():
    path = need(BENCHMARK)
    first = [p.id for p in parse("swe-qa", path, repository="flask").pairs]
    again = [p.id for p in parse("swe-qa", path, repository="flask").pairs]
    other = [p.id for p in parse("swe-qa", path, repository="flask-fork").pairs]
    assert first == again
    assert set(first).isdisjoint(other)


def test_swe_qa_categorized_keeps_type_and_subtype_and_skips_headings():
    path = need(CATEGORIZED)
    lines = path.read_text(encoding="utf-8").split("\n")
    records = {
        n: json.loads(line) for n, line in enumerate(lines, start=1) if line.strip() and not line.startswith("#")
    }
    assert len(records) == 47
    assert sum(1 for line in lines if line.startswith("#")) > 0  # the file really has heading lines
    result = parse("swe-qa-categorized", path, repository="flask")
    assert result.problems == []
    assert result.read == 47  # headings are not records
    assert len(result.pairs) == 47
    assert [p.source.line for p in result.pairs] == sorted(records)
    for pair in result.pairs:
        rec = records[pair.source.line]
        assert pair.question == rec["question"]
        assert pair.reference_answer == rec["ground_truth"]
        assert pair.qa_type == rec["category_type"].capitalize()
        assert pair.qa_subtype == rec["category"]
        assert not pair.question.startswith("#")
        # null fields (answer, score, relative_code_list) are not kept; used fields are not repeated
        assert set(pair.extra) <= {"answer", "score", "relative_code_list"}
        assert all(v is not None for v in pair.extra.values())
    assert Counter(p.qa_type for p in result.pairs) == {"What": 12, "How": 12, "Why": 11, "Where": 12}
    assert {p.qa_subtype for p in result.pairs} == {
        "architecture", "concept-defi", "rela-depend", "algo-impl", "api-framework", "system-design",
        "design-rationale", "performance", "purpose", "data-control-flow", "funct-loca", "iden-loca",
    }


def test_cursor_agent_file_reads_as_swe_qa_keeping_other_fields_in_extra():
    path = need(CURSOR)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    result = parse("swe-qa", path, repository="flask")
    assert result.problems == []
    assert result.read == len(records) == 47
    assert [p.question for p in result.pairs] == [r["question"] for r in records]
    first = result.pairs[0]
    assert first.reference_answer == records[0]["answer"]
    assert "question" not in first.extra and "answer" not in first.extra
    assert first.extra["origin_question"] == records[0]["origin_question"]
    assert first.extra["trajectory"] == records[0]["trajectory"]
    assert first.extra["rewriting_reason"] == records[0]["rewriting_reason"]


def test_swe_qa_pro_parquet_reads_11_rows_with_repository_commit_and_cluster():
    rows = pro_rows()
    result = parse("swe-qa-pro", PRO)
    assert result.problems == []
    assert result.read == 11
    assert len(result.pairs) == 11
    assert [p.source.line for p in result.pairs] == list(range(1, 12))
    assert {p.source.unit for p in result.pairs} == {"row"}
    repos = {r.name: r for r in result.repositories}
    assert len(repos) == 11
    for pair, row in zip(result.pairs, rows, strict=True):
        info = row["extra_info"]
        assert pair.repository == info["repo_name"]
        assert repos[info["repo_name"]].commit == info["commit_id"]
        assert repos[info["repo_name"]].url == f"https://github.com/{info['repo_name']}"
        assert pair.question == info["question"]
        assert pair.cluster_id == row["cluster"]["id"]
        assert pair.cluster_name == row["cluster"]["name"]
        assert pair.qa_subtype == row["qa_type"]["sub_class_name"]
        assert pair.source.upstream_id == row["session_id"]
        assert pair.task_set is None and pair.split == "test"  # a split is not a task set (issue 18)
        assert pair.qa_type == row["qa_type"]["class_name"].split(" (")[0]
        assert not pair.needs_reference


def test_swe_qa_pro_normalizes_long_and_bare_what():
    rows = pro_rows()
    labels = [r["qa_type"]["class_name"] for r in rows]
    assert "What (Factual Queries)" in labels and "What" in labels  # the data really has both spellings
    result = parse("swe-qa-pro", PRO)
    for label, pair in zip(labels, result.pairs, strict=True):
        if label.startswith("What"):
            assert pair.qa_type == "What"
    assert result.pairs[labels.index("What")].qa_type == "What"
    assert result.pairs[labels.index("What (Factual Queries)")].qa_type == "What"


def test_swe_qa_pro_refined_ground_truth_supersedes_and_keeps_original():
    rows = pro_rows()
    refined = [i for i, r in enumerate(rows) if (r["refined_ground_truth"] or "").strip()]
    assert len(refined) == 1
    result = parse("swe-qa-pro", PRO)
    for i, (pair, row) in enumerate(zip(result.pairs, rows, strict=True)):
        if i in refined:
            assert pair.reference_answer == row["refined_ground_truth"]
            assert pair.extra["original_answer"] == row["reward_model"]["ground_truth"]
            assert pair.reference_answer != pair.extra["original_answer"]
        else:
            assert pair.reference_answer == row["reward_model"]["ground_truth"]
            assert "original_answer" not in pair.extra


def test_swe_qa_pro_refuses_a_repository_argument():
    with pytest.raises(InputFileError) as e:
        parse("swe-qa-pro", need(PRO), repository="flask")
    assert "leave out --repo" in str(e.value)


# -------------------------------------------------------------------------------- modified parquet copies
def test_swe_qa_pro_row_without_any_reference_is_imported_needing_one(tmp_path):
    table = pq.read_table(need(PRO))
    rows = table.to_pylist()
    rows[3]["refined_ground_truth"] = None
    rows[3]["reward_model"]["ground_truth"] = None
    rows[3]["extra_info"]["answer"] = None
    path = write_pro(tmp_path / "noref.parquet", rows, table.schema)
    result = parse("swe-qa-pro", path)
    assert result.problems == []
    assert len(result.pairs) == 11  # never dropped
    pair = result.pairs[3]
    assert pair.source.line == 4
    assert pair.reference_answer is None
    assert pair.needs_reference
    assert pair.question == rows[3]["extra_info"]["question"]
    assert [p.needs_reference for p in result.pairs].count(True) == 1


def test_swe_qa_pro_falls_back_to_extra_info_answer(tmp_path):
    table = pq.read_table(need(PRO))
    rows = table.to_pylist()
    rows[0]["reward_model"]["ground_truth"] = None
    path = write_pro(tmp_path / "fallback.parquet", rows, table.schema)
    pair = parse("swe-qa-pro", path).pairs[0]
    assert pair.reference_answer == rows[0]["extra_info"]["answer"]


def test_swe_qa_pro_same_repository_at_two_commits_gets_two_names(tmp_path):
    table = pq.read_table(need(PRO))
    rows = table.to_pylist()[:2]
    rows[1]["extra_info"]["repo_name"] = rows[0]["extra_info"]["repo_name"]
    path = write_pro(tmp_path / "twocommits.parquet", rows, table.schema)
    result = parse("swe-qa-pro", path)
    names = [r.name for r in result.repositories]
    commit = rows[1]["extra_info"]["commit_id"]
    assert names == ["cekit/cekit", f"cekit/cekit@{commit[:12]}"]
    assert [p.repository for p in result.pairs] == names
    assert result.repositories[1].commit == commit


def test_swe_qa_pro_unknown_qa_type_names_row_and_field(tmp_path):
    table = pq.read_table(need(PRO))
    rows = table.to_pylist()
    rows[4]["qa_type"]["class_name"] = "Whence (Odd Queries)"
    path = write_pro(tmp_path / "badtype.parquet", rows, table.schema)
    result = parse("swe-qa-pro", path)
    assert len(result.pairs) == 10
    [p] = result.problems
    assert (p.file, p.line, p.unit, p.field) == (str(path), 5, "row", "qa_type.class_name")
    assert "Whence" in p.message
    assert str(p).startswith(f"{path}, row 5, field 'qa_type.class_name': ")


def test_swe_qa_pro_missing_question_names_row_and_field(tmp_path):
    table = pq.read_table(need(PRO))
    rows = table.to_pylist()
    rows[2]["extra_info"]["question"] = None
    rows[2]["reward_model"]["question"] = None
    path = write_pro(tmp_path / "noq.parquet", rows, table.schema)
    result = parse("swe-qa-pro", path)
    [p] = result.problems
    assert (p.line, p.field, p.unit) == (3, "extra_info.question", "row")
    assert "missing" in p.message
    assert len(result.pairs) == 10


def test_swe_qa_pro_question_falls_back_to_reward_model(tmp_path):
    table = pq.read_table(need(PRO))
    rows = table.to_pylist()
    rows[2]["extra_info"]["question"] = None
    path = write_pro(tmp_path / "q2.parquet", rows, table.schema)
    result = parse("swe-qa-pro", path)
    assert result.problems == []
    assert result.pairs[2].question == rows[2]["reward_model"]["question"]


def test_swe_qa_pro_field_of_wrong_type_names_row_and_field(tmp_path):
    rows = pro_rows()[:1]
    rows[0]["extra_info"]["question"] = 42
    rows[0]["qa_type"]["class_name"] = 7
    path = write_pro(tmp_path / "wrongtype.parquet", rows)
    result = parse("swe-qa-pro", path)
    assert result.pairs == []
    found = {(p.line, p.field): p.message for p in result.problems}
    assert found[(1, "extra_info.question")] == "must be a string, found number"
    assert found[(1, "qa_type.class_name")] == "must be a string, found number"


def test_swe_qa_pro_struct_column_of_wrong_type_names_row_and_field(tmp_path):
    rows = [{"extra_info": "not a struct"}]
    path = write_pro(tmp_path / "flat.parquet", rows)
    [p] = parse("swe-qa-pro", path).problems
    assert (p.line, p.field, p.unit) == (1, "extra_info", "row")
    assert "struct" in p.message


def test_swe_qa_pro_missing_extra_info_column(tmp_path):
    table = pq.read_table(need(PRO)).drop_columns(["extra_info"])
    path = tmp_path / "noinfo.parquet"
    pq.write_table(table, path)
    with pytest.raises(InputFileError) as e:
        parse("swe-qa-pro", path)
    [p] = e.value.problems
    assert (p.file, p.line, p.field) == (str(path), None, "extra_info")
    assert "required column is missing" in p.message


# ----------------------------------------------------------------------------------------- bad inputs
JSONL_OK = jsonl({"question": "q1", "answer": "a1"})

BAD_RECORD_CASES = [
    # id, format, file name, content, parse kwargs, (line, field, message fragment)
    ("invalid-json", "swe-qa", "f.jsonl", JSONL_OK + '{"question": "q2", "answer": \n', {},
     (2, None, "invalid JSON")),
    ("missing-field", "swe-qa", "f.jsonl", JSONL_OK + jsonl({"question": "q2"}), {},
     (2, "answer", "required field is missing")),
    ("null-field", "swe-qa", "f.jsonl", JSONL_OK + jsonl({"question": None, "answer": "a"}), {},
     (2, "question", "required field is missing")),
    ("empty-string", "swe-qa", "f.jsonl", JSONL_OK + jsonl({"question": "  ", "answer": "a"}), {},
     (2, "question", "must not be empty")),
    ("number-not-string", "swe-qa", "f.jsonl", JSONL_OK + jsonl({"question": 42, "answer": "a"}), {},
     (2, "question", "must be a string, found number")),
    ("list-not-string", "swe-qa", "f.jsonl", JSONL_OK + jsonl({"question": "q", "answer": ["a"]}), {},
     (2, "answer", "must be a string, found array")),
    ("array-line", "swe-qa", "f.jsonl", JSONL_OK + '["q", "a"]\n', {},
     (2, None, "expected a JSON object, found array")),
    ("categorized-unknown-type", "swe-qa-categorized", "c.jsonl",
     "# WHAT CATEGORIES\n## architecture\n" + jsonl({"question": "q", "ground_truth": "a", "category_type": "whom"}),
     {}, (3, "category_type", "unknown QA type 'whom'")),
    ("categorized-wrong-type", "swe-qa-categorized", "c.jsonl",
     jsonl({"question": "q", "ground_truth": "a", "category": ["x"]}), {},
     (1, "category", "must be a string, found array")),
    ("categorized-answer-number", "swe-qa-categorized", "c.jsonl",
     jsonl({"question": "q", "ground_truth": 3}), {}, (1, "ground_truth", "must be a string, found number")),
    ("jsonl-dotted-missing", "jsonl", "g.jsonl",
     jsonl({"q": "q1", "meta": {"answer": "a1"}}, {"q": "q2", "meta": {"other": 1}}),
     {"mapping": ["question=q", "answer=meta.answer"]},
     (2, "meta.answer (mapped to answer)", "required field is missing")),
    ("jsonl-unknown-qa-type", "jsonl", "g.jsonl", jsonl({"question": "q", "answer": "a", "kind": "Whom"}),
     {"mapping": ["qa_type=kind"]}, (1, "kind", "unknown QA type 'Whom'")),
    ("jsonl-object-not-string", "jsonl", "g.jsonl", jsonl({"question": {"t": 1}, "answer": "a"}), {},
     (1, "question", "must be a string, found object")),
    ("csv-wrong-cell-count", "csv", "t.csv", "question,answer\nq1,a1\nq2,a2,extra\n", {},
     (3, None, "has 3 cells; the header has 2")),
    ("csv-multiline-then-missing", "csv", "t.csv",
     'question,answer\n"first\nspans\nthree",a1\nq2,\n', {}, (5, "answer", "must not be empty")),
    ("csv-unterminated-quote", "csv", "t.csv", 'question,answer\nq1,a1\nq2,"never closed\nq3,a3\n', {},
     (3, None, "quoted field is not closed")),
    ("csv-unknown-qa-type", "csv", "t.csv", "question,answer,type\nq,a,Whom\n", {"mapping": ["qa_type=type"]},
     (2, "type", "unknown QA type 'Whom'")),
]


@pytest.mark.parametrize(
    ("fmt", "name", "content", "kwargs", "expected"),
    [pytest.param(*c[1:], id=c[0]) for c in BAD_RECORD_CASES],
)
def test_bad_record_is_reported_with_file_line_and_field(tmp_path, fmt, name, content, kwargs, expected):
    path = write(tmp_path / name, content)
    kwargs = {"repository": "flask", **kwargs}
    result = parse(fmt, path, **kwargs)
    line, field, fragment = expected
    [p] = result.problems
    assert p.file == str(path)
    assert p.line == line
    assert p.field == field
    assert fragment in p.message
    text = str(p)
    assert text.startswith(f"{path}, line {line}")
    if field:
        assert f"field '{field}'" in text
    assert line not in [q.source.line for q in result.pairs]  # the bad record is not a pair
    assert result.read >= 1 and result.read == len(result.pairs) + 1  # counted, valid or not


BAD_FILE_CASES = [
    # id, format, file name, content (None: nothing; "DIR": a directory), (line, field, message fragment)
    ("invalid-utf8", "swe-qa", "u.jsonl", JSONL_OK.encode() * 2 + b'{"question": "caf\xe9", "answer": "a"}\n',
     (3, None, "not valid UTF-8")),
    ("empty", "swe-qa", "e.jsonl", "", (None, None, "empty")),
    ("whitespace-only", "swe-qa", "w.jsonl", "  \n\t\r\n\n", (None, None, "empty")),
    ("bom-only", "jsonl", "b.jsonl", b"\xef\xbb\xbf", (None, None, "empty")),
    ("missing", "swe-qa", "absent.jsonl", None, (None, None, "no such file")),
    ("directory", "swe-qa", "adir", "DIR", (None, None, "is a directory")),
    ("csv-mapped-column-not-in-header", "csv", "h.csv", "question,body\nq,a\n", (1, "answer", "not in the header")),
    ("csv-empty", "csv", "h.csv", "\n\n", (None, None, "empty")),
    ("csv-invalid-utf8", "csv", "h.csv", b"question,answer\nq,a\nq2,\xff\n", (3, None, "not valid UTF-8")),
    ("not-parquet", "swe-qa-pro", "x.parquet", JSONL_OK, (None, None, "not a readable Parquet file")),
    ("empty-parquet", "swe-qa-pro", "x.parquet", "", (None, None, "empty")),
]


@pytest.mark.parametrize(
    ("fmt", "name", "content", "expected"), [pytest.param(*c[1:], id=c[0]) for c in BAD_FILE_CASES]
)
def test_bad_file_raises_naming_the_file(tmp_path, fmt, name, content, expected):
    path = tmp_path / name
    if content == "DIR":
        path.mkdir()
    elif content is not None:
        write(path, content)
    with pytest.raises(InputFileError) as e:
        parse(fmt, path, repository=None if fmt == "swe-qa-pro" else "flask")
    line, field, fragment = expected
    [p] = e.value.problems
    assert (p.file, p.line, p.field) == (str(path), line, field)
    assert fragment in p.message
    assert str(path) in str(e.value)
    assert "nothing was imported" in str(e.value)
    if line is not None:
        assert f"line {line}" in str(e.value)


def test_unreadable_file_is_an_input_error(tmp_path, monkeypatch):
    path = write(tmp_path / "locked.jsonl", JSONL_OK)

    def deny(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(InputFileError) as e:
        parse("swe-qa", path, repository="flask")
    assert e.value.problems[0].file == str(path)
    assert "cannot be read (Permission denied)" in str(e.value)


def test_unknown_format():
    with pytest.raises(BenchwrightError) as e:
        parse("tsv", "whatever.tsv")
    assert "unknown format 'tsv'" in str(e.value)
    for fmt in FORMATS:
        assert fmt in str(e.value)


@pytest.mark.parametrize(
    ("items", "fragment"),
    [
        (["question"], "write it as TARGET=COLUMN"),
        (["=title"], "write it as TARGET=COLUMN"),
        (["question="], "write it as TARGET=COLUMN"),
        (["title=question"], "unknown target 'title'"),
        (["question=a", "question=b"], "mapped twice"),
    ],
)
def test_bad_map(tmp_path, items, fragment):
    path = write(tmp_path / "m.jsonl", JSONL_OK)
    with pytest.raises(BenchwrightError) as e:
        parse("jsonl", path, mapping=items)
    assert fragment in str(e.value)
    if len(items) == 1:
        assert repr(items[0]) in str(e.value)  # the message quotes the item at fault


def test_map_refused_for_formats_without_mapping(tmp_path):
    path = write(tmp_path / "m.jsonl", JSONL_OK)
    with pytest.raises(BenchwrightError, match="--map is for the jsonl, csv and parquet formats"):
        parse("swe-qa", path, mapping=["question=q"])


def test_parse_mapping_defaults_question_and_answer():
    assert parse_mapping([]) == {"question": "question", "answer": "answer"}
    assert parse_mapping([" answer = body ", "id=key"]) == {"answer": "body", "id": "key", "question": "question"}


def test_input_file_error_lists_twenty_problems_and_counts_the_rest():
    problems = [InputProblem("f.jsonl", n, "answer", "required field is missing") for n in range(1, 26)]
    error = InputFileError(problems)
    text = str(error)
    assert text.startswith("25 problems in the input; nothing was imported:\n")
    assert "f.jsonl, line 20, field 'answer'" in text
    assert "line 21," not in text
    assert text.endswith("... and 5 more")
    assert error.problems == problems
    assert str(InputFileError.single("f.jsonl", "the file is empty")).startswith("1 problem in the input")
    with pytest.raises(ValueError):
        InputFileError([])


def test_every_problem_of_a_file_is_reported_not_just_the_first(tmp_path):
    content = jsonl({"question": "q1"}, {"question": "q2", "answer": "a2"}, {"answer": 5}) + "nope\n"
    path = write(tmp_path / "many.jsonl", content)
    result = parse("swe-qa", path, repository="flask")
    assert [(p.line, p.field) for p in result.problems] == [
        (1, "answer"), (3, "question"), (3, "answer"), (4, None)
    ]
    assert [p.source.line for p in result.pairs] == [2]
    assert result.read == 4


# ------------------------------------------------------------------------------------ generic jsonl / csv
def test_jsonl_with_dotted_path_mapping(tmp_path):
    records = [
        {"title": "q1", "extra_info": {"answer": "a1", "split": "test"}, "kind": "why", "key": 7},
        {"title": "q2", "extra_info": {"answer": "a2"}, "kind": "Where (Localization)", "key": "k2"},
    ]
    path = write(tmp_path / "nested.jsonl", jsonl(*records))
    result = parse(
        "jsonl", path, repository="flask",
        mapping=["question=title", "answer=extra_info.answer", "qa_type=kind", "id=key", "split=extra_info.split"],
    )
    assert result.problems == []
    assert [(p.question, p.reference_answer, p.qa_type) for p in result.pairs] == [
        ("q1", "a1", "Why"), ("q2", "a2", "Where")
    ]
    assert [p.source.upstream_id for p in result.pairs] == ["7", "k2"]
    assert [p.split for p in result.pairs] == ["test", None]
    assert result.pairs[0].source.format == "jsonl"


def test_jsonl_keeps_unmapped_fields_in_extra(tmp_path):
    path = write(tmp_path / "x.jsonl", jsonl({"question": "q", "answer": "a", "score": 3, "empty": ""}))
    [pair] = parse("jsonl", path).pairs
    assert pair.extra == {"score": 3}
    assert pair.repository is None


def test_csv_with_mapping_bom_blank_rows_and_multiline_fields(tmp_path):
    content = (
        "\ufefftitle , body,type,topic\n"
        '"How does\nrouting work?","It uses\n\nwerkzeug.",how,arch\n'
        "\n"
        "q2,a2,,\n"
        'q3,"a ""quoted"" answer",Why (Design),\n'
    )
    path = write(tmp_path / "qa.csv", content)
    result = parse(
        "csv", path, repository="flask", mapping=["question=title", "answer=body", "qa_type=type", "category=topic"]
    )
    assert result.problems == []
    assert result.read == 3
    assert [p.source.line for p in result.pairs] == [2, 7, 8]
    assert [p.question for p in result.pairs] == ["How does\nrouting work?", "q2", "q3"]
    assert result.pairs[0].reference_answer == "It uses\n\nwerkzeug."
    assert result.pairs[2].reference_answer == 'a "quoted" answer'
    assert [p.qa_type for p in result.pairs] == ["How", None, "Why"]
    assert [p.category for p in result.pairs] == ["arch", None, None]
    assert {p.source.format for p in result.pairs} == {"csv"}


def test_csv_fields_longer_than_the_csv_module_default_limit(tmp_path):
    long_answer = "x" * 300_000
    path = write(tmp_path / "long.csv", f"question,answer\nq,{long_answer}\nq2,a2\n")
    result = parse("csv", path)
    assert result.problems == []
    assert [p.reference_answer for p in result.pairs] == [long_answer, "a2"]


def test_csv_malformed_quote_stops_reading_and_names_the_line(tmp_path):
    path = write(tmp_path / "q.csv", 'question,answer\nq1,"a"b\nq2,a2\n')
    result = parse("csv", path)
    [p] = result.problems
    assert (p.line, p.field) == (2, None)
    assert "malformed CSV" in p.message and "rest of the file was not read" in p.message


# -------------------------------------------------------------------------- line handling regressions
def test_json_text_with_unicode_line_separators_is_one_record(tmp_path):
    answer = "first\u2028second\u2029third\x85fourth\x0cfifth\x1csixth"
    content = (
        json.dumps({"question": "q1", "answer": answer}, ensure_ascii=False) + "\n"
        + json.dumps({"question": "q2", "answer": "a2"}) + "\n"
    )
    path = write(tmp_path / "sep.jsonl", content)
    result = parse("swe-qa", path, repository="flask")
    assert result.problems == []
    assert [(p.source.line, p.reference_answer) for p in result.pairs] == [(1, answer), (2, "a2")]


def test_crlf_line_endings(tmp_path):
    path = write(tmp_path / "crlf.jsonl", JSONL_OK.replace("\n", "\r\n") + "\r\n" + jsonl({"question": "q", "answer": "a"}))
    result = parse("swe-qa", path, repository="flask")
    assert [p.source.line for p in result.pairs] == [1, 3]
    assert result.pairs[0].reference_answer == "a1"


def test_read_counts_invalid_lines_too(tmp_path):
    path = write(tmp_path / "r.jsonl", JSONL_OK + "{bad\n[1]\n\n" + jsonl({"question": "q", "answer": "a"}))
    result = parse("swe-qa", path, repository="flask")
    assert result.read == 4
    assert len(result.pairs) == 2
    assert [p.line for p in result.problems] == [2, 3]


def test_categorized_headings_fill_type_and_subtype_when_record_has_none(tmp_path):
    content = (
        "# WHY CATEGORIES\n## design-rationale\n# Generated 2 questions\n"
        + jsonl({"question": "q1", "ground_truth": "a1"})
        + jsonl({"question": "q2", "ground_truth": "a2", "category_type": "how", "category": "algo-impl"})
        + "# End of design-rationale\n# WHERE CATEGORIES\n"
        + jsonl({"question": "q3", "answer": "a3", "score": None})
        + jsonl({"question": "q4"})
    )
    path = write(tmp_path / "cat.jsonl", content)
    result = parse("swe-qa-categorized", path, repository="flask")
    assert result.problems == []
    assert result.read == 4
    got = [(p.source.line, p.qa_type, p.qa_subtype, p.reference_answer) for p in result.pairs]
    assert got == [
        (4, "Why", "design-rationale", "a1"),
        (5, "How", "algo-impl", "a2"),
        (8, "Where", None, "a3"),
        (9, "Where", None, None),
    ]
    assert result.pairs[2].extra == {}  # the answer became the reference: not repeated in extra
    assert result.pairs[3].needs_reference


# ------------------------------------------------------------------------------------------------ models
@pytest.mark.parametrize(
    ("label", "expected"),
    [("what", "What"), ("What (Factual Queries)", "What"), (" WHERE ", "Where"), ("Why(Causal)", "Why"),
     ("How (Procedural Queries)", "How"), (None, None), ("  ", None)],
)
def test_normalize_qa_type(label, expected):
    assert normalize_qa_type(label) == expected


@pytest.mark.parametrize("label", ["Whom", "Whatever", "(What)", 3, ["What"]])
def test_normalize_qa_type_refuses(label):
    with pytest.raises(ValueError):
        normalize_qa_type(label)


def test_qa_pair_id_known_value_and_whitespace():
    # A fixed value: ids are stored in projects, so the scheme must not drift.
    assert qa_pair_id("flask", "q", "a") == "qa_" + __import__("hashlib").sha256(b"flask\x00q\x00a\x00").hexdigest()[:16]
    assert qa_pair_id("flask", "  q\n", "a ") == qa_pair_id("flask", "q", "a")
    assert qa_pair_id(None, "q", None) == qa_pair_id("", "q", "")


def test_qa_pair_id_nul_in_text_does_not_collide():
    assert qa_pair_id("r", "a\x00b", "c") != qa_pair_id("r", "a", "b\x00c")
    assert qa_pair_id("r\x00a", "b", "c") != qa_pair_id("r", "a\x00b", "c")
    assert qa_pair_id("r", "\x01" + json.dumps("a\x00b"), "c") != qa_pair_id("r", "a\x00b", "c")


# ------------------------------------------------------------------------------------ property tests
_text = st.text(min_size=1, max_size=40).filter(lambda s: s.strip())
_records = st.lists(st.fixed_dictionaries({"question": _text, "answer": _text}), max_size=12)
_blank = st.sampled_from(["", "   ", "\t", "\r"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=_records,
    gaps=st.lists(st.lists(_blank, max_size=2), min_size=13, max_size=13),
    ascii_only=st.booleans(),
    crlf=st.booleans(),
)
def test_jsonl_round_trip_keeps_pairs_order_and_line_numbers(tmp_path, records, gaps, ascii_only, crlf):
    lines: list[str] = []
    expected_lines: list[int] = []
    for rec, gap in zip(records, gaps, strict=False):
        lines.extend(gap)
        lines.append(json.dumps(rec, ensure_ascii=ascii_only))
        expected_lines.append(len(lines))
    lines.extend(gaps[-1])
    if not records:
        lines.append(json.dumps({"question": "only", "answer": "one"}))
        records = [{"question": "only", "answer": "one"}]
        expected_lines = [len(lines)]
    path = write(tmp_path / "prop.jsonl", ("\r\n" if crlf else "\n").join(lines) + "\n")
    for fmt in ("swe-qa", "jsonl"):
        result = parse(fmt, path, repository="r")
        assert result.problems == []
        assert result.read == len(records)
        assert [(p.question, p.reference_answer) for p in result.pairs] == [
            (r["question"], r["answer"]) for r in records
        ]
        assert [p.source.line for p in result.pairs] == expected_lines
        assert [p.id for p in result.pairs] == [qa_pair_id("r", r["question"], r["answer"]) for r in records]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_records.filter(bool), padding=st.integers(min_value=0, max_value=3))
def test_ids_are_stable_for_the_same_content_in_another_file(tmp_path, records, padding):
    first = write(tmp_path / "one.jsonl", jsonl(*records))
    second = write(tmp_path / "two.jsonl", "\n" * padding + jsonl(*records))
    ids_one = [p.id for p in parse("swe-qa", first, repository="r").pairs]
    ids_two = [p.id for p in parse("swe-qa", second, repository="r").pairs]
    assert ids_one == ids_two
    distinct_content = {(r["question"].strip(), r["answer"].strip()) for r in records}
    assert len(set(ids_one)) == len(distinct_content)


_tricky_text = st.text(alphabet=st.sampled_from("ab \x00\x01\"\\"), max_size=6)
_triple = st.tuples(_tricky_text, _tricky_text.filter(str.strip), _tricky_text)


def _content(t: tuple[str, str, str]) -> tuple[str, str, str]:
    return (t[0], t[1].strip(), t[2].strip())


@given(a=_triple, b=_triple)
def test_ids_differ_when_content_differs(a, b):
    assert (qa_pair_id(*a) == qa_pair_id(*b)) == (_content(a) == _content(b))


@given(st.lists(st.text(alphabet=st.sampled_from("ab\x00\x01"), min_size=1, max_size=3), min_size=3, max_size=4),
       st.data())
def test_ids_differ_when_the_same_characters_are_split_differently(parts, data):
    # Triples whose parts joined by NUL give the same text: the cases a naive NUL-joined hash confuses. The text is
    # built with at least two NULs (generating it freely and filtering tripped Hypothesis' filter_too_much check).
    joined = "\x00".join(parts)
    nuls = [i for i, c in enumerate(joined) if c == "\x00"]
    cuts = st.lists(st.sampled_from(nuls), min_size=2, max_size=2, unique=True).map(sorted)
    i, j = data.draw(cuts)
    k, m = data.draw(cuts)
    a = (joined[:i], joined[i + 1 : j], joined[j + 1 :])
    b = (joined[:k], joined[k + 1 : m], joined[m + 1 :])
    assume(a[1].strip() and b[1].strip())
    assert (qa_pair_id(*a) == qa_pair_id(*b)) == (_content(a) == _content(b))



# ------------------------------------------------------------------------------ Parquet text that is not UTF-8
def _not_utf8(values: list[bytes], large: bool = False) -> pa.Array:
    """A string column whose bytes pyarrow never checked (a writer that does not validate, as many do)."""
    binary, text = (pa.large_binary(), pa.large_string()) if large else (pa.binary(), pa.string())
    return pa.array(values, binary).view(text)


def _pro_table(questions: pa.Array) -> pa.Table:
    n = len(questions)
    info = pa.StructArray.from_arrays(
        [questions, pa.array(["psf/requests"] * n), pa.array(["abc123"] * n), pa.array([f"answer {i}" for i in range(n)])],
        names=["question", "repo_name", "commit_id", "answer"],
    )
    return pa.table({"extra_info": info, "session_id": [str(i) for i in range(n)]})


def test_swe_qa_pro_text_that_is_not_utf8_names_file_row_and_field(tmp_path):
    path = tmp_path / "bad.parquet"
    pq.write_table(_pro_table(_not_utf8([b"Why is it cached?", b"Where is \xff read?", b"How is it closed?"])), path)
    result = parse("swe-qa-pro", path)  # no UnicodeDecodeError
    assert result.read == 3
    [p] = result.problems
    assert (p.file, p.line, p.unit, p.field) == (str(path), 2, "row", "extra_info.question")
    assert p.message.startswith("not valid UTF-8 (byte 0xff at offset 9)")
    assert str(p).startswith(f"{path}, row 2, field 'extra_info.question': not valid UTF-8")
    # the other rows are read (--skip-invalid imports them); the bad one is never half-read
    assert [q.question for q in result.pairs] == ["Why is it cached?", "How is it closed?"]
    assert [q.source.line for q in result.pairs] == [1, 3]


def test_generic_parquet_large_string_and_binary_columns(tmp_path):
    path = tmp_path / "generic.parquet"
    pq.write_table(pa.table({
        "question": _not_utf8([b"What is q?", b"What \xc3\x28 is?", b"Why?"], large=True),
        "answer": pa.array([b"A binary column holding UTF-8 text", b"x", b"\xfe"], pa.binary()),
        "meta": pa.array([[{"content": "ok"}], [{"content": "ok"}], [{"content": "ok"}]]),
    }), path)
    result = parse("parquet", path)
    assert {(p.line, p.field) for p in result.problems} == {(2, "question"), (3, "answer")}
    assert all(p.unit == "row" and "not valid UTF-8" in p.message for p in result.problems)
    [pair] = result.pairs
    assert (pair.question, pair.reference_answer, pair.source.line) == ("What is q?", "A binary column holding UTF-8 text", 1)
    assert pair.extra == {"meta": [{"content": "ok"}]}


def test_parquet_not_utf8_inside_a_list_of_structs_names_the_position(tmp_path):
    path = tmp_path / "nested.parquet"
    content = _not_utf8([b"system", b"user \xff"])
    prompt = pa.ListArray.from_arrays([0, 2], pa.StructArray.from_arrays([pa.array(["system", "user"]), content],
                                                                       names=["role", "content"]))
    pq.write_table(pa.table({"question": ["Why?"], "answer": ["Because."], "prompt": prompt}), path)
    [p] = parse("parquet", path).problems
    assert (p.line, p.field) == (1, "prompt[2].content")


def test_generic_parquet_maps_dotted_struct_fields_and_names_missing_columns(tmp_path):
    path = tmp_path / "mapped.parquet"
    pq.write_table(pa.table({"extra_info": [{"q": "Where is it?", "a": "Here."}], "id": [7]}), path)
    [pair] = parse("parquet", path, mapping=["question=extra_info.q", "answer=extra_info.a", "id=id"]).pairs
    assert (pair.question, pair.reference_answer, pair.source.upstream_id, pair.source.unit) == (
        "Where is it?", "Here.", "7", "row")
    with pytest.raises(InputFileError) as e:
        parse("parquet", path, mapping=["question=title"])
    assert [(p.field, p.message) for p in e.value.problems] == [
        ("title", "column is not in the file (mapped to question)"), ("answer", "column is not in the file (mapped to answer)")]
