"""Inter-annotator agreement for benchmark reviews.

Three chance-corrected agreement figures over the same input, a flat list of :class:`Rating` (one
annotator's label for one item), plus agreement between two or more annotators' checklists:

- :func:`cohen_kappa_pairs`: Cohen's kappa for every pair of annotators (scikit-learn).
- :func:`fleiss_kappa`: Fleiss' kappa over items rated by the same number of raters (statsmodels).
- :func:`krippendorff_alpha`: Krippendorff's alpha, nominal or interval, missing ratings allowed
  (the ``krippendorff`` package).
- :func:`agreement_report`: all three for each field (QA criteria pass/fail, accept/reject/revise).
- :func:`match_key_points` and :func:`checklist_agreement`: checklist items of different annotators
  paired by text similarity (difflib), their match rate, and Krippendorff's alpha of their weights.

The libraries want the same ratings in three different layouts; this module builds each one:

- ``sklearn.metrics.cohen_kappa_score(y1, y2)``: two aligned 1-D label vectors of shape ``(n_items,)``;
  position *k* of both is the same item. No missing values, so only the items both annotators rated.
- ``statsmodels.stats.inter_rater.fleiss_kappa(table)``: an items x categories **count table** of shape
  ``(n_items, n_categories)``; cell *(i, j)* is how many raters put item *i* in category *j*, and every
  row sums to the same number of raters. ``aggregate_raters(data, n_cat)`` makes it from an items x
  raters matrix of integer category codes ``0 .. n_cat - 1``.
- ``krippendorff.alpha(reliability_data, level_of_measurement)``: a **raters x items** reliability
  matrix of shape ``(n_raters, n_items)``, float, with ``np.nan`` where a rater did not rate an item.
  Nominal labels are mapped to numeric codes here so the matrix can be float with ``nan``.

No figure is ever ``nan``: where a statistic is undefined (too few items, one annotator, every label the
same, no overlap) the value is ``None`` and a sentence says why. Missing ratings (``value=None`` or a
float ``nan``) are dropped before any layout is built. :func:`figure_text` is the one wording of a figure
for people (CLI, app, dataset card): a value, ``undefined (no variance; 100.0% agreement)`` when every
rating is one label, or ``n/a``.

scikit-learn and statsmodels are imported inside the functions that use them: together they take seconds
to import, and nothing else in benchwright needs them.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

import krippendorff
import numpy as np

Level = Literal["nominal", "interval"]
"""Level of measurement for Krippendorff's alpha: ``nominal`` (labels, only equality matters) or
``interval`` (numbers, differences matter)."""

LEVELS: tuple[Level, ...] = ("nominal", "interval")

Value = str | float | None


@dataclass(frozen=True)
class Rating:
    """One annotator's label for one item.

    Attributes:
        item: the rated thing's id (a QA pair id, a key-point unit ...).
        annotator: who rated it.
        value: the label: a string (``"pass"``, ``"accept"``) or a number (a weight, a score). ``None``
            or a float ``nan`` means missing: the rating is dropped, the annotator still counts as
            taking part. Numbers and strings are different labels (``1`` is not ``"1"``); ``1`` and
            ``1.0`` are the same label.
    """

    item: str
    annotator: str
    value: Value = None


@dataclass(frozen=True)
class PairwiseKappa:
    """Cohen's kappa of two annotators over the items both rated.

    Attributes:
        annotator_a, annotator_b: the pair, ``annotator_a < annotator_b``.
        kappa: Cohen's kappa in [-1, 1], or ``None`` when it is undefined (see ``reason``).
        n_items: items both annotators rated (non-missing).
        observed_agreement: share of those items given the same label (``None`` when ``n_items == 0``);
            reported so that an undefined kappa over 100 % agreement is told apart from no data.
        reason: why ``kappa`` is ``None``; ``None`` when kappa is defined.
        no_variance: True when kappa is undefined because both gave every shared item one and the same
            label (chance agreement 1, kappa 0/0).
    """

    annotator_a: str
    annotator_b: str
    kappa: float | None
    n_items: int
    observed_agreement: float | None = None
    reason: str | None = None
    no_variance: bool = False

    @property
    def text(self) -> str:
        """The kappa as :func:`figure_text` words it."""
        return figure_text(self.kappa, no_variance=self.no_variance, observed_agreement=self.observed_agreement)


@dataclass(frozen=True)
class AgreementFigure:
    """One agreement statistic over a set of ratings.

    Attributes:
        value: the statistic, or ``None`` when it is undefined; never ``nan``.
        n_items: items that entered the computation.
        n_raters: Fleiss: raters per item (the constant row sum); Krippendorff: annotators who rated
            at least one of those items.
        note: what was used and what was left out, and when ``value`` is ``None``, why.
        no_variance: True when ``value`` is undefined because every rating that entered is one label.
        observed_agreement: share of the pairs of ratings of one item that agree, pooled over the items
            that entered (``None`` without such pairs): the raw percent agreement shown beside an
            undefined figure.
    """

    value: float | None
    n_items: int
    n_raters: int
    note: str
    no_variance: bool = False
    observed_agreement: float | None = None

    @property
    def text(self) -> str:
        """The figure as :func:`figure_text` words it."""
        return figure_text(self.value, no_variance=self.no_variance, observed_agreement=self.observed_agreement)


NO_VARIANCE = "undefined (no variance)"
"""How a chance-corrected figure reads when every rating is one label (it is 0/0, not missing)."""


def figure_text(value: float | None, *, no_variance: bool = False, observed_agreement: float | None = None,
                digits: int = 3) -> str:
    """The one wording of an agreement figure for people (CLI, app, dataset card).

    ``0.712`` for a value (``digits`` decimals); ``undefined (no variance; 100.0% agreement)`` when the
    figure is undefined because every rating is one label (the raw percent agreement is given when known);
    ``n/a`` when it is undefined for want of data (too few items or raters).
    """
    if value is not None:
        return f"{value:.{digits}f}"
    if no_variance:
        if observed_agreement is None:
            return NO_VARIANCE
        return f"{NO_VARIANCE[:-1]}; {100 * observed_agreement:.1f}% agreement)"
    return "n/a"


def _pair_agreement(rows: Iterable[Mapping[str, str | float]]) -> float | None:
    """Share of the pairs of ratings of one item that agree, pooled over ``rows`` (item -> {rater: value})."""
    agree = total = 0
    for row in rows:
        counts = Counter(row.values())
        m = sum(counts.values())
        total += m * (m - 1) // 2
        agree += sum(c * (c - 1) // 2 for c in counts.values())
    return agree / total if total else None


@dataclass(frozen=True)
class FieldAgreement:
    """All agreement figures for one rated field (one QA criterion, or the review decision).

    Attributes:
        field: the field's name, as given to :func:`agreement_report`.
        n_items: items with at least one non-missing rating.
        annotators: every annotator with a rating record for the field, sorted.
        cohen: Cohen's kappa for each pair of ``annotators`` (empty with fewer than two).
        fleiss: Fleiss' kappa (:func:`fleiss_kappa`).
        krippendorff: Krippendorff's alpha at the report's level (:func:`krippendorff_alpha`).
    """

    field: str
    n_items: int
    annotators: list[str]
    cohen: list[PairwiseKappa]
    fleiss: AgreementFigure
    krippendorff: AgreementFigure


@dataclass(frozen=True)
class KeyPointUnit:
    """Key points of different annotators taken to be the same checklist item.

    Attributes:
        indices: annotator -> position of the key point in that annotator's list.
        key_points: annotator -> the key point's text.
        weights: annotator -> the key point's weight.
    """

    indices: dict[str, int]
    key_points: dict[str, str]
    weights: dict[str, float]

    @property
    def matched(self) -> bool:
        """True when two or more annotators have this key point."""
        return len(self.indices) >= 2


@dataclass(frozen=True)
class ChecklistAgreement:
    """How far annotators' checklists for one QA pair agree.

    Attributes:
        annotators: the annotators, sorted (the order they were matched in).
        units: every key point, grouped into units of matching key points; a unit with one member is a
            key point no other annotator has.
        n_key_points: key points over all annotators.
        n_matched: key points in units with two or more annotators.
        match_rate: ``n_matched / n_key_points``; ``None`` with fewer than two annotators or no key points.
            With two annotators this is ``2 * matches / (len(a) + len(b))``.
        weight_alpha: Krippendorff's alpha (interval) of the weights over matched units: each matched
            unit is one item, each annotator one rater, ``nan`` where an annotator lacks the key point.
        note: why ``match_rate`` is ``None``, else an empty string.
    """

    annotators: list[str]
    units: list[KeyPointUnit]
    n_key_points: int
    n_matched: int
    match_rate: float | None
    weight_alpha: AgreementFigure
    note: str = ""


# --------------------------------------------------------------------------------------------------
# Collecting ratings


@dataclass
class _Table:
    """Ratings as item -> annotator -> value (non-missing only), plus who and what was seen at all."""

    values: dict[str, dict[str, str | float]] = field(default_factory=dict)
    annotators: set[str] = field(default_factory=set)
    items: set[str] = field(default_factory=set)

    def by_annotator(self) -> dict[str, dict[str, str | float]]:
        out: dict[str, dict[str, str | float]] = {a: {} for a in self.annotators}
        for item, row in self.values.items():
            for annotator, value in row.items():
                out[annotator][item] = value
        return out


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _collect(ratings: Iterable[Rating]) -> _Table:
    table = _Table()
    for r in ratings:
        if not isinstance(r, Rating):
            raise TypeError(f"expected Rating, got {type(r).__name__}: {r!r}")
        table.annotators.add(r.annotator)
        table.items.add(r.item)
        if _is_missing(r.value):
            continue
        if not isinstance(r.value, str | int | float):
            raise TypeError(
                f"item {r.item!r}, annotator {r.annotator!r}: value {r.value!r} is a {type(r.value).__name__};"
                " it must be a string, a number or None"
            )
        row = table.values.setdefault(r.item, {})
        if r.annotator in row:
            raise ValueError(
                f"item {r.item!r} has two ratings by {r.annotator!r} ({row[r.annotator]!r} and {r.value!r});"
                " keep one rating per annotator and item"
            )
        row[r.annotator] = r.value
    return table


def _label_key(value: str | float) -> tuple[bool, str | float]:
    return (isinstance(value, str), value)


def _codes(values: Iterable[str | float]) -> dict[str | float, int]:
    """Nominal labels -> integer codes 0..k-1 (numbers first, then strings, each in sorted order)."""
    return {v: i for i, v in enumerate(sorted(set(values), key=_label_key))}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _finite(x: float) -> float | None:
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


# --------------------------------------------------------------------------------------------------
# Cohen's kappa


def cohen_kappa_pairs(ratings: Iterable[Rating]) -> list[PairwiseKappa]:
    """Cohen's kappa for every pair of annotators, over the items both rated.

    Shapes: ``ratings`` is a flat list of :class:`Rating`. For each pair (a, b), a < b, the items both
    rated with a non-missing value are sorted and turned into two aligned label vectors of shape
    ``(n_items,)``, which is the layout ``sklearn.metrics.cohen_kappa_score(y1, y2)`` takes (position
    *k* of both vectors is the same item; it has no notion of missing values). Labels are mapped to
    integer codes first, so strings and numbers may be mixed within a field. Observed agreement comes
    from ``sklearn.metrics.accuracy_score`` on the same vectors.

    Returns:
        One :class:`PairwiseKappa` per pair of annotators that appear in ``ratings`` (even with only
        missing values), sorted by ``(annotator_a, annotator_b)``; ``[]`` with fewer than two annotators.
        ``kappa`` is ``None`` with a ``reason`` when fewer than 2 items are shared, or when
        scikit-learn's result is undefined (``nan``): both annotators gave every shared item one and
        the same label, so chance agreement is 1 and kappa is 0/0.

    Raises:
        TypeError: an element is not a :class:`Rating`, or a value is neither string, number nor None.
        ValueError: an annotator rated the same item twice (non-missing both times).
    """
    from sklearn.metrics import accuracy_score, cohen_kappa_score

    table = _collect(ratings)
    by_annotator = table.by_annotator()
    codes = _codes(v for row in table.values.values() for v in row.values())
    out: list[PairwiseKappa] = []
    for a, b in itertools.combinations(sorted(table.annotators), 2):
        shared = sorted(set(by_annotator[a]) & set(by_annotator[b]))
        n = len(shared)
        if n == 0:
            out.append(PairwiseKappa(a, b, None, 0, None, f"{a} and {b} rated no item in common"))
            continue
        y1 = [codes[by_annotator[a][item]] for item in shared]
        y2 = [codes[by_annotator[b][item]] for item in shared]
        observed = float(accuracy_score(y1, y2))
        if n < 2:
            reason = f"{a} and {b} rated only 1 item in common; Cohen's kappa needs at least 2"
            out.append(PairwiseKappa(a, b, None, n, observed, reason))
            continue
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore")  # sklearn warns before returning nan; we explain it instead
            kappa = _finite(cohen_kappa_score(y1, y2))
        reason = None
        no_variance = False
        if kappa is None:
            labels = sorted({by_annotator[a][i] for i in shared} | {by_annotator[b][i] for i in shared}, key=_label_key)
            if len(labels) == 1:
                no_variance = True
                reason = (
                    f"{a} and {b} gave all {n} shared items the same label {labels[0]!r}: chance agreement"
                    " is 1, so kappa = 0/0 is undefined (observed agreement is 100%)"
                )
            else:
                reason = "scikit-learn's cohen_kappa_score returned nan (kappa undefined for these labels)"
        out.append(PairwiseKappa(a, b, kappa, n, observed, reason, no_variance))
    return out


# --------------------------------------------------------------------------------------------------
# Fleiss' kappa


def fleiss_kappa(ratings: Iterable[Rating]) -> AgreementFigure:
    """Fleiss' kappa over the items rated by the same number of raters (at least 2).

    statsmodels' ``fleiss_kappa(table)`` takes an items x categories **count table** of shape
    ``(n_items, n_categories)`` whose every row sums to the same number of raters *m*; it does not
    handle missing ratings. So this function keeps only the items with exactly *m* non-missing
    ratings, where *m* is the rater count shared by the most items (ties: the larger *m*), and leaves
    the rest out, saying how many in ``note``. The raters of different items need not be the same
    people. The kept ratings become an items x raters matrix of shape ``(n_items, m)`` holding
    integer category codes, which ``statsmodels.stats.inter_rater.aggregate_raters(data, n_cat)``
    turns into the count table.

    Returns:
        :class:`AgreementFigure` with ``n_raters = m``. ``value`` is ``None`` with the reason in
        ``note`` when no item has 2 or more ratings, fewer than 2 items share a rater count, or every
        kept rating is the same label (chance agreement 1, kappa 0/0).

    Raises:
        TypeError, ValueError: as :func:`cohen_kappa_pairs`.
    """
    table = _collect(ratings)
    sizes = Counter(len(row) for row in table.values.values() if len(row) >= 2)
    fewer = len(table.items) - sum(sizes.values())
    if not sizes:
        note = "no item was rated by 2 or more annotators; Fleiss' kappa needs at least 2 raters per item"
        if table.items:
            note += f" ({_plural(len(table.items), 'item')} left out)"
        return AgreementFigure(None, 0, 0, note)
    m = max(sizes, key=lambda k: (sizes[k], k))
    kept = sorted(item for item, row in table.values.items() if len(row) == m)
    other = sum(count for size, count in sizes.items() if size != m)
    parts = []
    if fewer:
        parts.append(f"{_plural(fewer, 'item')} with fewer than 2 ratings")
    if other:
        parts.append(f"{_plural(other, 'item')} with a different number of raters")
    left_out = (
        f"; left out {' and '.join(parts)} (statsmodels needs the same number of raters for every item)"
        if parts else ""
    )
    used = f"{_plural(len(kept), 'item')} with {m} raters each{left_out}"
    if len(kept) < 2:
        return AgreementFigure(None, len(kept), m, f"Fleiss' kappa needs at least 2 items; {used}")
    codes = _codes(v for item in kept for v in table.values[item].values())
    observed = _pair_agreement(table.values[item] for item in kept)
    if len(codes) == 1:
        (only,) = codes
        return AgreementFigure(
            None, len(kept), m,
            f"every rating is {only!r}: chance agreement is 1, so kappa = 0/0 is undefined; {used}",
            no_variance=True, observed_agreement=observed,
        )

    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

    data = np.array([[codes[v] for v in table.values[item].values()] for item in kept], dtype=int)
    counts, _categories = aggregate_raters(data, n_cat=len(codes))
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        value = _finite(sm_fleiss_kappa(counts, method="fleiss"))
    if value is None:
        return AgreementFigure(None, len(kept), m, f"statsmodels returned nan (kappa undefined); {used}",
                               observed_agreement=observed)
    return AgreementFigure(value, len(kept), m, used, observed_agreement=observed)


# --------------------------------------------------------------------------------------------------
# Krippendorff's alpha


def krippendorff_alpha(ratings: Iterable[Rating], level: Level = "nominal") -> AgreementFigure:
    """Krippendorff's alpha over all items rated by 2 or more annotators; missing ratings allowed.

    ``krippendorff.alpha(reliability_data=..., level_of_measurement=level)`` takes a **raters x items**
    reliability matrix of shape ``(n_raters, n_items)``, float, with ``np.nan`` where a rater did not
    rate an item. Rows are the annotators (sorted), columns the items (sorted). At the nominal level
    the labels are mapped to integer codes first (only equality matters, so the codes' order is
    irrelevant); at the interval level the values must be numbers and are used as they are. Items
    with fewer than 2 ratings form no pair and contribute nothing to alpha; they are left out of the
    matrix, and ``note`` says how many.

    Returns:
        :class:`AgreementFigure` with ``n_raters`` = annotators who rated at least one kept item.
        ``value`` is ``None`` with the reason in ``note`` when no item has 2 or more ratings, or when
        every kept rating has the same value (alpha is 0/0 without variation; ``krippendorff.alpha``
        refuses a domain of one value).

    Raises:
        ValueError: ``level`` is not ``"nominal"`` or ``"interval"``; a value is not a number at the
            interval level; an annotator rated the same item twice.
        TypeError: as :func:`cohen_kappa_pairs`.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    table = _collect(ratings)
    items = sorted(item for item, row in table.values.items() if len(row) >= 2)
    fewer = len(table.items) - len(items)
    left_out = f"; left out {_plural(fewer, 'item')} with fewer than 2 ratings" if fewer else ""
    if not items:
        return AgreementFigure(
            None, 0, 0,
            f"no item was rated by 2 or more annotators, so there are no pairs to compare{left_out}",
        )
    raters = sorted({a for item in items for a in table.values[item]})
    used = f"{_plural(len(items), 'item')}, {_plural(len(raters), 'annotator')}, {level} level{left_out}"
    values = [v for item in items for v in table.values[item].values()]
    if level == "interval":
        for item in items:
            for annotator, v in table.values[item].items():
                if isinstance(v, str):
                    raise ValueError(
                        f"item {item!r}, annotator {annotator!r}: {v!r} is not a number;"
                        " the interval level needs numeric values (use level='nominal' for labels)"
                    )
        code_of = {v: float(v) for v in values}
    else:
        code_of = {v: float(c) for v, c in _codes(values).items()}
    observed = _pair_agreement(table.values[item] for item in items)
    if len(set(code_of.values())) < 2:
        return AgreementFigure(
            None, len(items), len(raters),
            f"every rating is {values[0]!r}: with no variation alpha = 0/0 is undefined; {used}",
            no_variance=True, observed_agreement=observed,
        )
    matrix = np.full((len(raters), len(items)), np.nan)
    row_of = {a: i for i, a in enumerate(raters)}
    for j, item in enumerate(items):
        for annotator, v in table.values[item].items():
            matrix[row_of[annotator], j] = code_of[v]
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        value = _finite(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    if value is None:
        return AgreementFigure(None, len(items), len(raters), f"krippendorff returned nan (alpha undefined); {used}",
                               observed_agreement=observed)
    return AgreementFigure(value, len(items), len(raters), used, observed_agreement=observed)


# --------------------------------------------------------------------------------------------------
# Report


def agreement_report(
    ratings_by_field: Mapping[str, Sequence[Rating]], level: Level = "nominal"
) -> dict[str, FieldAgreement]:
    """Cohen's kappa per pair, Fleiss' kappa and Krippendorff's alpha for each field.

    Shapes: ``ratings_by_field`` maps a field name (``"correct"``, ``"decision"`` ...) to that field's
    flat list of :class:`Rating`; each field is computed on its own, in the layouts described in
    :func:`cohen_kappa_pairs`, :func:`fleiss_kappa` and :func:`krippendorff_alpha`. Meant for the four
    QA criteria (``"pass"``/``"fail"``) and the review decision (``"accept"``/``"reject"``/``"revise"``),
    all nominal; pass ``level="interval"`` for numeric fields.

    Returns:
        field -> :class:`FieldAgreement`, in the order of ``ratings_by_field``.

    Raises:
        TypeError, ValueError: as the three functions above.
    """
    out: dict[str, FieldAgreement] = {}
    for name, ratings in ratings_by_field.items():
        ratings = list(ratings)
        table = _collect(ratings)
        out[name] = FieldAgreement(
            field=name,
            n_items=len(table.values),
            annotators=sorted(table.annotators),
            cohen=cohen_kappa_pairs(ratings),
            fleiss=fleiss_kappa(ratings),
            krippendorff=krippendorff_alpha(ratings, level=level),
        )
    return out


# --------------------------------------------------------------------------------------------------
# Checklists

_WORD = re.compile(r"\w+", re.UNICODE)


def _normalize(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def key_point_similarity(a: str, b: str) -> float:
    """Similarity of two key points in [0, 1].

    Both texts are normalized (case folded, punctuation dropped, words joined by single spaces); the
    score is the larger of ``difflib.SequenceMatcher(...).ratio()`` on the normalized texts and on their
    words sorted alphabetically, so that reordered words still score high. Two empty texts score 1.
    """
    na, nb = _normalize(a), _normalize(b)
    plain = SequenceMatcher(None, na, nb, autojunk=False).ratio()
    sa, sb = " ".join(sorted(na.split())), " ".join(sorted(nb.split()))
    return max(plain, SequenceMatcher(None, sa, sb, autojunk=False).ratio())


def _check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be within [0, 1], not {threshold!r}")


def _greedy(scores: list[list[float]], threshold: float) -> list[tuple[int, int, float]]:
    """Best-first one-to-one matching: pairs (i, j, score) with score >= threshold, highest first."""
    candidates = sorted(
        ((s, i, j) for i, row in enumerate(scores) for j, s in enumerate(row) if s >= threshold),
        key=lambda c: (-c[0], c[1], c[2]),
    )
    used_i: set[int] = set()
    used_j: set[int] = set()
    pairs = []
    for s, i, j in candidates:
        if i in used_i or j in used_j:
            continue
        used_i.add(i)
        used_j.add(j)
        pairs.append((i, j, s))
    return pairs


def match_key_points(a: Sequence[str], b: Sequence[str], threshold: float = 0.5) -> list[tuple[int | None, int | None, float]]:
    """Pair the key points of two annotators by text similarity (greedy, best first).

    Shapes: ``a`` and ``b`` are lists of key-point texts, of any lengths. Every pair is scored with
    :func:`key_point_similarity`; the best-scoring pair is matched first, then the best among the
    remaining items, and so on while the score is ``>= threshold``. Each item is matched at most once.

    Returns:
        ``(i, j, score)`` for matched pairs, ``(i, None, 0.0)`` for items of ``a`` left unmatched,
        ``(None, j, 0.0)`` for items of ``b`` left unmatched. Entries for ``a``'s items come first in
        ``a``'s order, then ``b``'s unmatched items in ``b``'s order; every index appears exactly once.

    Raises:
        ValueError: ``threshold`` is outside [0, 1].
    """
    _check_threshold(threshold)
    scores = [[key_point_similarity(x, y) for y in b] for x in a]
    pairs = {i: (j, s) for i, j, s in _greedy(scores, threshold)}
    out: list[tuple[int | None, int | None, float]] = []
    for i in range(len(a)):
        j, s = pairs.get(i, (None, 0.0))
        out.append((i, j, s))
    matched_b = {j for j, _ in pairs.values()}
    out.extend((None, j, 0.0) for j in range(len(b)) if j not in matched_b)
    return out


def checklist_agreement(
    versions_by_annotator: Mapping[str, Sequence[tuple[str, float]]], threshold: float = 0.5
) -> ChecklistAgreement:
    """Agreement of annotators' checklists for one QA pair: key-point match rate and weight alpha.

    Shapes: ``versions_by_annotator`` maps an annotator to that annotator's checklist as a list of
    ``(key_point, weight)``, normally the knowledge items only (the fixed clarity item would match
    trivially). Annotators are taken in sorted order; the first one's key points each start a unit,
    and each later annotator's key points are matched one-to-one, greedily and best first, to the
    existing units (a key point's score against a unit is its best :func:`key_point_similarity` to any
    member); unmatched ones start new units.

    The weights of matched units (two or more annotators) go to :func:`krippendorff_alpha` at the
    interval level: each unit is one item and each annotator one rater, i.e. a raters x units matrix
    with ``nan`` where an annotator has no such key point.

    Returns:
        :class:`ChecklistAgreement`; ``match_rate`` and ``weight_alpha.value`` are ``None`` with a
        reason when there are fewer than two annotators, no key points, no matched unit, or all matched
        weights are equal.

    Raises:
        ValueError: ``threshold`` outside [0, 1]; a weight that is not a number (for matched units).
    """
    _check_threshold(threshold)
    annotators = sorted(versions_by_annotator)
    members: list[dict[str, int]] = []
    for annotator in annotators:
        items = versions_by_annotator[annotator]
        scores = [
            [
                max(key_point_similarity(text, versions_by_annotator[other][k][0]) for other, k in unit.items())
                for unit in members
            ]
            for text, _weight in items
        ]
        matched = {i: u for i, u, _s in _greedy(scores, threshold)}
        for i in range(len(items)):
            if i in matched:
                members[matched[i]][annotator] = i
            else:
                members.append({annotator: i})
    units = [
        KeyPointUnit(
            indices=dict(unit),
            key_points={a: versions_by_annotator[a][i][0] for a, i in unit.items()},
            weights={a: versions_by_annotator[a][i][1] for a, i in unit.items()},
        )
        for unit in members
    ]
    n_key_points = sum(len(v) for v in versions_by_annotator.values())
    n_matched = sum(len(u.indices) for u in units if u.matched)
    note = ""
    if len(annotators) < 2:
        note = f"{_plural(len(annotators), 'annotator')}: matching needs at least 2"
        match_rate = None
    elif n_key_points == 0:
        note = "no key points to match"
        match_rate = None
    else:
        match_rate = n_matched / n_key_points
    ratings = [
        Rating(item=f"unit-{k}", annotator=a, value=w)
        for k, unit in enumerate(units) if unit.matched
        for a, w in unit.weights.items()
    ]
    if ratings:
        alpha = krippendorff_alpha(ratings, level="interval")
    else:
        alpha = AgreementFigure(None, 0, 0, "no key point was matched across annotators, so no weights to compare")
    return ChecklistAgreement(annotators, units, n_key_points, n_matched, match_rate, alpha, note)


@dataclass(frozen=True)
class ProjectChecklistAgreement:
    """Checklist agreement over every pair edited by two or more annotators.

    Attributes:
        n_pairs: pairs with checklists from at least two annotators.
        n_key_points: key points over those pairs and annotators; n_matched: of them, in a matched unit.
        match_rate: n_matched / n_key_points (None without key points).
        weight_alpha: Krippendorff's alpha (interval) over the weights of every matched unit of every pair
            (units are items, annotators raters).
    """

    n_pairs: int
    n_key_points: int
    n_matched: int
    match_rate: float | None
    weight_alpha: AgreementFigure


def project_checklist_agreement(
    checklists_by_pair: Mapping[str, Mapping[str, Sequence[tuple[str, float]]]], threshold: float = 0.5
) -> ProjectChecklistAgreement:
    """Pool :func:`checklist_agreement` over pairs: key points are matched within each pair, and the
    weights of all matched units go into one interval alpha (item id ``pair#unit``)."""
    n_pairs = n_points = n_matched = 0
    ratings: list[Rating] = []
    for pair_id, versions in sorted(checklists_by_pair.items()):
        if len(versions) < 2:
            continue
        n_pairs += 1
        result = checklist_agreement(versions, threshold)
        n_points += result.n_key_points
        n_matched += result.n_matched
        for u, unit in enumerate(result.units):
            if len(unit.weights) >= 2:
                ratings += [Rating(f"{pair_id}#{u}", who, w) for who, w in unit.weights.items()]
    alpha = krippendorff_alpha(ratings, "interval") if ratings else AgreementFigure(
        None, 0, 0, "no key point was matched between two annotators")
    return ProjectChecklistAgreement(n_pairs, n_points, n_matched, n_matched / n_points if n_points else None, alpha)
