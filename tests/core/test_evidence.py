"""Evidence: citations found in reference answers (the forms SWE-QA answers really use) and their resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask_source import DATA, flask_tree_or_skip

from benchwright.core.evidence import Citation, Evidence, extract_citations, gather_evidence, resolve_citation
from benchwright.core.repository import read_repository_file

FLASK_ANSWERS = DATA / "swe-qa" / "Benchmark__flask.jsonl"


def C(path: str, start: int | None = None, end: int | None = None) -> Citation:
    return Citation(path, start, end if end is not None else start)


@pytest.fixture(scope="module")
def flask_answers() -> list[str]:
    if not FLASK_ANSWERS.is_file():
        pytest.skip(f"SWE-QA data not found at {FLASK_ANSWERS}")
    return [json.loads(line)["answer"] for line in FLASK_ANSWERS.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def flask_tree() -> Path:
    return flask_tree_or_skip()


# ------------------------------------------------------------------------------------- extract_citations
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The forms listed in the module docstring.
        ("see src/flask/app.py for details", [C("src/flask/app.py")]),
        ("app.py:42", [C("app.py", 42)]),
        ("app.py:42-50", [C("app.py", 42, 50)]),
        ("In src/flask/app.py (lines 144-148), the flag", [C("src/flask/app.py", 144, 148)]),
        ("base.py: line 107-115", [C("base.py", 107, 115)]),
        ("tests/test_helpers.py at line 102", [C("tests/test_helpers.py", 102)]),
        ("lines 120-140 of src/flask/app.py", [C("src/flask/app.py", 120, 140)]),
        ("line 227 in base.py", [C("base.py", 227)]),
        # As the SWE-QA answers write them, in Markdown code spans.
        ("In `src/flask/json/provider.py` (lines 144-148), ", [C("src/flask/json/provider.py", 144, 148)]),
        ("(in `sansio/blueprints.py` lines 64-70)", [C("sansio/blueprints.py", 64, 70)]),
        ("The method (lines 213-221 in `blueprints.py`) checks", [C("blueprints.py", 213, 221)]),
        ("defined in `src/flask/globals.py` line 42)", [C("src/flask/globals.py", 42)]),
        ("`src/flask/ctx.py:323`", [C("src/flask/ctx.py", 323)]),
        ("the file `tests/test_json.py`, lines 48-54", [C("tests/test_json.py", 48, 54)]),
        # Ranges written with dashes or "to", reversed ranges, and "./" prefixes.
        ("app.py lines 10 to 20", [C("app.py", 10, 20)]),
        ("app.py (lines 10–20)", [C("app.py", 10, 20)]),
        ("app.py:10–20", [C("app.py", 10, 20)]),
        ("src/x.py:50-40", [C("src/x.py", 40, 50)]),
        ("./src/a.py:3", [C("src/a.py", 3)]),
        ("see ./.github/workflows/ci.yml", [C(".github/workflows/ci.yml")]),
        (".github/workflows/ci.yml", [C(".github/workflows/ci.yml")]),
        # Other languages and config files with a folder.
        ("crates/core/src/lib.rs:12 and web/app.tsx", [C("crates/core/src/lib.rs", 12), C("web/app.tsx")]),
        ("docs/config.json and pyproject.toml", [C("docs/config.json"), C("pyproject.toml")]),
        ("It ends here: src/flask/app.py.", [C("src/flask/app.py")]),
    ],
    ids=repr,
)
def test_extract_citations_forms(text, expected):
    assert extract_citations(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "flask.Flask is the application class",
        "set app.json.ensure_ascii = False",
        "the app.json.provider module",
        "call flask.json.provider.DefaultJSONProvider.dumps()",
        "json.dumps(obj) and os.path.join(a, b)",
        "request.json holds the body; config.json is bare",
        "see https://github.com/pallets/flask/blob/main/src/flask/app.py#L10",
        "served at http://localhost:5000/static/app.js today",
        "mirror at www.example.com/src/app.py",
        "the setup.py() call",
        "",
        None,
    ],
    ids=repr,
)
def test_dotted_identifiers_and_urls_are_not_citations(text):
    assert extract_citations(text) == []


def test_a_path_after_a_url_on_the_same_line_is_still_found():
    text = "see https://flask.palletsprojects.com/en/latest/api.html and src/flask/app.py:10"
    assert extract_citations(text) == [C("src/flask/app.py", 10)]


def test_citations_keep_first_appearance_order_without_repeats():
    text = "b.py:3, then a.py, then b.py:3 again, b.py lines 5-6, and a.py once more"
    assert extract_citations(text) == [C("b.py", 3), C("a.py"), C("b.py", 5, 6)]


def test_citation_str():
    assert str(C("a.py")) == "a.py"
    assert str(C("a.py", 3)) == "a.py:3"
    assert str(C("a.py", 3, 9)) == "a.py:3-9"


def test_first_flask_answer_cites_provider_and_test_json(flask_answers):
    assert extract_citations(flask_answers[0]) == [
        C("src/flask/json/provider.py", 144, 148),
        C("tests/test_json.py", 48, 54),
    ]


def test_second_flask_answer_citations(flask_answers):
    assert extract_citations(flask_answers[1]) == [
        C("src/flask/sansio/blueprints.py", 172),
        C("src/flask/sansio/scaffold.py", 42),
        C("blueprints.py", 213, 221),
    ]


def test_flask_answers_yield_only_file_citations(flask_answers):
    all_citations = [c for a in flask_answers for c in extract_citations(a)]
    assert len(all_citations) > 100  # nearly every answer cites code
    assert sum(1 for a in flask_answers if extract_citations(a)) >= 40
    for c in all_citations:
        assert not c.path.startswith(("http", "www.", "/", "./")), c
        assert "." in c.path.rsplit("/", 1)[-1], c
        first = c.path.split("/", 1)[0]
        # "flask.json" or "app.py" as a first segment of a longer dotted name would mean an identifier
        assert not (first.startswith(("flask.", "app.")) and "/" in c.path), c
        assert c.start is None or (0 < c.start <= c.end < 20000), c
    paths = {c.path for c in all_citations}
    assert not {"flask.Flask", "app.json", "flask.json", "json.dumps"} & paths


# -------------------------------------------------------------------------------------- resolve_citation
@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    files = [
        "src/pkg/app.py", "src/pkg/sansio/app.py", "src/pkg/unique.py", "tests/test_app.py", "README.md",
        ".git/hooks/hidden.py", "node_modules/lib/vendored.js", "src/pkg/__pycache__/cached.py",
    ]
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(f"# {f}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 1\n")
    (root / "docs").mkdir()
    (root / "docs" / "leaked.py").symlink_to(outside / "secret.py")  # a symlink out, only found by suffix
    (root / "docs" / "dangling.py").symlink_to(root / "gone.py")  # a broken link
    (root / "out.py").symlink_to(outside / "secret.py")
    return root


@pytest.mark.parametrize(
    ("path", "status", "opened", "candidates"),
    [
        ("src/pkg/app.py", "found", "src/pkg/app.py", ()),
        ("README.md", "found", "README.md", ()),
        ("unique.py", "found-by-suffix", "src/pkg/unique.py", ()),
        ("pkg/unique.py", "found-by-suffix", "src/pkg/unique.py", ()),
        ("sansio/app.py", "found-by-suffix", "src/pkg/sansio/app.py", ()),
        ("test_app.py", "found-by-suffix", "tests/test_app.py", ()),
        ("app.py", "ambiguous", "src/pkg/app.py", ("src/pkg/app.py", "src/pkg/sansio/app.py")),
        ("pkg/app.py", "found-by-suffix", "src/pkg/app.py", ()),
        ("ique.py", "missing", None, ()),  # a suffix must be whole path segments
        ("nowhere.py", "missing", None, ()),
        ("hidden.py", "missing", None, ()),  # .git is not searched
        ("vendored.js", "missing", None, ()),  # nor node_modules
        ("cached.py", "missing", None, ()),  # nor __pycache__
        ("dangling.py", "missing", None, ()),  # a broken link is nothing to open
        ("../outside/secret.py", "unsafe", None, ()),
        ("/etc/passwd.py", "unsafe", None, ()),
        ("out.py", "unsafe", None, ()),
        ("leaked.py", "unsafe", None, ()),  # the only file ending with it is a symlink out
        ("secret.py", "missing", None, ()),
    ],
)
def test_resolve_citation_statuses(repo, path, status, opened, candidates):
    ev = resolve_citation(repo, Citation(path, 3, 4))
    assert (ev.status, ev.path, ev.candidates) == (status, opened, candidates)
    assert ev.citation == Citation(path, 3, 4)
    assert ev.openable is (opened is not None)
    if opened:
        assert read_repository_file(repo, opened) == f"# {opened}\n"


def test_a_symlink_out_does_not_hide_a_safe_match(repo):
    (repo / "lib").mkdir()
    (repo / "lib" / "leaked.py").write_text("# safe\n")
    ev = resolve_citation(repo, Citation("leaked.py"))
    assert (ev.status, ev.path) == ("found-by-suffix", "lib/leaked.py")


def test_no_repository_without_a_checkout(tmp_path):
    assert resolve_citation(None, Citation("src/app.py")) == Evidence(Citation("src/app.py"), "no-repository")
    gone = tmp_path / "not-checked-out"
    assert resolve_citation(gone, Citation("app.py")).status == "no-repository"
    # Once the checkout appears, citations resolve (nothing stale was remembered).
    (gone / "src").mkdir(parents=True)
    (gone / "src" / "app.py").write_text("x = 1\n")
    assert resolve_citation(gone, Citation("app.py")) == Evidence(Citation("app.py"), "found-by-suffix", "src/app.py")


def test_gather_evidence_extracts_and_resolves(repo):
    text = "See `src/pkg/app.py` (lines 1-2), `unique.py` line 1, ../outside/secret.py and missing.py:9."
    got = [(e.citation, e.status, e.path) for e in gather_evidence(repo, text)]
    assert got == [
        (C("src/pkg/app.py", 1, 2), "found", "src/pkg/app.py"),
        (C("unique.py", 1), "found-by-suffix", "src/pkg/unique.py"),
        (C("../outside/secret.py"), "unsafe", None),
        (C("missing.py", 9), "missing", None),
    ]
    assert [e.status for e in gather_evidence(None, text)] == ["no-repository"] * 4
    assert gather_evidence(repo, None) == []


# ------------------------------------------------------------------------------------ the real flask tree
@pytest.mark.slow
def test_flask_answers_resolve_in_the_flask_tree(flask_answers, flask_tree):
    evidence = [e for a in flask_answers for e in gather_evidence(flask_tree, a)]
    statuses = {e.status for e in evidence}
    assert statuses <= {"found", "found-by-suffix", "ambiguous", "missing"}
    missing = {e.citation.path for e in evidence if e.status == "missing"}
    assert missing == {"notanapp.py"}  # quoted as a deliberately invalid app path in a test answer
    found = sum(1 for e in evidence if e.status == "found")
    assert found > 0.7 * len(evidence)
    ambiguous = {e.citation.path: e.candidates for e in evidence if e.status == "ambiguous"}
    # both files are offered; one that holds the cited lines comes first
    assert set(ambiguous["blueprints.py"]) == {"src/flask/blueprints.py", "src/flask/sansio/blueprints.py"}
    assert "src/flask/app.py" in ambiguous["app.py"] and "src/flask/sansio/app.py" in ambiguous["app.py"]
    for e in evidence:
        if e.openable:
            assert read_repository_file(flask_tree, e.path)


@pytest.mark.slow
def test_first_flask_answer_line_ranges_point_at_the_cited_code(flask_answers, flask_tree):
    [provider, tests] = gather_evidence(flask_tree, flask_answers[0])
    assert (provider.status, tests.status) == ("found", "found")
    lines = read_repository_file(flask_tree, provider.path).splitlines()
    cited = "\n".join(lines[provider.citation.start - 1 : provider.citation.end])
    assert "ensure_ascii" in cited
    test_lines = read_repository_file(flask_tree, tests.path).splitlines()
    assert "ensure_ascii" in "\n".join(test_lines[tests.citation.start - 1 : tests.citation.end])


def test_ambiguous_citation_prefers_a_file_long_enough_for_its_lines(tmp_path):
    from benchwright.core.evidence import Citation, resolve_citation

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "blueprints.py").write_text("x\n" * 128)
    (tmp_path / "b" / "blueprints.py").write_text("y\n" * 400)
    ev = resolve_citation(tmp_path, Citation("blueprints.py", 213, 221))
    assert ev.status == "ambiguous" and ev.path == "b/blueprints.py" and not ev.beyond_end
    assert ev.candidates == ("b/blueprints.py", "a/blueprints.py")
    short = resolve_citation(tmp_path, Citation("blueprints.py", 900, 901))
    assert short.beyond_end  # no file holds line 900


# ------------------------------------------------------------------- citations of any file the repository has
@pytest.fixture
def odd_repo(tmp_path) -> Path:
    root = tmp_path / "odd"
    for f, text in {
        "include/foo.tpp": "template <class T> T twice(T x) { return 2 * x; }\n",
        "include/detail/impl.ipp": "inline int impl() { return 1; }\n",
        "scripts/run": "#!/usr/bin/env python3\nprint('hi')\n",
        "Makefile": "all:\n\techo hi\n",
        "sub/Dockerfile": "FROM python:3.12\n",
        "config.json": "{}\n",
    }.items():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(text)
    return root


def test_paths_without_a_known_extension_are_citations_when_the_repository_has_them(odd_repo):
    from benchwright.core.evidence import RepositoryFiles

    text = (
        "The template is in `include/foo.tpp:12`, its helper in impl.ipp (lines 3-4); "
        "scripts/run:3 starts it and the Makefile builds it. See also ./include/detail/impl.ipp."
    )
    got = extract_citations(text, RepositoryFiles(odd_repo))
    assert got == [C("include/foo.tpp", 12), C("impl.ipp", 3, 4), C("scripts/run", 3), C("Makefile"),
                   C("include/detail/impl.ipp")]
    # without the repository's files only known extensions are recognised (the old behaviour)
    assert extract_citations(text) == []
    evidence = {str(e.citation): (e.status, e.path) for e in gather_evidence(odd_repo, text)}
    assert evidence == {
        "include/foo.tpp:12": ("found", "include/foo.tpp"),
        "impl.ipp:3-4": ("found-by-suffix", "include/detail/impl.ipp"),
        "scripts/run:3": ("found", "scripts/run"),
        "Makefile": ("found", "Makefile"),
        "include/detail/impl.ipp": ("found", "include/detail/impl.ipp"),
    }


@pytest.mark.parametrize(
    "text",
    [
        "run the tests, then make all",  # words that are also the names of files in folders
        "the Dockerfile sets it up",  # only sub/Dockerfile exists: a bare word must be a top-level file
        "see include/bar.tpp and scripts/walk",  # paths the repository does not have
        "flask.Flask, e.g. app.run and and/or",
        "the run() helper and scripts/run(3)",
    ],
    ids=repr,
)
def test_ordinary_words_are_not_turned_into_citations(odd_repo, text):
    from benchwright.core.evidence import RepositoryFiles

    assert extract_citations(text, RepositoryFiles(odd_repo)) == []


def test_a_bare_data_file_is_a_citation_only_when_it_is_at_the_top_of_the_repository(odd_repo):
    from benchwright.core.evidence import RepositoryFiles

    files = RepositoryFiles(odd_repo)
    assert extract_citations("config.json holds it", files) == [C("config.json")]
    assert extract_citations("package.json holds it", files) == []
    assert extract_citations("config.json holds it") == []


# ------------------------------------------------------------------------------------------------ lexers
@pytest.mark.parametrize(
    ("path", "language", "text", "lexer"),
    [
        ("include/widget.h", "C++", "class Widget;\n", "cpp"),  # the repository's language decides .h
        ("include/widget.h", "c++", "", "cpp"),
        ("include/widget.h", None, "int widget(void);\n", "c"),
        ("include/widget.h", "C", "", "c"),
        ("include/widget.h", None, "@interface Widget : NSObject\n@end\n", "objective-c"),
        ("src/widget.hpp", "C", "", "cpp"),  # a name only one lexer claims wins over the language
        ("tools/gen.py", "C++", "", "python"),
        ("include/foo.tpp", None, "", "cpp"),
        ("include/foo.ipp", None, "", "cpp"),
        ("Makefile", "Python", "all:\n", "make"),
        ("CMakeLists.txt", "C++", "project(x)\n", "cmake"),
        ("scripts/run", "C++", "#!/usr/bin/env python3\nimport sys\n", "python"),  # extensionless: content
        ("scripts/deploy", None, "#!/bin/bash\necho hi\n", "bash"),
        ("bin/tool", "Python", "#!/usr/bin/env node\nconsole.log(1)\n", "javascript"),
        ("bin/setup", None, "#!/bin/sh -e\n", "bash"),
        ("tools/gen", None, "x = 1\n# vim: ft=python\n", "python"),
        ("LICENSE", "Python", "MIT License\n\nPermission is hereby granted, free of charge\n", None),
        ("notes.txt", "Python", "plain words\n", None),
        ("data/blob", None, "", None),
    ],
    ids=repr,
)
def test_choose_lexer_by_name_then_language_then_content(path, language, text, lexer):
    from benchwright.core.evidence import choose_lexer

    assert choose_lexer(path, language=language, text=text) == lexer


# ------------------------------------------------------------------------------------- the viewer's limits
def test_viewer_limits_defaults_and_configuration(tmp_path, monkeypatch):
    from benchwright.core.errors import BenchwrightError
    from benchwright.core.evidence import ViewerLimits, load_viewer_limits, viewer_limits

    assert viewer_limits(None) == viewer_limits({}) == ViewerLimits()
    assert ViewerLimits() == ViewerLimits(window_lines=200, max_line_chars=2_000, highlight_max_bytes=2_000_000,
                                          max_file_bytes=10_000_000)
    assert viewer_limits({"max_line_chars": 80}).max_line_chars == 80
    for table, message in [
        ({"max_line_chars": 0}, "max_line_chars: must be a positive integer"),
        ({"max_line_chars": "80"}, "max_line_chars: must be a positive integer"),
        ({"max_line_chars": True}, "max_line_chars: must be a positive integer"),
        ({"line_chars": 80}, "unknown setting 'line_chars'"),
        ([1], "must be a table"),
    ]:
        with pytest.raises(BenchwrightError, match=message):
            viewer_limits(table)
    config = tmp_path / "config.toml"
    config.write_text("[evidence]\nhighlight_max_bytes = 5000\nwindow_lines = 50\n")
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(config))
    assert load_viewer_limits() == ViewerLimits(window_lines=50, highlight_max_bytes=5000)
    config.write_text("[evidence]\nwindow_lines = -1\n")
    with pytest.raises(BenchwrightError, match=r"config.toml \[evidence\] window_lines"):
        load_viewer_limits()


def test_display_line_cuts_long_lines_and_shows_controls():
    from benchwright.core.evidence import CUT_MARK, display_line, display_lines, file_lines

    assert display_line("x" * 2_500, 2_000) == ("x" * 2_000, 500)
    assert display_line("a\tb\x1b[31m", 2_000) == ("a   b␛[31m", 0)
    assert display_line("short", 2_000) == ("short", 0)
    assert CUT_MARK.format(n=198_000) == " … [line cut: 198,000 more characters]"
    assert display_lines(["ok", "y" * 10, "\tz"], 5) == (["ok", "yyyyy", "    z"], {1: 5})
    assert file_lines("a\nb\n") == ["a", "b"] and file_lines("a\r\nb") == ["a\r", "b"] and file_lines("") == [""]


@pytest.mark.parametrize(
    ("start", "end", "count", "window", "expected"),
    [
        (25_000, 25_000, 30_000, 200, (24_799, 25_200)),
        (1, 1, 1, 200, (0, 1)),
        (10, 20, 15, 5, (4, 15)),
        (None, None, 30_000, 200, (0, 401)),
        (900, 900, 100, 200, (0, 100)),  # cited past the end: the end of the file
    ],
)
def test_cited_window(start, end, count, window, expected):
    from benchwright.core.evidence import cited_window

    assert cited_window(start, end, count, window) == expected
