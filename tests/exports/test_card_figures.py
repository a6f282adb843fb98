"""Issue 20 item 3: PNG figures on the dataset card (exports/figures.py), drawn from the numbers the card prints,
written under figures/, linked from the card, listed in the manifest and checked by verify; byte-identical builds;
nothing (and the same card) where the release has no such data or asks for none. The scores they draw:
core/release_scores.py against values worked out by hand."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from benchwright.core.metrics import EffectiveScore, JudgedRun, PairStrata
from benchwright.core.release_scores import release_scores
from benchwright.exports import ReleaseSpec, verify_release, write_release
from benchwright.exports.figures import FIGURE_KINDS, draw_figures, label, planned_figures

CREATED = "2026-12-02T09:30:00+00:00"
HERE = Path(__file__).parent

KEY = {"condition": "direct", "judge": "checklist", "judge_model": "judge-1"}
SCORES = {"bins": 10, "groups": [
    {"model": "gpt-x", **KEY, "answers": 3, "runs": 6, "overall_pct": 60.0, "histogram": [0, 0, 1, 0, 0, 0, 1, 0, 0, 1]},
    {"model": "_hidden $\\frac{1}{0}$ [bold]x[/]", **KEY, "answers": 2, "runs": 2, "overall_pct": 45.0,
     "histogram": [1, 0, 0, 0, 0, 0, 0, 0, 1, 0]}],
    "strata": [{"axis": "category", "rows": [
        {"stratum": "Business Logic", "model": "gpt-x", **KEY, "answers": 2, "overall_pct": 50.0},
        {"stratum": "Business Logic", "model": "_hidden $\\frac{1}{0}$ [bold]x[/]", **KEY, "answers": 1,
         "overall_pct": 0.0},
        {"stratum": "ctrl \x1b[31m\u202e tab\there", "model": "gpt-x", **KEY, "answers": 1, "overall_pct": 80.0}]},
        {"axis": "qa_type", "rows": [{"stratum": "How", "model": "gpt-x", **KEY, "answers": 3, "overall_pct": 60.0}]}]}
AGREEMENT = {"decision": {"pairs": 12, "fleiss_kappa": "0.612", "krippendorff_alpha": "0.640",
                          "percent_agreement": "80.0%"},
             "criterion $x$": {"pairs": 2, "fleiss_kappa": "n/a", "krippendorff_alpha": "undefined (no variance)"}}
FUNNEL = [{"stage": "harvested", "title": "harvested", "in": 120, "out": 100, "dropped": {}, "failed": 0,
           "not_run": 0, "gating": False},
          {"stage": "released", "title": "released", "in": 100, "out": 40, "dropped": {"not accepted": 60},
           "failed": 0, "not_run": 0, "gating": True}]
ALL = ["figures/score-distribution.png", "figures/scores-by-category.png", "figures/scores-by-qa-type.png",
       "figures/agreement.png", "figures/curation-funnel.png"]


def rows():
    sys.path.insert(0, str(HERE))
    from test_release_golden import fixture_rows

    return fixture_rows(8)


def spec(**kw) -> ReleaseSpec:
    base = dict(name="figs", version="1.0.0", created_at=CREATED, created_by="ada", benchwright_version="0.test",
                schema_version=5, agreement=AGREEMENT, funnel=FUNNEL, scores=SCORES, figures=list(FIGURE_KINDS))
    return ReleaseSpec(**{**base, **kw})


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i:i + 4])
        kind, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        assert zlib.crc32(kind + body) == struct.unpack(">I", data[i + 8 + n:i + 12 + n])[0]
        out.append((kind, body))
        i += 12 + n
    return out


# ------------------------------------------------------------------------------------------- the release
def test_figures_are_written_listed_linked_and_verified(tmp_path: Path):
    folder = write_release(rows(), spec(), tmp_path)
    got = files(folder)
    assert sorted(k for k in got if k.startswith("figures/")) == sorted(ALL)
    manifest = json.loads(got["manifest.json"])
    assert manifest["figures"] == list(FIGURE_KINDS) and manifest["scores"] == SCORES
    import hashlib

    for name in ALL:
        assert manifest["files"][name] == {"sha256": hashlib.sha256(got[name]).hexdigest(), "size": len(got[name])}
        chunks = png_chunks(got[name])
        kinds = [k for k, _ in chunks]
        assert b"tIME" not in kinds  # no time in the file
        assert not any(b"matplotlib" in body.lower() for k, body in chunks if k in (b"tEXt", b"iTXt", b"zTXt"))
        w, h = struct.unpack(">II", chunks[0][1][:8])
        assert w == 800 and 200 < h < 2000  # 8 inches at 100 dpi
    card = got["README.md"].decode()
    for f in planned_figures(spec()):
        assert f"![{f.alt}]({f.path})" in card  # relative links with alt text
    # each link sits in its section: the funnel under Curation, agreement under Review agreement, scores under Scores
    assert card.index("## Review agreement") < card.index("(figures/agreement.png)") < card.index("## Exclusions")
    assert card.index("## Scores") < card.index("(figures/score-distribution.png)") < card.index(
        "### Scores by category") < card.index("(figures/scores-by-category.png)") < card.index(
        "### Scores by QA type") < card.index("(figures/scores-by-qa-type.png)")
    assert "| gpt-x | direct | checklist | judge-1 | 3 | 6 | 60.0% |" in card
    assert "| gpt-x | direct | checklist | judge-1 | 0 | 0 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 1 |" in card
    assert "| Business Logic | gpt-x | direct | checklist | judge-1 | 2 | 50.0% |" in card
    rep = verify_release(folder)
    assert rep.ok, rep.problems
    assert rep.files_checked == 4 + len(ALL)


def test_a_tampered_missing_or_unlisted_png_fails_verify(tmp_path: Path):
    folder = write_release(rows(), spec(), tmp_path)
    png = folder / "figures/agreement.png"
    original = png.read_bytes()
    png.write_bytes(original[:-20] + bytes(b ^ 1 for b in original[-20:]))
    rep = verify_release(folder)
    assert not rep.ok and any(p.startswith("figures/agreement.png: sha256 is") for p in rep.problems)
    png.unlink()
    assert "figures/agreement.png: listed in the manifest but missing" in verify_release(folder).problems
    png.write_bytes(original)
    (folder / "figures/extra.png").write_bytes(original)
    assert "figures/extra.png: not listed in the manifest" in verify_release(folder).problems
    (folder / "figures/extra.png").unlink()
    assert verify_release(folder).ok
    card = folder / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\n![x](figures/nowhere.png)\n", encoding="utf-8")
    problems = verify_release(folder).problems
    assert "README.md links figures/nowhere.png, which the manifest does not list" in problems


@pytest.mark.slow
def test_two_builds_in_two_processes_are_byte_identical(tmp_path: Path):
    """A fresh interpreter each time (font cache, hash seeds, matplotlib state): the same bytes, and the same as
    this process's."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[2]);"
        "from test_card_figures import rows, spec; from benchwright.exports import write_release;"
        "write_release(rows(), spec(), sys.argv[1])"
    )
    for i, seed in enumerate(("1", "2")):
        env = {"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / f"home{i}"),
               "MPLCONFIGDIR": str(tmp_path / f"mpl{i}")}
        subprocess.run([sys.executable, "-c", script, str(tmp_path / f"p{i}"), str(HERE)], check=True, env=env)
    here = write_release(rows(), spec(), tmp_path / "here")
    a, b = files(tmp_path / "p0" / "figs-1.0.0"), files(tmp_path / "p1" / "figs-1.0.0")
    assert a == b == files(here)
    assert len([k for k in a if k.endswith(".png")]) == len(ALL)


