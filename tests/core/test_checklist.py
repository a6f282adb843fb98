"""RepoProbe §4.1 checklists: every validation rule, scoring (§5.1.3), weight normalization, the published
JSON Schema and the editor's text form."""

from __future__ import annotations

import json
from fractions import Fraction
from math import ceil, floor

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from benchwright.core.checklist import (
    CLARITY_KEY_POINT,
    RULES,
    Checklist,
    ChecklistItem,
    ItemKind,
    RubricTier,
    ScoreError,
    Violation,
    binary_rubric,
    checklist_from_form,
    checklist_json_schema,
    checklist_to_form,
    clarity_item,
    is_valid,
    largest_remainder,
    normalize_weights,
    rescale_item,
    score,
    starter_checklist,
    validate,
)
from benchwright.core.errors import BenchwrightError

KNOWLEDGE, CLARITY = ItemKind.KNOWLEDGE, ItemKind.CLARITY


def norm(text: str) -> str:
    """Key points are compared ignoring case and runs of white space."""
    return " ".join(text.casefold().split())


TEXT = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "Zs"), exclude_characters="\x00"), min_size=1, max_size=30,
).filter(lambda s: s.strip())
BLANK = st.sampled_from(["", " ", "   ", "\t", " \n "])


def knowledge(key_point: str, weight: int, scores: list[int] | None = None) -> ChecklistItem:
    """A knowledge item; ``scores`` defaults to the binary rubric {0, weight}."""
    scores = sorted({0, weight}) if scores is None else scores
    return ChecklistItem(kind=KNOWLEDGE, key_point=key_point, weight=weight,
                         rubric=[RubricTier(score=s, criterion=f"criterion for {s}") for s in scores])


def make(*items: ChecklistItem, clarity: bool = True) -> Checklist:
    return Checklist(items=[*items, clarity_item()] if clarity else list(items))


def rules(checklist: Checklist) -> set[str]:
    return {v.rule for v in validate(checklist)}


def replace_item(checklist: Checklist, index: int, **update) -> Checklist:
    items = list(checklist.items)
    items[index] = items[index].model_copy(update=update)
    return Checklist(items=items)


def knowledge_indices(checklist: Checklist) -> list[int]:
    return [i for i, it in enumerate(checklist.items) if it.kind is KNOWLEDGE]


def clarity_index(checklist: Checklist) -> int:
    return next(i for i, it in enumerate(checklist.items) if it.kind is CLARITY)


# ------------------------------------------------------------------------------------------ strategies
@st.composite
def compositions(draw, parts: int, total: int = 9) -> list[int]:
    """``parts`` positive integers summing to ``total``."""
    cuts = sorted(draw(st.sets(st.integers(1, total - 1), min_size=parts - 1, max_size=parts - 1)))
    return [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]


@st.composite
def checklists(draw, min_knowledge: int = 1, max_knowledge: int = 4) -> Checklist:
    """A checklist following every rule but (possibly) the knowledge-item count: weights partition 9,
    binary or multi-tier rubrics with 0 and the weight, in any order, unique key points, and the clarity
    item anywhere."""
    n = draw(st.integers(min_knowledge, max_knowledge))
    weights = draw(compositions(n))
    key_points = draw(st.lists(TEXT, min_size=n, max_size=n, unique_by=norm)
                      .filter(lambda ks: norm(CLARITY_KEY_POINT) not in map(norm, ks)))
    items = []
    for weight, key_point in zip(weights, key_points, strict=True):
        middle = draw(st.sets(st.integers(1, weight - 1), max_size=weight - 1)) if weight > 1 else set()
        scores = sorted({0, weight} | middle)
        criteria = draw(st.lists(TEXT, min_size=len(scores), max_size=len(scores)))
        tiers = draw(st.permutations([RubricTier(score=s, criterion=c) for s, c in zip(scores, criteria, strict=True)]))
        items.append(ChecklistItem(kind=KNOWLEDGE, key_point=key_point, weight=weight, rubric=list(tiers)))
    items.insert(draw(st.integers(0, n)), clarity_item())
    return Checklist(items=items)


