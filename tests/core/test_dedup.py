"""Semantic dedup's pure rules (SWE-QA-Pro §2.3, core/dedup.py): groups from hand-made vectors and from the hashing
embedder (paraphrases and near-duplicates), scopes, splits, signatures, resolutions, and the multi-query rule on
hand-written and real SWE-QA-Pro questions."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from benchwright.core.dedup import (
    DedupError,
    MultiQueryRule,
    find_groups,
    group_signature,
    multi_query_parts,
    plan_resolution,
)
from benchwright.core.embeddings import HashingEmbedder, normalize_rows


def _unit(*angles_deg: float) -> np.ndarray:
    """Unit vectors in the plane at the given angles (cosine similarity = cos of the angle between them)."""
    return normalize_rows(np.array([[math.cos(math.radians(a)), math.sin(math.radians(a)), 0.0]
                                    for a in angles_deg]))


def test_connected_components_link_through_a_chain_and_keep_scores():
    # a-b at 10 degrees (0.985), b-c at 10 degrees, a-c at 20 degrees (0.940), d far away
    v = _unit(0, 10, 20, 90)
    groups = find_groups(["a", "b", "c", "d"], v, threshold=0.95)
    assert len(groups) == 1
    g = groups[0]
    assert g.members == ("a", "b", "c") and g.representative == "a" and g.kind == "duplicate"
    assert {(e.a, e.b) for e in g.edges} == {("a", "b"), ("b", "c")}  # a-c is below the threshold
    assert g.max_score == pytest.approx(math.cos(math.radians(10)), abs=1e-5)
    assert g.member_scores["a"] == pytest.approx(0.98481, abs=1e-4)
    assert g.signature == group_signature(["c", "a", "b"])


def test_representative_is_first_in_queue_order_not_id_order():
    v = _unit(0, 1)
    (g,) = find_groups(["qa_z", "qa_a"], v, threshold=0.9)
    assert g.representative == "qa_z"


def test_scope_repository_keeps_repositories_apart_global_does_not():
    v = _unit(0, 1, 2)
    by_repo = find_groups(["a", "b", "c"], v, threshold=0.9, scope_keys=["flask", "click", "flask"])
    assert [g.members for g in by_repo] == [("a", "c")]
    assert by_repo[0].scope_key == "flask"
    glob = find_groups(["a", "b", "c"], v, threshold=0.9, scope_keys=[None, None, None])
    assert [g.members for g in glob] == [("a", "b", "c")]


def test_splits_are_compared_only_with_across_splits_and_then_cross_split():
    v = _unit(0, 1, 2, 3)
    splits = ["train", "test", None, None]
    within = find_groups(list("abcd"), v, threshold=0.9, splits=splits)
    # train alone, test alone; the two without a split count as one split of their own
    assert [(g.members, g.kind) for g in within] == [(("c", "d"), "duplicate")]
    across = find_groups(list("abcd"), v, threshold=0.9, splits=splits, across_splits=True)
    assert [(g.members, g.kind) for g in across] == [(("a", "b", "c", "d"), "cross-split")]
    assert across[0].splits == {"a": "train", "b": "test", "c": None, "d": None}
    same = find_groups(["a", "b"], _unit(0, 1), threshold=0.9, splits=["test", "test"], across_splits=True)
    assert same[0].kind == "duplicate"


def test_paraphrase_and_near_duplicate_fixtures_with_the_hashing_embedder():
    questions = [
        "Where does flask register blueprints on the application object?",
        "Where does Flask register blueprints on the application object ?",  # near-duplicate (case, spacing)
        "How does click parse options from the command line?",
        "How does click parse the options given on the command line?",  # paraphrase
        "What is the licence of the project?",
    ]
    v = HashingEmbedder(1024).embed(questions)
    groups = find_groups([f"q{i}" for i in range(5)], v, threshold=0.6)
    assert [g.members for g in groups] == [("q0", "q1"), ("q2", "q3")]
    strict = find_groups([f"q{i}" for i in range(5)], v, threshold=0.99)
    assert [g.members for g in strict] == [("q0", "q1")]


def test_many_rows_blockwise_equal_one_block():
    rng = np.random.default_rng(3)
    base = normalize_rows(rng.normal(size=(40, 16)))
    v = normalize_rows(np.vstack([base, base + rng.normal(scale=0.01, size=base.shape)]))
    ids = [f"p{i:03d}" for i in range(80)]
    small = find_groups(ids, v, threshold=0.98, block=7)
    big = find_groups(ids, v, threshold=0.98, block=4096)
    assert [g.members for g in small] == [g.members for g in big]
    assert len(small) == 40 and all(len(g.members) == 2 for g in small)


@pytest.mark.parametrize("threshold", [0, -0.1, 1.5, float("nan")])
def test_threshold_out_of_range_is_refused(threshold):
    with pytest.raises(DedupError, match="threshold"):
        find_groups(["a", "b"], _unit(0, 1), threshold=threshold)


def test_mismatched_lengths_are_refused():
    with pytest.raises(DedupError, match="2 ids but 3 vectors"):
        find_groups(["a", "b"], _unit(0, 1, 2))


def test_plan_resolution():
    members = ("a", "b", "c")
    keep = plan_resolution(members, "keep-one", "b")
    assert (keep.kept, keep.dropped, keep.merged_into) == (("b",), ("a", "c"), None)
    merge = plan_resolution(members, "merge", "c")
    assert (merge.kept, merge.dropped, merge.merged_into) == (("c",), ("a", "b"), "c")
    both = plan_resolution(members, "keep-both")
    assert (both.kept, both.dropped) == (members, ())
    with pytest.raises(DedupError, match="not a member"):
        plan_resolution(members, "keep-one", "z")
    with pytest.raises(DedupError, match="needs the pair"):
        plan_resolution(members, "merge")
    with pytest.raises(DedupError, match="unknown dedup decision"):
        plan_resolution(members, "delete", "a")


# ------------------------------------------------------------------------------------------- multi-query
@pytest.mark.parametrize("question, parts", [
    ("What does Flask.route return? How is the endpoint name chosen?",
     ["What does Flask.route return?", "How is the endpoint name chosen?"]),
    ("Please answer:\n1. What does load_dotenv read?\n2) Where is it called?",
     ["What does load_dotenv read?", "Where is it called?"]),
    ("- Which class owns the session?\n- How is it signed?", ["Which class owns the session?", "How is it signed?"]),
    ("What does send_file do with etags, and how is the cache timeout chosen?",
     ["What does send_file do with etags", "how is the cache timeout chosen?"]),
    ("How are signals dispatched and also where are they connected?",
     ["How are signals dispatched", "where are they connected?"]),
    ("Where are templates found? Additionally, how is the loader cached?",
     ["Where are templates found?", "Additionally, how is the loader cached?"]),
])
def test_multi_query_questions_are_flagged_with_their_parts(question, parts):
    assert multi_query_parts(question) == parts


@pytest.mark.parametrize("question", [
    "How does Flask decide which JSON provider to use?",
    "Why does `re.compile(r'a?b')` match 'b' in the router? ",  # a ? inside inline code
    "What does this do?\n```python\nx = a if b else c  # why? who knows? it works?\n```",  # ?s inside a fence
    "Why does `x?.y` fail to parse in the template engine?",
    "What are the strategies of Flask-Executor and when is each strategy applied?",  # no comma: one question
    "Why? Because of the lock.",  # a one-word 'question' is not a second question
    "How does the config loader work, and does it?",  # the second part is too short
])
def test_single_questions_are_not_flagged(question):
    assert multi_query_parts(question) == []


def test_the_rule_is_configurable():
    q = "What does the loader do, and how is it cached?"
    assert multi_query_parts(q, MultiQueryRule(joins=())) == []
    assert multi_query_parts("Why? How? When?") == []
    assert multi_query_parts("Why? How? When?", MultiQueryRule(min_words=1)) == ["Why?", "How?", "When?"]
    listed = "1. What does it do?\n2. Where is it?"
    assert multi_query_parts(listed, MultiQueryRule(enumerated=False, min_questions=3)) == []


SWE_QA_PRO = Path("/work/shared/data/swe-qa-pro")


@pytest.mark.skipif(not (SWE_QA_PRO / "train.parquet").is_file(), reason="needs ../shared/data/swe-qa-pro")
def test_real_swe_qa_pro_questions_are_almost_never_flagged():
    import pyarrow.parquet as pq

    questions = []
    for name in ("train.parquet", "test.rows-0-10.parquet"):
        table = pq.read_table(SWE_QA_PRO / name, columns=["extra_info"]).to_pylist()
        questions += [r["extra_info"]["question"] for r in table]
    flagged = [q for q in questions if multi_query_parts(q)]
    assert len(questions) == 475
    # one question joins a second one after a comma ("..., and which specific transport implementations ...?")
    assert len(flagged) == 1 and ", and which specific transport" in flagged[0]


def test_equal_questions_are_duplicates_at_threshold_one_despite_float32_rounding():
    # the cosine of a float32 unit vector with itself is often 0.9999994, not 1.0: equal texts must still link
    rng = np.random.default_rng(0)
    v = normalize_rows(rng.normal(size=(20, 256))).astype(np.float32)
    assert ((v * v).sum(axis=1) < 1).any()
    ids = [f"p{i}" for i in range(40)]
    groups = find_groups(ids, np.vstack([v, v]), threshold=1.0)
    assert sorted(g.members for g in groups) == sorted((f"p{i}", f"p{i + 20}") for i in range(20))


def test_similar_pairs_blockwise_upper_triangle_equals_brute_force():
    from benchwright.core.embeddings import similar_pairs

    rng = np.random.default_rng(5)
    v = normalize_rows(rng.normal(size=(50, 4)))
    sims = v @ v.T
    expected = [(i, j) for i in range(50) for j in range(i + 1, 50) if sims[i, j] >= 0.8]
    for block in (1, 7, 50, 4096):
        got = similar_pairs(v, 0.8, block=block)
        assert [(p.i, p.j) for p in got] == expected
        assert all(abs(p.score - sims[p.i, p.j]) < 1e-6 for p in got)


def test_a_threshold_far_too_low_stops_with_an_error_before_the_links_fill_the_memory():
    rng = np.random.default_rng(0)
    v = np.abs(rng.normal(size=(300, 8))).astype(np.float32)  # all in one orthant: most pairs alike
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ids = [f"qa_{i:04d}" for i in range(300)]
    with pytest.raises(DedupError, match="threshold is too low"):
        find_groups(ids, v, threshold=0.1, max_links=1000)
    assert find_groups(ids, v, threshold=0.1, max_links=300 * 299 // 2)  # the same run under a larger cap
