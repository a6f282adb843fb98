"""Human judgments for the app (issue 20 item 5): the scoring form of an answer, the blind-mode rule applied to
it, and human and LLM scores side by side. No Textual here; the screens are ``tui/screens/human_score.py`` and
the judge inspector."""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.core.human import judges_hidden
from benchwright.core.judges import JUDGE_REGISTRY, human_label, is_human_judge, judge_label
from benchwright.core.judgment import Judgment, effective_entries, score_rate_of
from benchwright.db import Store

BLIND_NOTE = ("blind mode: the judges' scores and rationales of this answer (and other annotators' scores) are "
              "hidden until you submit your own scores (h)")
"""What the inspector says instead of the judges' scores while :func:`judges_hidden` holds."""

BLIND_NOTE_CLI = ("blind mode is on and this answer is assigned to you: the judges' scores and rationales (and "
                  "other annotators' scores) are hidden until you submit your own (benchwright judgments human)")
"""What ``answers show`` says instead of the judgments while :func:`judges_hidden` holds."""


@dataclass(frozen=True)
class FormItem:
    """One checklist item of the scoring form.

    Attributes:
        key: the item number as a string (``"1"``...); ``label`` its key point; ``kind`` knowledge / clarity.
        weight: its most points; ``allowed``: its rubric's scores, ascending; ``criteria``: score -> criterion.
        score, rationale: what the annotator gave last time (their latest human judgment), else None and "".
    """

    key: str
    label: str
    kind: str
    weight: int
    allowed: tuple[int, ...]
    criteria: dict[int, str]
    score: int | None = None
    rationale: str = ""


@dataclass(frozen=True)
class ScoreForm:
    """What the scoring form shows: the answer, the checklist version it is scored against and its items, or
    ``problem`` (why it cannot be scored: no checklist, a draft, one that breaks the rules)."""

    answer_id: str
    title: str
    question: str
    answer_text: str
    version: int | None
    items: tuple[FormItem, ...]
    problem: str | None = None


def score_form(store: Store, answer_id: str, annotator: str) -> ScoreForm:
    """The scoring form of ``answer_id`` for ``annotator``: the items of its pair's current checklist, with the
    annotator's previous scores when they scored it against the same version.

    Raises:
        NotFoundError: no such answer.
    """
    from benchwright.core.judges import checklist_problem

    answer = store.get_answer(answer_id)
    pair = store.get_pair(answer.qa_pair_id)
    current = store.checklist_version(answer.qa_pair_id)
    title = f"{answer.model} · {answer.condition}" + (f" · sample {answer.sample_index}" if answer.sample_index else "")
    problem = checklist_problem(current)
    if problem is not None:
        return ScoreForm(answer_id, title, pair.question, answer.text, None, (), problem.value)
    previous = store.human_judgments(answer_id, annotator)
    before = {e.key: e for e in previous[-1].entries} if previous and \
        previous[-1].checklist_version == current.version else {}
    items = []
    for n, it in enumerate(current.checklist.items, 1):
        old = before.get(str(n))
        items.append(FormItem(str(n), it.key_point, it.kind.value, it.weight, tuple(it.allowed_scores),
                              {t.score: t.criterion for t in it.rubric},
                              int(old.score) if old is not None and old.score is not None else None,
                              old.rationale if old is not None else ""))
    return ScoreForm(answer_id, title, pair.question, answer.text, current.version, tuple(items))


def hidden_for(store: Store, answer_id: str, viewer: str) -> bool:
    """True when blind mode hides the judges' scores of ``answer_id`` from ``viewer``
    (:func:`benchwright.core.human.judges_hidden`)."""
    blind = store.blind_mode
    if not blind:
        return False
    assignees = [s.annotator for s in store.answer_assignments(answer_id=answer_id)]
    return judges_hidden(blind=blind, scored=store.human_scored(viewer, answer_id), viewer=viewer,
                         assignees=assignees)


@dataclass(frozen=True)
class Column:
    """One column of the side-by-side table: a judge's run or an annotator's human judgment.

    Attributes:
        label: ``checklist:MODEL r1`` (a judge, its model and run) or ``human:NAME``.
        human: True for an annotator's column.
        scores, rationales: by item key (effective scores: overrides applied).
        rate: the score rate (None: unscored); ``version``: the checklist version scored against.
    """

    label: str
    human: bool
    scores: dict[str, float | None]
    rationales: dict[str, str]
    rate: float | None
    version: int | None


@dataclass(frozen=True)
class SideBySide:
    """Human and LLM scores of one answer, item by item: ``rows`` ``(key, label, max)`` in checklist order and
    one :class:`Column` per judge run and per annotator; ``hidden``: the blind-mode note when the judges' (and
    other annotators') columns are left out for the viewer, else None."""

    rows: tuple[tuple[str, str, int], ...]
    columns: tuple[Column, ...]
    hidden: str | None = None


def side_by_side(store: Store, answer_id: str, viewer: str) -> SideBySide:
    """The side-by-side table of ``answer_id`` as ``viewer`` may see it: every run of every judge that scores
    checklist items (the latest judgment per judge, model and run; overrides applied) and every annotator's
    latest human judgment; blind mode (:func:`hidden_for`) leaves only the viewer's own column."""
    hidden = hidden_for(store, answer_id, viewer)
    judgments: list[Judgment] = []
    if not hidden:
        for j in store.judgments(answer_id=answer_id, latest_only=True):
            spec = JUDGE_REGISTRY.get(j.judge) if j.judge in JUDGE_REGISTRY else None
            if spec is not None and spec.scores_checklist and not spec.human:
                judgments.append(j)
    humans = [h for h in store.human_judgments(answer_id=answer_id) if not hidden or h.judge_model == viewer]
    rows: dict[str, tuple[str, str, int]] = {}
    answer = store.get_answer(answer_id)
    current = store.checklist_version(answer.qa_pair_id)
    if current is not None:
        for n, it in enumerate(current.checklist.items, 1):
            rows[str(n)] = (str(n), it.key_point, it.weight)
    columns = []
    for j in sorted(judgments, key=lambda j: (j.judge, j.judge_model, j.run_index)) + humans:
        entries, _ = effective_entries(j, store.overrides(j.id)) if not is_human_judge(j.judge) else (j.entries, 0)
        for e in entries:
            rows.setdefault(e.key, (e.key, e.label, e.max))
        human = is_human_judge(j.judge)
        label = human_label(j.judge_model) if human else f"{judge_label(j.judge, j.judge_model)} r{j.run_index + 1}"
        rate = score_rate_of(j.judge, entries) if j.scored else None
        columns.append(Column(label, human, {e.key: e.score for e in entries}, {e.key: e.rationale for e in entries},
                              rate, j.checklist_version))
    return SideBySide(tuple(rows.values()), tuple(columns), BLIND_NOTE if hidden else None)


__all__ = ["BLIND_NOTE", "Column", "FormItem", "ScoreForm", "SideBySide", "hidden_for", "score_form", "side_by_side"]