# ------------------------------------------------------------------------------------------ validity
@settings(max_examples=150, deadline=None)
@given(checklists())
def test_generated_checklists_are_valid(checklist):
    assert validate(checklist) == []
    assert is_valid(checklist)
    assert sum(it.weight for it in checklist.knowledge_items) == 9
    assert checklist.clarity_item == clarity_item()


def test_known_valid_shapes():
    assert validate(make(knowledge("a", 9))) == []
    assert validate(make(knowledge("a", 4), knowledge("b", 3, [0, 1, 2, 3]), knowledge("c", 2))) == []
    assert validate(make(*(knowledge(k, w) for k, w in zip("abcd", (3, 2, 2, 2), strict=True)))) == []
    assert validate(Checklist(items=[clarity_item(), knowledge("only", 9, [9, 4, 0])])) == []


def test_starter_checklist_breaks_only_the_empty_key_point():
    assert [(v.rule, v.item) for v in validate(starter_checklist())] == [("key-point-empty", 0)]


# Each mutation of a valid checklist breaks exactly one rule: (rule id, the item it names or None).
@st.composite
def mutated(draw, checklist: Checklist, kind: str) -> tuple[Checklist, str, int | None]:
    ks = knowledge_indices(checklist)
    c = clarity_index(checklist)
    if kind == "weight-sum-up":
        i = draw(st.sampled_from(ks))
        it, k = checklist.items[i], draw(st.integers(1, 5))
        rubric = [t.model_copy(update={"score": it.weight + k}) if t.score == it.weight else t for t in it.rubric]
        return replace_item(checklist, i, weight=it.weight + k, rubric=rubric), "weight-sum", None
    if kind == "weight-sum-down":
        i = draw(st.sampled_from(ks))
        it = checklist.items[i]
        assume(it.weight > 1)
        w = draw(st.integers(1, it.weight - 1))
        return replace_item(checklist, i, weight=w, rubric=binary_rubric(w)), "weight-sum", None
    if kind == "no-knowledge":
        return Checklist(items=[checklist.items[c]]), "knowledge-count", None
    if kind == "no-clarity":
        return Checklist(items=[it for it in checklist.items if it.kind is KNOWLEDGE]), "clarity-count", None
    if kind == "two-clarity":
        second = clarity_item().model_copy(update={"key_point": "Clarity, a second time"})
        items = list(checklist.items)
        items.insert(draw(st.integers(0, len(items))), second)
        return Checklist(items=items), "clarity-count", None
    if kind == "clarity-weight-2":
        return replace_item(checklist, c, weight=2), "clarity-weight", c
    if kind == "clarity-scores-0-1-2":
        rubric = [*checklist.items[c].rubric, RubricTier(score=2, criterion="Exceptionally clear.")]
        return replace_item(checklist, c, rubric=rubric), "clarity-scores", c
    if kind == "clarity-score-1-only":
        rubric = [t for t in checklist.items[c].rubric if t.score == 1]
        return replace_item(checklist, c, rubric=rubric), "clarity-scores", c
    i = draw(st.sampled_from(ks))
    it = checklist.items[i]
    if kind == "missing-zero":
        return replace_item(checklist, i, rubric=[t for t in it.rubric if t.score != 0]), "rubric-missing-zero", i
    if kind == "missing-weight":
        rubric = [t for t in it.rubric if t.score != it.weight]
        return replace_item(checklist, i, rubric=rubric), "rubric-missing-weight", i
    if kind == "score-above-weight":
        extra = RubricTier(score=it.weight + draw(st.integers(1, 20)), criterion="More than full credit.")
        rubric = draw(st.permutations([*it.rubric, extra]))
        return replace_item(checklist, i, rubric=list(rubric)), "rubric-out-of-range", i
    if kind == "negative-score":
        extra = RubricTier(score=-draw(st.integers(1, 20)), criterion="A penalty.")
        return replace_item(checklist, i, rubric=[*it.rubric, extra]), "rubric-out-of-range", i
    if kind == "duplicate-score":
        copy = RubricTier(score=draw(st.sampled_from(it.allowed_scores)), criterion="Another criterion.")
        return replace_item(checklist, i, rubric=[*it.rubric, copy]), "rubric-duplicate-score", i
    if kind == "empty-criterion":
        i = draw(st.sampled_from(range(len(checklist.items))))
        it = checklist.items[i]
        j = draw(st.integers(0, len(it.rubric) - 1))
        rubric = [t.model_copy(update={"criterion": draw(BLANK)}) if n == j else t for n, t in enumerate(it.rubric)]
        return replace_item(checklist, i, rubric=rubric), "criterion-empty", i
    if kind == "empty-key-point":
        i = draw(st.sampled_from(range(len(checklist.items))))
        return replace_item(checklist, i, key_point=draw(BLANK)), "key-point-empty", i
    if kind == "duplicate-key-point":
        i, j = draw(st.permutations(range(len(checklist.items))))[:2]
        source = checklist.items[i].key_point
        variant = draw(st.sampled_from([source.upper(), source.lower(), source.swapcase(), source.title()]))
        variant = draw(st.sampled_from(["", " ", "  \t"])) + variant.replace(" ", "   ") + draw(st.sampled_from(["", " ", "\n"]))
        assume(norm(variant) == norm(source))
        return replace_item(checklist, j, key_point=variant), "key-point-duplicate", max(i, j)
    raise AssertionError(kind)


