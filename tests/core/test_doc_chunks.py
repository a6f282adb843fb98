"""Documentation chunks and their scores (Code-QA-Bench "Methodology" 3, chunk selection) on the fixture repository
tests/data/doc_chunks_repo: Markdown and RST sections, docstrings, references resolving in the code, weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.core.doc_chunks import (
    DEFAULT_WEIGHTS,
    ChunkSettings,
    ChunkSettingsError,
    code_index,
    doc_chunks,
    references,
    split_markdown,
    split_rst,
)

REPO = Path(__file__).resolve().parents[1] / "data" / "doc_chunks_repo"


def test_the_fixture_is_cut_into_sections_and_docstrings_best_first():
    got = [(c.path, c.start_line, c.end_line, c.kind, c.title) for c in doc_chunks(REPO, "shop")]
    assert got == [
        ("README.md", 5, 20, "markdown", "Placing an order"),
        ("docs/inventory.rst", 5, 17, "rst", "Reserving stock"),
        ("shop/orders.py", 20, 26, "docstring", "place_order"),
        ("shop/orders.py", 1, 6, "docstring", "module"),
    ]  # the short sections (License, Changelog, the title alone) have fewer than 20 words


def test_features_and_score_of_the_best_chunk():
    best = doc_chunks(REPO, "shop")[0]
    assert best.features == {"length": 0.6833, "prose": 0.6923, "references": 1.0,
                             "reference_precision": 0.8571, "structure": 1.0}
    expected = sum(best.features[k] * w for k, w in DEFAULT_WEIGHTS.items()) / sum(DEFAULT_WEIGHTS.values())
    assert best.score == pytest.approx(expected, abs=1e-4)
    refs = dict(best.references)
    assert refs["Inventory.reserve"] and refs["shop/orders.py"] and refs["price_total()"] and refs["OutOfStock"]
    assert refs["(sku, quantity)"] is False  # a backticked span that names nothing in the code
    assert best.id.startswith("dc_") and best.id == doc_chunks(REPO, "shop")[0].id  # stable


def test_a_docstring_chunk_without_references_scores_below_one_with_them():
    chunks = {c.title: c for c in doc_chunks(REPO, "shop") if c.kind == "docstring"}
    assert chunks["module"].features["references"] == 0.0
    assert chunks["place_order"].score > chunks["module"].score


def test_weights_change_the_order_and_top_keeps_the_best():
    only_prose = ChunkSettings.from_weights({k: 0.0 for k in DEFAULT_WEIGHTS} | {"prose": 1.0})
    first = doc_chunks(REPO, "shop", only_prose)[0]
    assert first.kind == "docstring" and first.features["prose"] == 1.0
    assert len(doc_chunks(REPO, "shop", top=2)) == 2
    assert len(doc_chunks(REPO, "shop", ChunkSettings(min_words=0))) > 4


@pytest.mark.parametrize("weights, message", [({"nope": 1}, "unknown chunk feature 'nope'"),
                                              ({"prose": -1}, "must be a number >= 0"),
                                              ({k: 0 for k in DEFAULT_WEIGHTS}, "every chunk feature weight is 0")])
def test_bad_weights_are_refused(weights, message):
    with pytest.raises(ChunkSettingsError, match=message):
        ChunkSettings.from_weights(weights)


def test_markdown_headings_inside_fences_do_not_cut():
    text = "# A\n\ntext\n\n```\n# not a heading\n```\n\n## B\n\nmore\n"
    assert [(r.title, r.start, r.end) for r in split_markdown("x.md", text)] == [("A", 1, 7), ("B", 9, 11)]


def test_rst_titles_with_and_without_overline():
    text = "=====\nTitle\n=====\n\nintro\n\nSub\n---\n\nbody\n\nToo long title\n---\n"
    got = [(r.title, r.start) for r in split_rst("x.rst", text)]
    assert got == [("Title", 1), ("Sub", 7)]  # an underline shorter than its title is no title


def test_references_and_what_resolves():
    refs = references("See :func:`shop.orders.place_order`, `Inventory`, pkg/app.py and run() at https://x.org/a.b")
    assert refs == ["shop.orders.place_order", "Inventory", "pkg/app.py", "run()"]
    index = code_index(REPO, ["shop/orders.py", "shop/inventory.py", "README.md"])
    assert index.resolves("shop.orders.place_order") and index.resolves("Inventory.restock()")
    assert index.resolves("orders.py") is False and index.resolves("shop/orders.py")
    assert not index.resolves("nowhere_defined")


def test_hostile_and_undecodable_files_are_read_without_error(tmp_path):
    (tmp_path / "bad.md").write_bytes(b"# T\n\n" + b"\xff\xfe [bold]x[/] \x1b[31m " * 30)
    (tmp_path / "broken.py").write_text('"""doc"""\ndef (:\n')
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_text("# hidden\n\n" + "word " * 50)
    chunks = doc_chunks(tmp_path, "t")
    assert [c.path for c in chunks] == ["bad.md"] and "\ufffd" in chunks[0].text


def test_change_logs_and_licences_are_left_out_unless_asked(tmp_path):
    body = "# Release 2.0\n\n" + "The `run` function changed its defaults in this release. " * 5
    (tmp_path / "CHANGES.md").write_text(body)
    (tmp_path / "guide.md").write_text(body)
    assert [c.path for c in doc_chunks(tmp_path, "t")] == ["guide.md"]
    assert [c.path for c in doc_chunks(tmp_path, "t", ChunkSettings(exclude=()))] == ["CHANGES.md", "guide.md"]