def test_a_matplotlibrc_of_the_user_changes_no_byte(tmp_path: Path, monkeypatch):
    import matplotlib

    before = draw_figures(spec())
    with matplotlib.rc_context({"font.size": 20, "axes.facecolor": "black", "lines.linewidth": 9,
                                "axes.prop_cycle": matplotlib.cycler(color=["red"]), "figure.dpi": 300}):
        assert draw_figures(spec()) == before


def test_each_figure_only_where_its_data_is():
    def paths(**kw):
        return [f.path for f in planned_figures(spec(**kw))]

    assert paths() == ALL
    assert paths(scores=None) == ["figures/agreement.png", "figures/curation-funnel.png"]
    assert paths(scores=None, funnel=None) == ["figures/agreement.png"]
    assert paths(scores=None, funnel=[], agreement={}) == []
    # agreement figures that are all undefined draw nothing; counts and percentages are not drawn
    assert paths(scores=None, funnel=None, agreement={"decision": {"fleiss_kappa": "n/a", "pairs": 3}}) == []
    assert paths(scores=None, funnel=None, agreement={"decision": {"percent_agreement": "80.0%"}}) == []
    assert paths(scores={**SCORES, "strata": []}, funnel=None, agreement={}) == ["figures/score-distribution.png"]
    assert paths(figures=["funnel", "agreement"]) == ["figures/agreement.png", "figures/curation-funnel.png"]
    assert paths(figures=None) == paths(figures=[]) == []