MUTATIONS = (
    "weight-sum-up", "weight-sum-down", "no-knowledge", "no-clarity", "two-clarity", "clarity-weight-2",
    "clarity-scores-0-1-2", "clarity-score-1-only", "missing-zero", "missing-weight", "score-above-weight",
    "negative-score", "duplicate-score", "empty-criterion", "empty-key-point", "duplicate-key-point",
)


@pytest.mark.parametrize("kind", MUTATIONS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_each_mutation_breaks_exactly_its_rule(kind, data):
    checklist = data.draw(checklists())
    broken, rule, item = data.draw(mutated(checklist, kind))
    violations = validate(broken)
    assert [(v.rule, v.item) for v in violations] == [(rule, item)]
    v = violations[0]
    assert v.rule in RULES and v.message.strip()
    assert str(v) == (v.message if item is None else f"item {item + 1}: {v.message}")
    assert not is_valid(broken)


@settings(max_examples=40, deadline=None)
@given(checklists(min_knowledge=5, max_knowledge=9))
def test_five_or_more_knowledge_items_break_only_the_count(checklist):
    violations = validate(checklist)
    assert [v.rule for v in violations] == ["knowledge-count"]
    assert f"there are {len(checklist.knowledge_items)} knowledge items" in violations[0].message


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_several_broken_rules_are_all_reported_at_once(data):
    checklist = data.draw(checklists(min_knowledge=3))
    local = ["missing-zero", "missing-weight", "score-above-weight", "negative-score", "duplicate-score"]
    chosen = data.draw(st.lists(st.sampled_from(local), min_size=2, max_size=len(checklist.knowledge_items), unique=True))
    targets = data.draw(st.permutations(knowledge_indices(checklist)))[: len(chosen)]
    expected = set()
    for kind, target in zip(chosen, targets, strict=False):
        # apply the mutation to one chosen item only: mutate a one-item view and put the item back
        view = Checklist(items=[checklist.items[target], clarity_item().model_copy(update={"key_point": "view"})])
        broken, rule, _ = data.draw(mutated(view, kind))
        checklist = replace_item(checklist, target, **dict(broken.items[0]))
        expected.add((rule, target))
    if data.draw(st.booleans()):
        extra = clarity_item().model_copy(update={"key_point": "Clarity, a second time"})
        checklist = Checklist(items=[*checklist.items, extra])
        expected.add(("clarity-count", None))
    assert {(v.rule, v.item) for v in validate(checklist)} == expected


def test_every_problem_of_a_badly_broken_checklist_is_listed_in_item_order():
    broken = Checklist(items=[
        knowledge("Flask reads the config file", 4, [0, 2, 2, 5]),            # duplicate 2, 5 out of range, no 4
        knowledge("  FLASK reads the   config file ", 3, [3]),                  # duplicate key point, no 0
        knowledge("", 1, [0, 1]),                                                # empty key point
        ChecklistItem(kind=KNOWLEDGE, key_point="d", weight=0, rubric=[]),      # weight 0, empty rubric
        ChecklistItem(kind=CLARITY, key_point="Clarity", weight=2,
                      rubric=[RubricTier(score=0, criterion=""), RubricTier(score=1, criterion="ok")]),
        clarity_item(),
    ])
    got = [(v.rule, v.item) for v in validate(broken)]
    assert got == [
        ("clarity-count", None), ("weight-sum", None),
        ("rubric-missing-weight", 0), ("rubric-out-of-range", 0), ("rubric-duplicate-score", 0),
        ("key-point-duplicate", 1), ("rubric-missing-zero", 1),
        ("key-point-empty", 2),
        ("weight-positive", 3), ("rubric-empty", 3),
        ("clarity-weight", 4), ("criterion-empty", 4),
    ]
    messages = {v.rule: str(v) for v in validate(broken)}
    assert messages["weight-sum"] == "knowledge weights sum to 8; they must sum to 9"
    assert messages["key-point-duplicate"] == "item 2: the key point repeats item 1"
    assert messages["rubric-out-of-range"] == "item 1: scores [5] are outside 0..4"
    assert messages["clarity-count"] == "there are 2 clarity items; there must be exactly 1"


def test_clarity_item_rules_do_not_contradict_each_other():
    """A clarity item of weight 2 is told to be worth 1, not to add a score 2."""
    c = clarity_item()
    assert [v.rule for v in validate(Checklist(items=[knowledge("a", 9), c.model_copy(update={"weight": 2})]))] \
        == ["clarity-weight"]
    two = c.model_copy(update={"weight": 2, "rubric": [*c.rubric, RubricTier(score=2, criterion="x")]})
    assert rules(Checklist(items=[knowledge("a", 9), two])) == {"clarity-weight", "clarity-scores"}


def test_key_points_compare_case_and_space_insensitively():
    assert rules(make(knowledge("Straße  parsing", 5), knowledge("STRASSE parsing", 4))) == {"key-point-duplicate"}
    assert rules(make(knowledge("a b", 5), knowledge("ab", 4))) == set()
    assert rules(make(knowledge("clarity &   ORGANIZATION", 9))) == {"key-point-duplicate"}


def test_models_refuse_non_integer_weights_and_scores():
    """Weights and scores are integers, in Python and in JSON: nothing is coerced (True, "3", 3.0)."""
    for bad in (True, "3", 3.0, 2.5, None):
        with pytest.raises(ValueError):
            ChecklistItem(key_point="a", weight=bad, rubric=[])
        with pytest.raises(ValueError):
            RubricTier(score=bad, criterion="c")
    with pytest.raises(ValueError):
        Checklist.model_validate_json('{"items": [{"key_point": "a", "weight": 9.0, "rubric": []}]}')
    with pytest.raises(ValueError):
        Checklist.model_validate({"items": [{"key_point": "a", "weight": 9, "rubric": [], "note": "x"}]})
    ok = Checklist.model_validate({"items": [{"key_point": "a", "weight": 9, "rubric": [{"score": 9, "criterion": "c"}]}]})
    assert ok.items[0].kind is KNOWLEDGE


@settings(max_examples=60, deadline=None)
@given(checklists())
def test_canonical_json_round_trips(checklist):
    text = checklist.to_json()
    assert Checklist.model_validate_json(text) == checklist
    assert text == json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------- scoring
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_score_sums_the_chosen_scores(data):
    checklist = data.draw(checklists())
    chosen = [data.draw(st.sampled_from(it.allowed_scores)) for it in checklist.items]
    result = score(checklist, chosen)
    kn = sum(s for s, it in zip(chosen, checklist.items, strict=True) if it.kind is KNOWLEDGE)
    cl = chosen[clarity_index(checklist)]
    assert (result.total, result.knowledge, result.clarity) == (kn + cl, kn, cl)
    assert 0 <= result.total <= 10 and cl in (0, 1)
    assert result.overall == result.total / 10
    assert result.knowledge_rate == kn / 9
    assert result.perfect == all(s == it.weight for s, it in zip(chosen, checklist.items, strict=True))


def test_score_of_a_known_answer():
    checklist = make(knowledge("a", 4), knowledge("b", 3, [0, 1, 2, 3]), knowledge("c", 2))
    s = score(checklist, [4, 2, 0, 1])
    assert (s.total, s.knowledge, s.clarity, s.perfect) == (7, 6, 1, False)
    assert s.knowledge_rate == pytest.approx(6 / 9) and s.overall == pytest.approx(0.7)
    assert score(checklist, [4, 3, 2, 1]).perfect
    assert score(checklist, [0, 0, 0, 0]).total == 0


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_score_outside_the_allowed_set_is_an_error_never_rounded(data):
    checklist = data.draw(checklists())
    chosen = [data.draw(st.sampled_from(it.allowed_scores)) for it in checklist.items]
    i = data.draw(st.integers(0, len(checklist.items) - 1))
    it = checklist.items[i]
    bad = data.draw(st.one_of(
        st.integers(-5, it.weight + 5).filter(lambda s: s not in it.allowed_scores),
        st.sampled_from(it.allowed_scores).map(float),                 # 3.0 is not 3
        st.sampled_from(it.allowed_scores).map(lambda s: s + 0.4),     # never rounded
        st.booleans(),                                                 # True is not 1
        st.sampled_from(it.allowed_scores).map(str),
        st.none(),
    ))
    chosen[i] = bad
    with pytest.raises(ScoreError, match=rf"item {i + 1}: score .* is not one of the allowed scores"):
        score(checklist, chosen)


def test_score_refuses_wrong_counts_and_invalid_checklists():
    checklist = make(knowledge("a", 5), knowledge("b", 4))
    with pytest.raises(ScoreError, match="2 scores for 3 items"):
        score(checklist, [5, 4])
    with pytest.raises(ScoreError, match="4 scores for 3 items"):
        score(checklist, [5, 4, 1, 0])
    with pytest.raises(ScoreError, match=r"invalid checklist.*sum to 8"):
        score(make(knowledge("a", 5), knowledge("b", 3)), [5, 3, 1])
    with pytest.raises(ScoreError, match="invalid checklist"):
        score(make(knowledge("a", 9), clarity=False), [9])
    assert issubclass(ScoreError, BenchwrightError)
    with pytest.raises(ScoreError):
        score(checklist, [5, 4, True])
    with pytest.raises(ScoreError):
        score(checklist, [5, 2, 1])  # 2 is not a score of the binary item b


# ------------------------------------------------------------------------------------ normalization
def exact_largest_remainder(weights: list[int], total: int = 9) -> list[int]:
    """Hamilton's method in exact arithmetic, ties to the earlier item (no minimum of 1)."""
    base = [max(w, 0) for w in weights]
    if sum(base) == 0:
        base = [1] * len(base)
    quotas = [Fraction(w * total, sum(base)) for w in base]
    result = [floor(q) for q in quotas]
    for i in sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - result[i]), i))[: total - sum(result)]:
        result[i] += 1
    return result


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(-3, 200), min_size=1, max_size=9))
def test_largest_remainder_properties(weights):
    result = largest_remainder(weights)
    assert sum(result) == 9 and len(result) == len(weights)
    assert all(r >= 1 for r in result)
    assert result == largest_remainder(list(weights))  # deterministic, input untouched
    base = [max(w, 0) for w in weights] if any(w > 0 for w in weights) else [1] * len(weights)
    quotas = [Fraction(9 * w, sum(base)) for w in base]
    for r, q in zip(result, quotas, strict=True):
        assert r <= max(1, ceil(q))  # never more than the quota rounded up
        if q < 1:
            assert r == 1
    if all(q >= 1 for q in quotas):
        # proportional: no result differs from its quota by 1 or more, ties to the earlier item
        assert all(abs(r - q) < 1 for r, q in zip(result, quotas, strict=True))
        assert result == exact_largest_remainder(weights)
    for i in range(len(base)):
        for j in range(len(base)):
            if base[i] > base[j]:
                assert result[i] >= result[j], "a larger weight never gets fewer points"
    k = 7
    assert largest_remainder([w * k for w in weights]) == result  # only proportions matter


