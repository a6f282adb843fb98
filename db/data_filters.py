"""Queue-filter SQL for SWE-QA-Pro's data methods (issue 17): ``dedup=``, ``difficulty=``, ``item=``,
``leakage=``, ``selection=``, ``split=`` (fields of :class:`benchwright.db.store.QueueFilter`).

Each builder returns ``(clause, params)`` over ``qa_pairs p``. The vocabularies are in
:mod:`benchwright.core.vocabulary`; the tables in docs/store.md (m020).
"""

from __future__ import annotations

from benchwright.core.errors import BenchwrightError
from benchwright.core.vocabulary import DEDUP_FILTERS, DIFFICULTY_FILTERS, ITEM_FILTERS, LEAKAGE_FILTERS

LATEST_DEDUP_RUN = "(SELECT max(id) FROM dedup_runs)"
"""The dedup run whose groups count: the latest one."""

_MEMBER = """EXISTS (SELECT 1 FROM duplicate_members m JOIN duplicate_groups g ON g.id = m.group_id
        LEFT JOIN duplicate_resolutions r
               ON r.id = (SELECT max(r2.id) FROM duplicate_resolutions r2 WHERE r2.signature = g.signature)
        WHERE m.qa_pair_id = p.id AND g.run_id = {run} AND {cond})"""

_DEDUP_CONDITIONS = {
    "any": "1",
    "unresolved": "r.id IS NULL AND g.representative != p.id",
    "representative": "r.id IS NULL AND g.representative = p.id",
    "kept": "r.decision != 'keep-both' AND EXISTS (SELECT 1 FROM json_each(r.kept_json) k WHERE k.value = p.id)",
    "dropped": "EXISTS (SELECT 1 FROM json_each(r.dropped_json) d WHERE d.value = p.id)",
    "not-duplicate": "r.decision = 'keep-both'",
    "cross-split": "g.kind = 'cross-split'",
}


def dedup_sql(value: str) -> str:
    """The clause of ``dedup=VALUE`` (:data:`~benchwright.core.vocabulary.DEDUP_FILTERS`).

    Raises:
        BenchwrightError: an unknown value.
    """
    if value not in DEDUP_FILTERS:
        raise BenchwrightError(f"unknown dedup filter {value!r}; use one of {', '.join(DEDUP_FILTERS)}")
    if value == "multi-query":
        return (f"EXISTS (SELECT 1 FROM multi_query_flags f WHERE f.qa_pair_id = p.id "
                f"AND f.run_id = {LATEST_DEDUP_RUN})")
    if value == "none":
        return "NOT " + _MEMBER.format(run=LATEST_DEDUP_RUN, cond="1")
    return _MEMBER.format(run=LATEST_DEDUP_RUN, cond=_DEDUP_CONDITIONS[value])


DEDUP_SURVIVOR_SQL = (f"NOT {dedup_sql('unresolved')} AND NOT {dedup_sql('dropped')}")
"""Pairs that survive dedup: not dropped by a resolution, and not a non-representative member of an unresolved
group (an unresolved group keeps its representative only, until someone decides)."""

UNRESOLVED_MEMBER_SQL = _MEMBER.format(run=LATEST_DEDUP_RUN, cond="r.id IS NULL")
"""A member of an unresolved group of the latest dedup run, its representative included (the queue's marker)."""

LATEST_CALIBRATION = "(SELECT max(v2.run_id) FROM calibration_values v2 WHERE v2.qa_pair_id = p.id)"
"""A pair's calibration is its value in the latest calibration run that included it."""


def difficulty_sql(value: str) -> tuple[str, list]:
    """The clause of ``difficulty=VALUE`` (:data:`~benchwright.core.vocabulary.DIFFICULTY_FILTERS`).

    Raises:
        BenchwrightError: an unknown value.
    """
    if value not in DIFFICULTY_FILTERS:
        raise BenchwrightError(f"unknown difficulty filter {value!r}; use one of {', '.join(DIFFICULTY_FILTERS)}")
    if value == "uncalibrated":
        return "NOT EXISTS (SELECT 1 FROM calibration_values v WHERE v.qa_pair_id = p.id)", []
    return (f"EXISTS (SELECT 1 FROM calibration_values v WHERE v.qa_pair_id = p.id "
            f"AND v.run_id = {LATEST_CALIBRATION} AND v.decision = ?)"), [value]


CALIBRATION_SURVIVOR_SQL = difficulty_sql("too-easy")[0].replace("EXISTS", "NOT EXISTS", 1)
"""Pairs that survive calibration: not ``too-easy`` in their latest calibration (uncalibrated pairs survive)."""
CALIBRATION_SURVIVOR_PARAMS = ["too-easy"]


def item_sql(value: str) -> tuple[str, list]:
    """The clause of ``item=VALUE`` (:data:`~benchwright.core.vocabulary.ITEM_FILTERS`), over the pair's row in
    the latest ``items`` run that included it.

    Raises:
        BenchwrightError: an unknown value.
    """
    if value not in ITEM_FILTERS:
        raise BenchwrightError(f"unknown item filter {value!r}; use one of {', '.join(ITEM_FILTERS)}")
    if value == "unrated":
        return "NOT EXISTS (SELECT 1 FROM item_stats s WHERE s.qa_pair_id = p.id)", []
    return ("""EXISTS (SELECT 1 FROM item_stats s, json_each(s.flags_json) f WHERE s.qa_pair_id = p.id
               AND s.run_id = (SELECT max(s2.run_id) FROM item_stats s2 WHERE s2.qa_pair_id = p.id)
               AND f.value = ?)"""), [value]


def leakage_sql(value: str) -> tuple[str, list]:
    """The clause of ``leakage=VALUE`` (:data:`~benchwright.core.vocabulary.LEAKAGE_FILTERS`): the latest check of
    the pair's current text version.

    Raises:
        BenchwrightError: an unknown value.
    """
    if value not in LEAKAGE_FILTERS:
        raise BenchwrightError(f"unknown leakage filter {value!r}; use one of {', '.join(LEAKAGE_FILTERS)}")
    if value == "unchecked":
        return ("NOT EXISTS (SELECT 1 FROM leakage_checks l WHERE l.qa_pair_id = p.id "
                "AND l.text_version = p.text_version)"), []
    return ("""EXISTS (SELECT 1 FROM leakage_checks l WHERE l.id = (SELECT max(l2.id) FROM leakage_checks l2
               WHERE l2.qa_pair_id = p.id AND l2.text_version = p.text_version) AND l.status = ?)"""), [value]


def selection_sql(name: str) -> tuple[str, list]:
    """The clause of ``selection=NAME``: members of the latest selection called NAME (none when there is no
    such selection; ``parse_where`` refuses an unknown name before this runs)."""
    return ("""EXISTS (SELECT 1 FROM selection_members sm WHERE sm.qa_pair_id = p.id
               AND sm.selection_id = (SELECT max(id) FROM selections WHERE name = ?))"""), [name]