def test_without_figures_or_their_data_nothing_is_drawn_and_the_card_is_unchanged(tmp_path: Path, monkeypatch):
    """A release that asks for figures but has none of their data writes no figures/ folder and the same card as
    one that asks for none (a release made before figures existed); matplotlib is not even imported."""
    from benchwright.exports import figures as figures_mod

    def boom(*a, **k):
        raise AssertionError("drew a figure")

    monkeypatch.setattr(figures_mod, "_render", boom)
    bare = dict(agreement={}, funnel=None, scores=None)
    asked = write_release(rows(), spec(**bare), tmp_path / "a")
    none = write_release(rows(), spec(**bare, figures=None), tmp_path / "b")
    fa, fb = files(asked), files(none)
    assert not (asked / "figures").exists()
    assert fa["README.md"] == fb["README.md"]
    assert "figures/" not in fa["README.md"].decode()
    ma, mb = json.loads(fa["manifest.json"]), json.loads(fb["manifest.json"])
    assert ma.pop("figures") == list(FIGURE_KINDS) and "figures" not in mb and ma == mb
    # data but figures=None (an old release's rebuild): the same card text as without the figure links
    old = write_release(rows(), spec(figures=None), tmp_path / "c")
    assert not (old / "figures").exists() and "](figures/" not in (old / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_matplotlib_is_imported_only_when_a_figure_is_drawn(tmp_path: Path):
    script = (
        "import sys; sys.path.insert(0, sys.argv[2]);"
        "from test_card_figures import rows, spec; from benchwright.exports import write_release;"
        "write_release(rows(), spec(figures=None), sys.argv[1] + '/a');"
        "assert 'matplotlib' not in sys.modules, 'imported without a figure';"
        "write_release(rows(), spec(), sys.argv[1] + '/b');"
        "assert 'matplotlib' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path), str(HERE)], check=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / "mpl")})


def test_the_bundled_dejavu_sans_is_the_font_used():
    import matplotlib
    from matplotlib import font_manager, rc_context, style

    from benchwright.exports.figures import RC

    with style.context("default"), rc_context(RC):
        path = font_manager.findfont(font_manager.FontProperties(family=RC["font.family"]), fallback_to_default=False)
    assert Path(path) == Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


def test_labels_from_data_are_literal_and_one_line():
    assert label("a\x1b[31m\u202eb\n\tc") == "a [31m b c"
    assert label("$x^2$ [bold]y[/]") == "$x^2$ [bold]y[/]"
    assert label(None) == "(none)" and label("") == "(none)"
    assert label("x" * 100, 10) == "x" * 9 + "…"


def test_hostile_names_are_drawn_literally_without_error():
    """Math text is off: a model name that is broken math text (which matplotlib would refuse to parse), NUL,
    an emoji and CJK draws; the figure differs from the plain name's (the text is drawn, not dropped)."""
    import copy

    hostile = copy.deepcopy(SCORES)
    hostile["groups"][0]["model"] = "a $\\badcommand{ $ ^_ \x00 \U0001F9EA 日本"
    hostile["strata"][0]["rows"][0]["model"] = hostile["groups"][0]["model"]
    drawn = draw_figures(spec(scores=hostile, agreement={}, funnel=None))
    assert sorted(drawn) == ALL[:3]
    assert drawn != draw_figures(spec(agreement={}, funnel=None))


# ----------------------------------------------------------------------------------------------- scores
def _run(jid: int, answer: str, pair: str, model: str, points: int, *, run_index: int = 0, judge: str = "checklist",
         category: str | None = "A", status: str = "scored") -> JudgedRun:
    entries = (EffectiveScore("1", "k", "knowledge", points - 1 if points else 0, 9),
               EffectiveScore("2", "clarity", "clarity", 1 if points else 0, 1))
    return JudgedRun(judgment_id=jid, answer_id=answer, qa_pair_id=pair, model=model, condition="direct",
                     judge=judge, judge_model="j" if judge != "human" else "ada", run_index=run_index,
                     status=status, entries=entries, strata=PairStrata(category=category, qa_type="How"))


def test_release_scores_by_hand():
    """m1: answer a1 runs of 10 and 6 points (mean 80 %), a2 3 points (30 %), a3 on an unreleased pair; m2: b1
    10 points (100 %, the last bin), b2 0 points; an unscored run and a human's are left out."""
    runs = [
        _run(1, "a1", "p1", "m1", 10), _run(2, "a1", "p1", "m1", 6, run_index=1), _run(3, "a2", "p2", "m1", 3,
                                                                                       category="B"),
        _run(4, "a3", "p3", "m1", 10), _run(5, "b1", "p1", "m2", 10), _run(6, "b2", "p2", "m2", 0, category="B"),
        _run(7, "b2", "p2", "m2", 10, run_index=1, status="unscored"), _run(8, "a2", "p2", "m1", 10, judge="human"),
    ]
    got = release_scores(runs, {"p1", "p2"}, axes=("category",))
    key = {"condition": "direct", "judge": "checklist", "judge_model": "j"}
    assert got == {"bins": 10, "groups": [
        {"model": "m1", **key, "answers": 2, "runs": 3, "overall_pct": 55.0,
         "histogram": [0, 0, 0, 1, 0, 0, 0, 0, 1, 0]},
        {"model": "m2", **key, "answers": 2, "runs": 2, "overall_pct": 50.0,
         "histogram": [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]},
    ], "strata": [{"axis": "category", "rows": [
        {"stratum": "A", "model": "m1", **key, "answers": 1, "overall_pct": 80.0},
        {"stratum": "A", "model": "m2", **key, "answers": 1, "overall_pct": 100.0},
        {"stratum": "B", "model": "m1", **key, "answers": 1, "overall_pct": 30.0},
        {"stratum": "B", "model": "m2", **key, "answers": 1, "overall_pct": 0.0},
    ]}]}
    assert release_scores(runs, {"p9"}) is None
    # an axis on which no pair has a value is left out (a lone "(none)" stratum compares nothing)
    assert [e["axis"] for e in release_scores(runs, {"p1", "p2"}, axes=("category", "theme", "qa_type"))[
        "strata"]] == ["category", "qa_type"]
    assert release_scores(runs, {"p1"}, bins=2)["groups"][0]["histogram"] == [0, 1]
    with pytest.raises(ValueError, match="unknown stratification axis 'colour'"):
        release_scores(runs, {"p1"}, axes=("colour",))