@pytest.mark.parametrize(("weights", "expected"), [
    ([3, 3, 3], [3, 3, 3]),
    ([2, 3, 3], [2, 4, 3]),           # quotas 2.25, 3.375, 3.375: the tie goes to the earlier item
    ([1, 1], [5, 4]),
    ([1, 6, 8], [1, 3, 5]),           # exact quotas 0.6, 3.6, 4.8: the tie of 0.6 goes to the earlier item
    ([4, 7, 16], [2, 2, 5]),          # exact quotas 4/3, 7/3, 16/3 tie at 1/3
    ([100, 1, 1, 1], [6, 1, 1, 1]),   # every item keeps a point
    ([46, 43, 1, 1], [4, 3, 1, 1]),   # ... taken so that 46 does not end below 43
    ([0, 0, 0], [3, 3, 3]),
    ([0, 0, 9], [1, 1, 7]),
    ([-2, 4], [1, 8]),
    ([9], [9]),
    ([1] * 9, [1] * 9),
])
def test_largest_remainder_examples(weights, expected):
    assert largest_remainder(weights) == expected


def test_largest_remainder_refuses_impossible_inputs():
    with pytest.raises(ValueError, match="no weights"):
        largest_remainder([])
    with pytest.raises(ValueError, match="10 items cannot each get at least 1 of 9"):
        largest_remainder([1] * 10)


