"""The GitHub Discussions importer (RepoProbe §3.2) without a database: the hand-written two-page GraphQL
fixture, its JSON-lines variant, the skip reasons, duplicates across pages, repository facts, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.core.eligibility import RepositoryFacts
from benchwright.core.errors import BenchwrightError, InputFileError
from benchwright.core.importers import FORMATS, parse

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "github_discussions"
PAGE1, PAGE2, LINES = FIXTURE / "page1.json", FIXTURE / "page2.json", FIXTURE / "discussions.jsonl"
URL = "https://github.com/acme/widget/discussions/"

EXPECTED_FILTERED = {
    102: "unanswered",
    103: "no accepted answer",
    104: "no accepted answer",
    105: "category Ideas not in Q&A, Help",
    106: "question relies on an image: markdown image: ![broken layout](",
    108: "answer relies on an image: <img> tag: <img",
    109: "question relies on an image: attachment URL: "
         "https://github.com/user-attachments/assets/0f6c1d2e-aaaa-bbbb-cccc-123456789abc",
}
KEPT = [101, 107, 110]


def both_pages(tmp_path: Path) -> Path:
    """The two pages one after another, as ``gh api graphql --paginate`` prints them."""
    path = tmp_path / "export.json"
    path.write_text(PAGE1.read_text(encoding="utf-8") + PAGE2.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def number(url: str) -> int:
    return int(url.rsplit("/", 1)[1])


def test_the_format_is_registered():
    assert "github-discussions" in FORMATS


@pytest.mark.parametrize("layout", ["concatenated", "array", "page-lines", "node-lines"])
def test_every_layout_reads_the_same_threads_and_reasons(tmp_path, layout):
    docs = [json.loads(PAGE1.read_text(encoding="utf-8")), json.loads(PAGE2.read_text(encoding="utf-8"))]
    path = tmp_path / "export.json"
    if layout == "concatenated":
        path = both_pages(tmp_path)
    elif layout == "array":
        path.write_text(json.dumps(docs, indent=1), encoding="utf-8")
    elif layout == "page-lines":
        path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    else:
        path = LINES
    r = parse("github-discussions", path, repository="widget")
    assert r.problems == []
    assert r.read == 11  # 7 threads on page 1, 4 on page 2 (thread 107 on both)
    assert r.duplicates == 1
    assert [number(p.source.upstream_id) for p in r.pairs] == KEPT
    assert {number(f.upstream_id): f.reason for f in r.filtered} == EXPECTED_FILTERED
    assert all(f.url == f.upstream_id for f in r.filtered)


def test_question_answer_and_extra_of_a_kept_thread(tmp_path):
    r = parse("github-discussions", both_pages(tmp_path), repository="widget")
    first = r.pairs[0]
    assert first.repository == "widget"
    assert first.question == ("How does widget pick the config file when several exist?\n\nI have both "
                              "`widget.toml` and `pyproject.toml` with a `[tool.widget]` table. Which one wins?")
    assert first.reference_answer.startswith("`widget/config/loader.py` walks the candidates")
    assert first.source.format == "github-discussions"
    assert (first.source.unit, first.source.line, first.source.upstream_id) == ("page", 1, URL + "101")
    assert first.extra == {
        "number": 101, "url": URL + "101", "created_at": "2024-06-11T09:15:00Z", "discussion_category": "Q&A",
        "answer_author": "maint", "answer_author_association": "MEMBER", "answer_chosen_at": "2024-06-12T10:00:00Z",
        "answer_chosen_by": "asker101", "page_node": 1,
    }
    assert first.category is None  # the discussion category is not RepoProbe's classify category
    # an image inside a fenced code block is code, not an image the answer relies on
    assert "![logo](logo.png)" in r.pairs[2].reference_answer


def test_the_first_copy_of_a_thread_on_two_pages_is_kept(tmp_path):
    r = parse("github-discussions", both_pages(tmp_path), repository="widget")
    shared = [p for p in r.pairs if p.source.upstream_id == URL + "107"]
    assert len(shared) == 1 and shared[0].source.line == 1 and shared[0].extra["page_node"] == 7


def test_filtered_records_name_their_place(tmp_path):
    r = parse("github-discussions", both_pages(tmp_path), repository="widget")
    where = {number(f.upstream_id): f.where for f in r.filtered}
    assert where[102] == f"{tmp_path / 'export.json'}, page 1, node 2"
    assert where[108] == f"{tmp_path / 'export.json'}, page 2, node 2"
    lines = parse("github-discussions", LINES, repository="widget")
    assert {number(f.upstream_id): f.place for f in lines.filtered}[109] == "line 10"
    assert {number(f.upstream_id): f.answered for f in lines.filtered} == {
        102: False, 103: True, 104: True, 105: True, 106: True, 108: True, 109: True}
    assert lines.filtered[0].to_json() == {"where": f"{LINES}, line 2", "upstream_id": URL + "102",
                                           "url": URL + "102", "reason": "unanswered", "answered": False}


def test_repository_facts_from_the_pages_and_not_from_node_lines(tmp_path):
    r = parse("github-discussions", both_pages(tmp_path), repository="widget")
    assert r.repository_facts == RepositoryFacts(stars=1523, created_on="2024-05-02", answered_discussions=None)
    assert r.answered_counted
    lines = parse("github-discussions", LINES, repository="widget")
    assert lines.repository_facts == RepositoryFacts() and lines.answered_counted


def test_an_answered_total_in_the_export_is_taken_and_not_counted(tmp_path):
    doc = json.loads(PAGE1.read_text(encoding="utf-8"))
    doc["data"]["repository"]["answeredDiscussions"] = {"totalCount": 42}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert r.repository_facts.answered_discussions == 42 and not r.answered_counted


@pytest.mark.parametrize("wrapper", ["data", "repository", "discussions"])
def test_bare_wrappers_are_accepted(tmp_path, wrapper):
    repo = json.loads(PAGE1.read_text(encoding="utf-8"))["data"]["repository"]
    doc = {"data": {"data": {"repository": repo}}, "repository": {"repository": repo},
           "discussions": {"discussions": repo["discussions"]}}[wrapper]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert [number(p.source.upstream_id) for p in r.pairs] == [101, 107]
    assert len(r.filtered) == 5
    assert (r.repository_facts.stars is None) == (wrapper == "discussions")


def test_categories_are_matched_without_regard_to_case_and_star_takes_all():
    r = parse("github-discussions", LINES, repository="widget", categories="ideas")
    assert [number(p.source.upstream_id) for p in r.pairs] == [105]
    assert {number(f.upstream_id): f.reason for f in r.filtered}[101] == "category Q&A not in ideas"
    every = parse("github-discussions", LINES, repository="widget", categories="*")
    assert [number(p.source.upstream_id) for p in every.pairs] == [101, 105, 107, 110]


def test_categories_are_refused_for_other_formats_and_when_empty():
    with pytest.raises(BenchwrightError, match="--categories is for the github-discussions format, not swe-qa"):
        parse("swe-qa", LINES, repository="widget", categories="Q&A")
    with pytest.raises(BenchwrightError, match="names no category"):
        parse("github-discussions", LINES, repository="widget", categories=" , ")


def test_repo_is_required():
    with pytest.raises(InputFileError, match="needs --repo"):
        parse("github-discussions", LINES)


def test_wrong_types_name_the_page_and_field(tmp_path):
    doc = json.loads(PAGE2.read_text(encoding="utf-8"))
    nodes = doc["data"]["repository"]["discussions"]["nodes"]
    nodes[1]["title"] = 7
    nodes[2]["answer"]["body"] = ["not", "text"]
    nodes[3]["isAnswered"] = "yes"
    path = tmp_path / "p.json"
    path.write_text(PAGE1.read_text(encoding="utf-8") + json.dumps(doc), encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert [str(p) for p in r.problems] == [
        f"{path}, page 2, field 'data.repository.discussions.nodes[2].title': must be a string, found number",
        f"{path}, page 2, field 'data.repository.discussions.nodes[3].answer.body': must be a string, found array",
        f"{path}, page 2, field 'data.repository.discussions.nodes[4].isAnswered': must be true or false, "
        "found string",
    ]


def test_wrong_types_in_node_lines_name_the_line(tmp_path):
    rows = [json.loads(x) for x in LINES.read_text(encoding="utf-8").splitlines()]
    rows[0]["number"] = "101"
    rows[2] = "not a node"
    del rows[3]["url"], rows[3]["number"]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in rows) + "{broken\n", encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert [str(p) for p in r.problems] == [
        f"{path}, line 1, field 'number': must be a whole number, found string",
        f"{path}, line 3: expected a JSON object, found string",
        f"{path}, line 4, field 'url': required field is missing (a discussion needs its url or its number: the "
        "thread's id upstream)",
        f"{path}, line 12: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]


def test_a_broken_document_is_a_whole_file_error_with_its_line(tmp_path):
    text = PAGE1.read_text(encoding="utf-8")
    path = tmp_path / "p.json"
    path.write_text(text + text.replace('"isAnswered": true', '"isAnswered": tru', 1), encoding="utf-8")
    with pytest.raises(InputFileError) as e:
        parse("github-discussions", path, repository="widget")
    [problem] = e.value.problems
    assert problem.line == text.count("\n") + text.split('"isAnswered": true')[0].count("\n") + 1
    assert "invalid JSON" in problem.message


def test_a_page_without_discussions_and_a_graphql_error_are_problems(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"data": {"repository": {"name": "widget"}}}) + "\n"
                    + json.dumps({"data": None, "errors": [{"message": "API rate limit exceeded"}]}) + "\n",
                    encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert [str(p) for p in r.problems] == [
        f"{path}, line 1, field 'data.repository.discussions': required field is missing (a page is "
        '{"data": {"repository": {"discussions": {"nodes": [...]}}}}, or put one discussion node a line)',
        f"{path}, line 2, field 'errors': the GraphQL response holds errors and no data: API rate limit exceeded",
    ]
    assert r.read == 2


def test_a_bad_repository_fact_is_a_problem(tmp_path):
    doc = json.loads(PAGE1.read_text(encoding="utf-8"))
    doc["data"]["repository"]["createdAt"] = "last spring"
    doc["data"]["repository"]["stargazerCount"] = -3
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert [p.field for p in r.problems] == ["data.repository.stargazerCount", "data.repository.createdAt"]
    assert "not a date" in r.problems[1].message


def test_json_lines_with_a_broken_first_line_are_still_read_line_by_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"number": 1, "title": \n' + LINES.read_text(encoding="utf-8"), encoding="utf-8")
    r = parse("github-discussions", path, repository="widget")
    assert [(p.line, p.message.split(":")[0]) for p in r.problems] == [(1, "invalid JSON")]
    assert [number(p.source.upstream_id) for p in r.pairs] == KEPT
    assert r.pairs[0].source.line == 2


def test_a_json_array_of_nodes_and_a_bare_connection_are_read(tmp_path):
    nodes = [json.loads(x) for x in LINES.read_text(encoding="utf-8").splitlines()]
    array = tmp_path / "nodes.json"
    array.write_text(json.dumps(nodes, indent=2), encoding="utf-8")
    r = parse("github-discussions", array, repository="widget")
    assert (r.read, r.duplicates, r.problems) == (11, 1, [])
    assert [number(p.source.upstream_id) for p in r.pairs] == KEPT
    assert {number(f.upstream_id): f.place for f in r.filtered}[102] == "item 2"
    connection = tmp_path / "conn.json"
    nodes[0]["title"] = None
    connection.write_text(json.dumps({"nodes": nodes, "pageInfo": {"hasNextPage": False}}), encoding="utf-8")
    r = parse("github-discussions", connection, repository="widget")
    assert [str(p) for p in r.problems] == [f"{connection}, line 1, field 'nodes[1].title': required field is missing"]
    assert [number(p.source.upstream_id) for p in r.pairs] == [107, 110]


def test_an_export_that_stops_before_its_last_page_says_so(tmp_path):
    first = parse("github-discussions", PAGE1, repository="widget")
    assert first.notes == [
        "the last page says there are more (pageInfo.hasNextPage is true, endCursor "
        "'Y3Vyc29yOnYyOpK5MjAyNC0wNi0xNw=='): the export stops before the last page; fetch the rest with after: "
        "that cursor (gh api graphql --paginate fetches every page)"]
    assert parse("github-discussions", both_pages(tmp_path), repository="widget").notes == []
    assert parse("github-discussions", LINES, repository="widget").notes == []
