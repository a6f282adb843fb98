"""Item statistics across a model panel (core/item_stats.py) on a planted panel: a strong model S, a middling M
and a weak W; an item every model passes, one nobody passes, one that separates them as the rest of the
benchmark does, one that ranks them backwards, and two fillers that make S strong and W weak.

    item     S    M    W
    easy    1.0  1.0  1.0     saturated (every model >= 0.9)
    hard    0.0  0.0  0.0     unsolved (every model <= 0.1)
    sep     1.0  0.5  0.0     discriminates: S's mean on the other items 0.54, M's 0.52, W's 0.46
    anti    0.0  0.5  1.0     backwards: negative index -> low-discrimination
    f1      0.9  0.5  0.1
    f2      0.8  0.6  0.2
"""

from __future__ import annotations

import numpy as np
import pytest

from benchwright.core.calibration import ScoredAnswer
from benchwright.core.errors import BenchwrightError
from benchwright.core.item_stats import ItemThresholds, item_stats, pearson

PANEL = {
    "easy": (1.0, 1.0, 1.0), "hard": (0.0, 0.0, 0.0), "sep": (1.0, 0.5, 0.0), "anti": (0.0, 0.5, 1.0),
    "f1": (0.9, 0.5, 0.1), "f2": (0.8, 0.6, 0.2),
}
MODELS = ("S", "M", "W")


def answers(panel=PANEL):
    return [ScoredAnswer(q, m, "agentic", 0, "checklist", "j", s, 1)
            for q, row in panel.items() for m, s in zip(MODELS, row, strict=True)]


def stats(**kw):
    return {i.qa_pair_id: i for i in item_stats(answers(), MODELS, **kw).items}


def test_flags_of_the_planted_panel():
    r = stats()
    assert r["easy"].flags == ("saturated",)
    assert r["hard"].flags == ("unsolved",)
    assert r["sep"].flags == ()
    assert r["anti"].flags == ("low-discrimination",)
    assert r["easy"].pass_share == 1.0 and r["hard"].pass_share == 0.0
    assert r["sep"].pass_share == pytest.approx(2 / 3)  # 1.0 and 0.5 reach the pass bar 0.5


def test_discrimination_is_the_corrected_item_total_correlation():
    r = stats()
    rest = [np.mean([PANEL[q][k] for q in PANEL if q != "sep"]) for k in range(3)]
    assert rest == pytest.approx([0.54, 0.52, 0.46])
    assert r["sep"].discrimination == pytest.approx(np.corrcoef(PANEL["sep"], rest)[0, 1])
    assert r["sep"].discrimination > 0.9
    assert r["anti"].discrimination < -0.9
    assert r["easy"].discrimination is None and r["hard"].discrimination is None  # no variance on the item
    ranked = item_stats(answers(), MODELS).ranked()
    assert ranked[0].qa_pair_id in ("sep", "f1", "f2") and ranked[-1].qa_pair_id == "anti"


def test_mean_and_sample_sd_across_models():
    r = stats()
    assert r["sep"].mean == pytest.approx(0.5)
    assert r["sep"].sd == pytest.approx(0.5)  # deviations .5, 0, -.5: sqrt(.5 / 2)
    assert r["easy"].sd == 0


def test_closed_book_solvable_comes_from_calibration():
    r = stats(too_easy=["sep"])
    assert r["sep"].flags == ("closed-book-solvable",)


def test_fewer_than_three_models_have_no_index_and_min_models_guards_the_flags():
    two = item_stats(answers(), ("S", "M")).items
    assert all(i.discrimination is None for i in two)
    one = {i.qa_pair_id: i for i in item_stats(answers(), ("S",)).items}
    assert one["easy"].flags == () and one["easy"].sd is None  # one model cannot saturate an item
    one = {i.qa_pair_id: i for i in item_stats(answers(), ("S",),
                                               thresholds=ItemThresholds(min_models=1)).items}
    assert one["easy"].flags == ("saturated",)


def test_thresholds_are_parameters_and_counted():
    res = item_stats(answers(), MODELS, thresholds=ItemThresholds(high=0.8, low=0.2, min_discrimination=0.99))
    counts = res.counts
    assert counts["saturated"] == 1 and counts["unsolved"] == 1
    assert counts["low-discrimination"] >= 2  # anti, and sep / the fillers below 0.99
    assert set(counts) == {"saturated", "unsolved", "closed-book-solvable", "low-discrimination"}


@pytest.mark.parametrize("kw", [{"high": 1.5}, {"low": -0.1}, {"low": 0.9, "high": 0.5},
                                {"min_discrimination": 2.0}, {"min_models": 0}])
def test_bad_thresholds_are_refused(kw):
    with pytest.raises(BenchwrightError):
        item_stats(answers(), MODELS, thresholds=ItemThresholds(**kw))


def test_pearson_edge_cases():
    assert pearson([1, 2], [1]) is None
    assert pearson([1, 1, 1], [1, 2, 3]) is None
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