@st.composite
def binary_checklists(draw) -> Checklist:
    """Any checklist whose knowledge items (1-4) are binary, with any non-negative weights."""
    n = draw(st.integers(1, 4))
    key_points = draw(st.lists(TEXT, min_size=n, max_size=n, unique_by=norm)
                      .filter(lambda ks: norm(CLARITY_KEY_POINT) not in map(norm, ks)))
    items = []
    for kp in key_points:
        w = draw(st.integers(0, 60))
        tiers = [RubricTier(score=w, criterion=f"Says {kp}")] + ([RubricTier(score=0, criterion="Misses it")] if w else [])
        items.append(ChecklistItem(kind=KNOWLEDGE, key_point=kp, weight=w, rubric=draw(st.permutations(tiers))))
    items.insert(draw(st.integers(0, n)), clarity_item())
    return Checklist(items=items)


@settings(max_examples=200, deadline=None)
@given(binary_checklists())
def test_normalize_weights_makes_any_binary_checklist_valid(checklist):
    before = checklist.model_dump()
    proposal = normalize_weights(checklist)
    assert validate(proposal) == [], validate(proposal)
    assert checklist.model_dump() == before  # the input is not changed
    old_k, new_k = checklist.knowledge_items, proposal.knowledge_items
    assert [it.weight for it in new_k] == largest_remainder([it.weight for it in old_k])
    assert [(it.kind, it.key_point) for it in proposal.items] == [(it.kind, it.key_point) for it in checklist.items]
    assert proposal.clarity_item == checklist.clarity_item
    for old, new in zip(old_k, new_k, strict=True):
        assert new.is_binary
        full = {t.score: t.criterion for t in new.rubric}[new.weight]
        if old.weight > 0:
            assert full == f"Says {old.key_point}"  # the criteria travel with their scores
            assert {t.score: t.criterion for t in new.rubric}[0] == "Misses it"


