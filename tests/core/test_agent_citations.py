"""The locations a final answer cites, resolved with the evidence code and counted (resolving / not)."""

from __future__ import annotations

from test_agent_fixture import make_repo

from benchwright.core.agent.citations import CitationCount, resolve_citations


def test_citations_are_resolved_and_counted(tmp_path):
    root = make_repo(tmp_path)
    text = (f"Tasks run in order (pkg/engine.py: line 14-16), see pkg/engine.py:18 and engine.py#L23-L28.\n"
            f"The helper is in {root}/pkg/util.py: line 4-6. Not here: pkg/missing.py: line 1-2, nor "
            "pkg/engine.py: line 90-95.\nlines 1-3 of docs/guide.md; leak/secret.py: line 1")
    count = resolve_citations(root, text)
    assert (count.resolving, count.not_resolving, count.total) == (5, 3, 8)
    assert [(i.cited, i.status, i.path, i.resolves) for i in count.items] == [
        ("pkg/engine.py:14-16", "found", "pkg/engine.py", True),
        ("pkg/engine.py:18", "found", "pkg/engine.py", True),
        ("engine.py:23-28", "found-by-suffix", "pkg/engine.py", True),
        ("pkg/util.py:4-6", "found", "pkg/util.py", True),  # an absolute path under the root reads as relative
        ("pkg/missing.py:1-2", "missing", None, False),
        ("pkg/engine.py:90-95", "beyond-end", "pkg/engine.py", False),
        ("docs/guide.md:1-3", "found", "docs/guide.md", True),
        ("leak/secret.py:1", "unsafe", None, False),  # through a symlink out: never resolves
    ]
    assert count.as_json()["resolving"] == 5 and count.as_json()["not_resolving"] == 3
    assert count.as_json()["items"][0] == {"cited": "pkg/engine.py:14-16", "status": "found",
                                           "path": "pkg/engine.py", "resolves": True}


def test_no_repository_and_no_citations(tmp_path):
    count = resolve_citations(None, "pkg/engine.py: line 1-2")
    assert (count.resolving, count.not_resolving) == (0, 1) and count.items[0].status == "no-repository"
    assert resolve_citations(make_repo(tmp_path), "No file is named here.") == CitationCount()
    assert resolve_citations(tmp_path, None).total == 0
