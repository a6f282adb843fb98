"""Balanced samples written as named selections (SWE-QA-Pro §2.4): the candidates from the store, the draw from
:func:`benchwright.core.sampling.balanced_sample`; the CLI (``sample``) and the app call these."""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.core.sampling import Sample, balanced_sample
from benchwright.db import QueueFilter, Store


@dataclass(frozen=True)
class SampleDraw:
    """A drawn sample before (or after) it is stored: the :class:`~benchwright.core.sampling.Sample`, ``names``
    ``{cluster: cluster_name}``, ``counts`` (:meth:`~benchwright.db.Store.sample_candidates`: pairs matching
    ``--where``, left out as duplicates, as too easy) and the ``params`` stored with the selection."""

    sample: Sample
    names: dict[str, str]
    counts: dict
    params: dict
    seed: int


def draw_sample(store: Store, annotator: str, flt: QueueFilter | None = None, *, where: tuple[str, ...] = (),
                per_cluster: tuple[int, int], total: int | None, balance: str | None, seed: int,
                survivors: bool = True, include_unclustered: bool = False) -> SampleDraw:
    """Draw a balanced sample from the pairs ``flt`` lets through (``where``: its ``--where`` text, recorded) and,
    with ``survivors``, that survive dedup and calibration; nothing is stored (:func:`save_draw` does).

    Raises:
        BenchwrightError: an invalid parameter (:func:`~benchwright.core.sampling.balanced_sample`) or filter.
    """
    candidates, names, counts = store.sample_candidates(annotator, flt, survivors=survivors)
    sample = balanced_sample(candidates, per_cluster=per_cluster, total=total, balance=balance, seed=seed,
                             include_unclustered=include_unclustered)
    params = {"per_cluster": list(per_cluster), "balance": balance or "none", "total": total, "where": list(where),
              "survivors": survivors, "include_unclustered": include_unclustered}
    return SampleDraw(sample, names, counts, params, seed)


def save_draw(store: Store, name: str, draw: SampleDraw, *, by: str):
    """Store ``draw`` as a new version of the selection ``name``; returns the
    :class:`~benchwright.core.sampling.Selection`.

    Raises:
        BenchwrightError: an invalid name, or an empty sample (nothing is stored).
    """
    from benchwright.core.errors import BenchwrightError
    from benchwright.core.sampling import check_selection_name

    check_selection_name(name)
    if not draw.sample.members:
        raise BenchwrightError(f"selection {name}: the sample is empty (no candidate pair); nothing was stored")
    return store.save_selection(name, draw.sample, params=draw.params, seed=draw.seed, by=by)