def test_rescale_item_keeps_multi_tier_rubrics_in_range():
    item = knowledge("a", 4, [0, 1, 2, 3, 4])
    for w in range(1, 10):
        new = rescale_item(item, w)
        assert new.weight == w and 0 in new.allowed_scores and w in new.allowed_scores
        assert all(0 <= s <= w for s in new.allowed_scores)
        assert len(new.allowed_scores) == len(new.rubric) and all(t.criterion for t in new.rubric)
    assert rescale_item(item, 4) is item
    assert rescale_item(item, 8).allowed_scores == [0, 2, 4, 6, 8]
    proposal = normalize_weights(make(item, knowledge("b", 2)))
    assert [it.weight for it in proposal.knowledge_items] == [6, 3] and validate(proposal) == []


def test_normalize_weights_of_a_zero_weight_item_keeps_every_criterion():
    zero = ChecklistItem(kind=KNOWLEDGE, key_point="z", weight=0, rubric=[RubricTier(score=0, criterion="Misses it")])
    proposal = normalize_weights(make(knowledge("a", 8), zero))
    assert validate(proposal) == []
    z = proposal.items[1]
    assert z.weight == 1 and {t.score: t.criterion for t in z.rubric}[0] == "Misses it"


# --------------------------------------------------------------------------------------------- schema
SUPPORTED = {"$defs", "$ref", "additionalProperties", "default", "description", "enum", "items", "properties",
             "required", "title", "type"}


