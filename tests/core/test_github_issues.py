"""The GitHub issues importer (SWE-QA-Pro §2.1) over the fixtures in tests/data/github_issues: JSONL, a REST list
(two pages, as gh --paginate prints them), GraphQL pages (nodes and edges), the 10-byte / 16 KB rule at its
edges (9, 10, 16384, 16385 bytes), pull requests left out, and bad records named by line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.core.errors import InputFileError
from benchwright.core.importers.github_issues import (
    PULL_REQUEST,
    issue_id,
    issue_text,
    length_reason,
    parse_github_issues,
)
from benchwright.core.vocabulary import ISSUE_TEXT_MAX_BYTES, ISSUE_TEXT_MIN_BYTES

DATA = Path(__file__).resolve().parents[1] / "data" / "github_issues"


def parse(name: str):
    return parse_github_issues(DATA / name, name, "flask")


def test_jsonl_keeps_texts_between_the_byte_bounds():
    r = parse("issues.jsonl")
    assert r.read == 7 and not r.problems
    assert [(i.number, i.text_bytes) for i in r.issues] == [(1, 84), (3, 10), (4, 16384), (None, 52), (6, 10)]
    assert [(f.line, f.reason) for f in r.filtered] == [(2, "too short: 9 bytes < 10 (#2)"),
                                                        (5, "too long: 16385 bytes > 16384 (#5)")]
    first = r.issues[0]
    assert first.labels == ("bug", "blueprints")  # a string and a {name} object
    assert first.text == "Blueprint url_prefix ignored\n\nWhen registering a blueprint twice the prefix is lost."
    assert first.url == "https://github.com/pallets/flask/issues/1" and first.state == "open"
    assert r.issues[4].title == "ééééé"  # 10 bytes of UTF-8 in 5 characters: bytes are what counts


def test_byte_bounds_are_inclusive():
    assert (ISSUE_TEXT_MIN_BYTES, ISSUE_TEXT_MAX_BYTES) == (10, 16384)
    assert length_reason("x" * 9) and length_reason("x" * 16385)
    assert length_reason("x" * 10) is None and length_reason("x" * 16384) is None
    assert issue_text("  Title ", None) == "Title" and issue_text("T", " body\n") == "T\n\nbody"


def test_rest_pages_leave_pull_requests_out():
    r = parse("rest.json")
    assert [i.number for i in r.issues] == [10, 12]
    assert r.issues[0].url == "https://github.com/pallets/flask/issues/10"  # html_url, not the API url
    assert r.issues[1].body is None and r.issues[1].text == "send_file with a BytesIO fails on HEAD"
    [pr] = r.filtered
    assert pr.reason == f"{PULL_REQUEST} (#11)" and pr.url.endswith("/pull/11") and (pr.unit, pr.line) == ("page", 1)


def test_graphql_pages_nodes_and_edges():
    r = parse("graphql.jsonl")
    assert [(i.number, i.labels, i.state) for i in r.issues] == [(20, ("async",), "open"), (22, ("config",), "closed")]
    assert [f.reason for f in r.filtered] == ["too short: 5 bytes < 10 (#21)"]


def test_bad_records_are_named_by_line_and_field():
    r = parse("bad_line.jsonl")
    shown = [str(p) for p in r.problems]
    assert shown[0].startswith("bad_line.jsonl, line 2: invalid JSON")
    assert "bad_line.jsonl, line 3, field 'number': must be a whole number" in shown[1]
    assert "bad_line.jsonl, line 3, field 'title': must be a string, found number" in shown[2]
    assert r.read == 3


def test_ids_are_stable_and_keyed_by_number_or_text():
    assert issue_id("flask", 7, "a") == issue_id("flask", 7, "b")  # the number is the key
    assert issue_id("flask", 7, "a") != issue_id("click", 7, "a")
    assert issue_id("flask", None, "a") != issue_id("flask", None, "b")
    assert issue_id("flask", None, "a").startswith("iss_") and len(issue_id("flask", None, "a")) == 20


def test_a_repeated_issue_is_read_once_and_a_rest_item_is_named(tmp_path):
    f = tmp_path / "dup.json"
    one = {"number": 3, "title": "Same issue twice", "body": "x"}
    f.write_text(json.dumps([one, one, {"number": 4, "title": None}]))
    r = parse_github_issues(f, "dup.json", "flask")
    assert len(r.issues) == 1 and r.duplicates == 1
    assert [str(p) for p in r.problems] == ["dup.json, item 3, field 'title': required field is missing"]


@pytest.mark.parametrize("text", ["", "   \n", "not json at all"])
def test_unreadable_files_are_errors(tmp_path, text):
    f = tmp_path / "x.json"
    f.write_text(text)
    if text.strip():
        with pytest.raises(InputFileError, match=r"x\.json"):
            parse_github_issues(f, "x.json", "flask")
    else:
        with pytest.raises(InputFileError, match="empty"):
            parse_github_issues(f, "x.json", "flask")


def test_lone_surrogates_are_repaired(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text('{"number": 1, "title": "bad \\udc81 text here"}\n')
    [issue] = parse_github_issues(f, "s.jsonl", "flask").issues
    assert issue.title == "bad \ufffd text here"


@pytest.mark.parametrize("number", [10**30, "99999999999999999999999", "²", "1²"])
def test_a_number_sqlite_cannot_hold_or_a_non_ascii_digit_is_a_problem(tmp_path, number):
    f = tmp_path / "n.jsonl"
    f.write_text(json.dumps({"number": number, "title": "An issue with an odd number"}) + "\n")
    r = parse_github_issues(f, "n.jsonl", "flask")
    assert not r.issues and [p.field for p in r.problems] == ["number"]
    assert "must be a whole number >= 0" in str(r.problems[0])


def test_an_empty_title_adds_no_blank_lines_to_the_text():
    assert issue_text("  ", "body text here") == "body text here"
    assert issue_text("", None) == ""


def test_a_graphql_error_response_without_data_names_its_errors(tmp_path):
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"errors": [{"message": "Bad credentials"}]}))
    r = parse_github_issues(f, "e.json", "flask")
    assert [p.field for p in r.problems] == ["errors"] and "Bad credentials" in str(r.problems[0])
