"""A GitHub Discussions import in the store: counts, the filtered records in the batch, idempotent re-imports,
all or nothing, and the repository eligibility facts (RepoProbe §3.2)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from benchwright.core.eligibility import (
    ELIGIBLE,
    NOT_ELIGIBLE,
    UNKNOWN,
    EligibilityRule,
    RepositoryFacts,
    parse_created_on,
)
from benchwright.core.errors import InputFileError, NotFoundError
from benchwright.core.importers import parse
from benchwright.core.models import Repository
from benchwright.db import Store

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "github_discussions"
PAGE1, PAGE2, LINES = FIXTURE / "page1.json", FIXTURE / "page2.json", FIXTURE / "discussions.jsonl"
WIDGET = Repository(name="widget", version_label="1.0")


@pytest.fixture
def widget(store: Store) -> Store:
    store.add_repository(WIDGET, "alice")
    return store


def imp(store: Store, path: Path, *, skip_invalid: bool = False):
    result = parse("github-discussions", path, repository="widget")
    return store.apply_import(result, annotator="alice", file_path=path, repository="widget",
                              skip_invalid=skip_invalid)


def rows(db_path: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(sql, params).fetchall()


def test_an_import_stores_pairs_and_the_filtered_records(widget, db_path):
    report = imp(widget, PAGE1)
    assert (report.read, report.added, len(report.filtered)) == (7, 2, 5)
    [(count, text, fmt, repo)] = rows(db_path, "SELECT filtered_count, filtered_json, format, repository "
                                               "FROM import_batches")
    entries = json.loads(text)
    assert (count, fmt, repo) == (5, "github-discussions", "widget")
    assert [(e["upstream_id"].rsplit("/", 1)[1], e["reason"]) for e in entries] == [
        ("102", "unanswered"), ("103", "no accepted answer"), ("104", "no accepted answer"),
        ("105", "category Ideas not in Q&A, Help"),
        ("106", "question relies on an image: markdown image: ![broken layout]("),
    ]
    assert entries[0] == {"where": f"{PAGE1}, page 1, node 2", "upstream_id": entries[0]["url"],
                          "url": "https://github.com/acme/widget/discussions/102", "reason": "unanswered",
                          "answered": False}
    assert rows(db_path, "SELECT source_format, source_unit, source_line, source_upstream_id FROM qa_pairs "
                         "ORDER BY ordinal") == [
        ("github-discussions", "page", 1, "https://github.com/acme/widget/discussions/101"),
        ("github-discussions", "page", 1, "https://github.com/acme/widget/discussions/107"),
    ]


def test_importing_the_same_file_again_adds_nothing(widget, db_path):
    imp(widget, PAGE1)
    again = imp(widget, PAGE1)
    assert (again.added, again.already_present, len(again.filtered), again.batch_id) == (0, 2, 5, None)
    assert rows(db_path, "SELECT count(*) FROM import_batches") == [(1,)]
    assert rows(db_path, "SELECT answered_discussions FROM repositories") == [(6,)]


def test_a_file_of_only_filtered_threads_is_recorded_once(widget, db_path, tmp_path):
    doc = json.loads(PAGE1.read_text(encoding="utf-8"))
    nodes = doc["data"]["repository"]["discussions"]["nodes"]
    doc["data"]["repository"]["discussions"]["nodes"] = [n for n in nodes if n["number"] in (102, 105)]
    path = tmp_path / "filtered-only.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    first = imp(widget, path)
    assert (first.added, len(first.filtered)) == (0, 2) and first.batch_id is not None
    second = imp(widget, path)
    assert second.batch_id is None
    assert rows(db_path, "SELECT filtered_count FROM import_batches") == [(2,)]


def test_the_second_page_adds_its_threads_and_counts_the_shared_one(widget, db_path):
    imp(widget, PAGE1)
    report = imp(widget, PAGE2)
    assert (report.added, report.already_present, len(report.filtered)) == (1, 1, 2)
    assert rows(db_path, "SELECT count(*) FROM qa_pairs") == [(3,)]
    # answered threads across both imports: 101, 103-110 (102 is unanswered; 107 counted once)
    assert report.repository_facts == RepositoryFacts(1523, "2024-05-02", 9)


def test_a_thread_on_both_pages_of_one_file_is_one_pair_and_a_duplicate(widget, db_path, tmp_path):
    both = tmp_path / "both.json"
    both.write_text(PAGE1.read_text(encoding="utf-8") + PAGE2.read_text(encoding="utf-8"), encoding="utf-8")
    report = imp(widget, both)
    assert (report.read, report.added, report.duplicates_in_file, len(report.filtered)) == (11, 3, 1, 7)
    assert rows(db_path, "SELECT read_count, added_count, duplicate_count, filtered_count FROM import_batches") == [
        (11, 3, 1, 7)]


def test_a_broken_page_imports_nothing(widget, db_path, tmp_path):
    doc = json.loads(PAGE2.read_text(encoding="utf-8"))
    doc["data"]["repository"]["discussions"]["nodes"][1]["answer"] = "not an object"
    path = tmp_path / "broken.json"
    path.write_text(PAGE1.read_text(encoding="utf-8") + json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputFileError, match=r"page 2, field 'data.repository.discussions.nodes\[2\].answer'"):
        imp(widget, path)
    assert rows(db_path, "SELECT count(*) FROM qa_pairs") == [(0,)]
    assert rows(db_path, "SELECT count(*) FROM import_batches") == [(0,)]
    assert rows(db_path, "SELECT stars, created_on, answered_discussions FROM repositories") == [(None, None, None)]


def test_skip_invalid_imports_the_rest_and_lists_both_kinds(widget, tmp_path):
    rows_ = LINES.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(["{not json", *rows_]) + "\n", encoding="utf-8")
    report = imp(widget, path, skip_invalid=True)
    assert (report.added, len(report.skipped), len(report.filtered)) == (3, 1, 7)


def test_an_answered_total_in_the_export_replaces_the_count(widget, db_path, tmp_path):
    doc = json.loads(PAGE1.read_text(encoding="utf-8"))
    doc["data"]["repository"]["answeredDiscussions"] = {"totalCount": 250}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert imp(widget, path).repository_facts == RepositoryFacts(1523, "2024-05-02", 250)


def test_a_counted_number_never_lowers_a_larger_stored_one(widget, db_path):
    widget.set_repository_facts("widget", RepositoryFacts(answered_discussions=40))
    assert imp(widget, LINES).repository_facts == RepositoryFacts(None, None, 40)


def test_set_repository_facts_changes_only_what_is_given(widget):
    assert widget.set_repository_facts("widget", RepositoryFacts(stars=10)) == RepositoryFacts(10, None, None)
    assert widget.set_repository_facts("widget", RepositoryFacts(created_on="2024-02-29")) == RepositoryFacts(
        10, "2024-02-29", None)
    with pytest.raises(NotFoundError):
        widget.set_repository_facts("nope", RepositoryFacts(stars=1))


def test_add_repository_stores_facts_and_a_re_add_replaces_them(store):
    store.add_repository(WIDGET.model_copy(update={"stars": 5, "created_on": "2024-01-01"}), "alice")
    assert store.get_repository("widget").facts == RepositoryFacts(5, "2024-01-01", None)
    store.add_repository(WIDGET.model_copy(update={"stars": 1200, "answered_discussions": 11}), "alice")
    assert store.get_repository("widget").facts == RepositoryFacts(1200, "2024-01-01", 11)
    store.add_repository(WIDGET, "alice")  # no facts given: the stored ones stay
    assert store.get_repository("widget").facts == RepositoryFacts(1200, "2024-01-01", 11)


# ------------------------------------------------------------------------------------------- the rule (core)
def test_the_paper_rule_with_its_boundaries():
    rule = EligibilityRule()
    assert rule.check(RepositoryFacts(1000, "2024-01-01", 10)).status == ELIGIBLE
    late = rule.check(RepositoryFacts(999, "2023-12-31", 9))
    assert late.status == NOT_ELIGIBLE
    assert late.failed == ("999 stars (fewer than 1,000)", "created 2023-12-31 (before 2024-01-01)",
                           "9 answered discussions (fewer than 10)")
    unknown = rule.check(RepositoryFacts(5000, None, None))
    assert (unknown.status, unknown.unknown, unknown.met) == (UNKNOWN, ("created", "answered"),
                                                              ("5,000 stars (at least 1,000)",))
    assert rule.check(RepositoryFacts(10, None, None)).status == NOT_ELIGIBLE  # a failure outweighs unknowns


def test_thresholds_are_parameters():
    from datetime import date

    rule = EligibilityRule(min_stars=10, created_on_or_after=date(2020, 6, 1), min_answered=0)
    assert rule.check(RepositoryFacts(10, "2020-06-01", 0)).eligible


@pytest.mark.parametrize(("text", "day"), [("2024-03-01", "2024-03-01"), ("2024-03-01T23:59:59Z", "2024-03-01"),
                                           (" 2024-03-01T01:02:03+02:00 ", "2024-03-01")])
def test_created_on_reads_dates_and_github_timestamps(text, day):
    assert parse_created_on(text) == day


@pytest.mark.parametrize("text", ["2024-02-30", "03/01/2024", "yesterday", ""])
def test_created_on_refuses_what_is_not_a_day(text):
    with pytest.raises(ValueError):
        parse_created_on(text)


def _page(nodes: list[dict]) -> dict:
    return {"data": {"repository": {"discussions": {"nodes": nodes, "pageInfo": {"hasNextPage": False}}}}}


def _thread(n: int, title: str) -> dict:
    return {"number": n, "url": f"https://github.com/acme/widget/discussions/{n}", "title": title, "body": "b",
            "isAnswered": True, "answer": {"body": "an answer"}, "category": {"name": "Q&A"}}


@pytest.mark.parametrize("layout", ["page per line", "pretty page", "node per line"])
def test_a_lone_surrogate_flags_its_own_thread_not_its_pages_neighbours(widget: Store, tmp_path: Path, layout):
    """Only the thread that held a lone surrogate is flagged text-repaired, not every pair of its page."""
    nodes = [_thread(1, "clean one"), _thread(2, "broken \ud800 title"), _thread(3, "clean two")]
    path = tmp_path / "export.json"
    if layout == "page per line":
        path.write_text(json.dumps(_page(nodes)) + "\n", encoding="utf-8")
    elif layout == "pretty page":
        path.write_text(json.dumps(_page(nodes), indent=2), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(n) + "\n" for n in nodes), encoding="utf-8")
    result = parse("github-discussions", path, repository="widget")
    report = widget.apply_import(result, annotator="alice", file_path=path, repository="widget")
    assert len(widget.flag_import_repairs(result, report.batch_id)) == 1
    assert widget.text_repair_counts() == {"qa_pairs": 1}
    flagged = [p.question for p in result.pairs if widget.text_repaired("qa_pairs", p.id)]
    assert flagged == ["broken \ufffd title\n\nb"]