def check(instance, schema: dict, root: dict, path: str = "$") -> list[str]:
    """A small JSON Schema validator for exactly the keywords the checklist schema uses."""
    unknown = set(schema) - SUPPORTED
    assert not unknown, f"the schema uses keywords this test does not check: {unknown}"
    if "$ref" in schema:
        assert schema["$ref"].startswith("#/$defs/")
        return check(instance, root["$defs"][schema["$ref"].split("/")[-1]], root, path)
    errors = []
    types = {"object": dict, "array": list, "string": str, "boolean": bool}
    t = schema.get("type")
    if t == "integer":
        if isinstance(instance, bool) or not isinstance(instance, int):
            return [f"{path}: not an integer"]
    elif t is not None and not isinstance(instance, types[t]):
        return [f"{path}: not a {t}"]
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{path}: not one of {schema['enum']}")
    if t == "object":
        for key in schema.get("required", []):
            if key not in instance:
                errors.append(f"{path}: missing {key}")
        for key, value in instance.items():
            if key in schema.get("properties", {}):
                errors += check(value, schema["properties"][key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected {key}")
    if t == "array":
        for n, value in enumerate(instance):
            errors += check(value, schema["items"], root, f"{path}[{n}]")
    return errors


def test_schema_is_plain_json_with_the_rules_described():
    schema = checklist_json_schema()
    assert json.loads(json.dumps(schema)) == schema
    assert schema["type"] == "object" and schema["required"] == ["items"]
    assert "sum to 9" in schema["description"] and "{0, 1}" in schema["description"]
    item = schema["$defs"]["ChecklistItem"]
    assert set(item["required"]) == {"key_point", "weight", "rubric"}
    assert item["properties"]["weight"]["type"] == "integer"
    assert schema["$defs"]["RubricTier"]["properties"]["score"]["type"] == "integer"
    assert schema["$defs"]["ItemKind"]["enum"] == ["knowledge", "clarity"]
    for node in (schema, item, schema["$defs"]["RubricTier"]):
        assert node["additionalProperties"] is False


@settings(max_examples=60, deadline=None)
@given(st.one_of(checklists(), binary_checklists()))
def test_schema_accepts_every_dumped_checklist(checklist):
    schema = checklist_json_schema()
    assert check(checklist.model_dump(mode="json"), schema, schema) == []


@pytest.mark.parametrize("mutate", [
    lambda d: d["items"][0].update(weight="9"),
    lambda d: d["items"][0].update(weight=True),
    lambda d: d["items"][0]["rubric"][0].update(score=1.5),
    lambda d: d["items"][0].update(kind="style"),
    lambda d: d["items"][0].update(note="x"),
    lambda d: d["items"][0].pop("rubric"),
    lambda d: d.pop("items"),
    lambda d: d.update(items={}),
])
def test_schema_and_model_refuse_the_same_broken_documents(mutate):
    schema = checklist_json_schema()
    doc = make(knowledge("a", 9)).model_dump(mode="json")
    mutate(doc)
    assert check(doc, schema, schema) != []
    with pytest.raises(ValueError):
        Checklist.model_validate_json(json.dumps(doc))


def test_schema_with_jsonschema_when_installed():
    jsonschema = pytest.importorskip("jsonschema")
    schema = checklist_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(make(knowledge("a", 9)).model_dump(mode="json"), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"items": [{"key_point": "a", "weight": "9", "rubric": []}]}, schema)


# ----------------------------------------------------------------------------------------- form text
@settings(max_examples=60, deadline=None)
@given(st.one_of(checklists(), binary_checklists()))
def test_form_round_trips(checklist):
    back, violations = checklist_from_form(checklist_to_form(checklist))
    assert back == checklist
    assert violations == validate(checklist)


def form(weight="9", scores=("9", "0"), key_point="a") -> list[dict]:
    return [
        {"kind": "knowledge", "key_point": key_point, "weight": weight,
         "rubric": [{"score": s, "criterion": f"c{n}"} for n, s in enumerate(scores)]},
        {"kind": "clarity", "key_point": CLARITY_KEY_POINT, "weight": "1",
         "rubric": [{"score": "1", "criterion": "clear"}, {"score": "0", "criterion": "not"}]},
    ]


@pytest.mark.parametrize(("weight", "message"), [
    ("nine", "the weight 'nine' is not a whole number"),
    ("9.0", "the weight '9.0' is not a whole number"),
    ("2.5", "the weight '2.5' is not a whole number"),
    ("", "the weight is empty"),
    ("   ", "the weight is empty"),
])
def test_form_reports_a_weight_that_is_not_a_whole_number_and_nothing_it_caused(weight, message):
    checklist, violations = checklist_from_form(form(weight=weight))
    assert [(v.rule, v.item, v.message) for v in violations] == [("weight-not-integer", 0, message)]
    assert checklist.items[0].weight == 0  # the placeholder, as documented


def test_form_reports_scores_that_are_not_whole_numbers_and_nothing_they_caused():
    _, violations = checklist_from_form(form(scores=("9", "4.5", "0")))
    assert [(v.rule, v.item, v.message) for v in violations] == [
        ("score-not-integer", 0, "a rubric score '4.5' is not a whole number")]
    _, violations = checklist_from_form(form(scores=("9", "x", "y", "0")))
    assert [v.rule for v in violations] == ["score-not-integer", "score-not-integer"]


def test_form_still_reports_the_other_rules_alongside():
    f = form(weight="abc", key_point=" ")
    f[1]["weight"] = "1x"
    f.append({"kind": "knowledge", "key_point": "b", "weight": "3",
              "rubric": [{"score": "3", "criterion": "c"}, {"score": "zero", "criterion": "d"}, {"score": "7", "criterion": ""}]})
    _, violations = checklist_from_form(f)
    assert [(v.rule, v.item) for v in violations] == [
        ("weight-not-integer", 0), ("weight-not-integer", 1), ("score-not-integer", 2),
        ("key-point-empty", 0), ("rubric-missing-zero", 2), ("rubric-out-of-range", 2), ("criterion-empty", 2),
    ]


def test_form_accepts_integers_and_signed_text():
    checklist, violations = checklist_from_form(form(weight=9, scores=(" 9 ", "+0")))
    assert violations == [] and checklist.items[0].allowed_scores == [0, 9]


def test_violation_str_names_the_item():
    assert str(Violation("weight-sum", "sum is 8")) == "sum is 8"
    assert str(Violation("criterion-empty", "empty", 2)) == "item 3: empty"
