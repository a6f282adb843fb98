"""core.funnel: the funnel's rules over hand-made facts (no store)."""

from __future__ import annotations

from benchwright.core.funnel import (
    FilteredImport,
    PairFacts,
    Stage,
    StepFact,
    drop_reason,
    dropped_by,
    filter_reason,
    funnel,
    funnel_by_repository,
    funnel_filters,
    harvest,
    reject_reason,
    stage_lines,
)

OK, DROP, FAIL = StepFact("ok"), StepFact("ok", True), StepFact("failed")


def test_dropped_by_is_the_first_gating_step_with_an_ok_flagged_result():
    assert dropped_by({"images": OK, "classify": DROP, "verify": DROP}) == "classify"
    assert dropped_by({"classify": DROP}, ["verify"]) is None
    assert dropped_by({"images": FAIL, "enrich": DROP}) is None  # failed drops nothing, enrich does not gate
    assert dropped_by({"verify": ("ok", True)}) == "verify"


def test_reasons():
    assert drop_reason("verify", {"self_contained": {"passed": True}, "answerable": {"passed": False}}) == "not answerable"
    assert drop_reason("verify", {"links": {"passed": False}, "self_contained": {"passed": False}}) == \
        "not self-contained + unresolved link"
    assert drop_reason("verify", {}) == "failed the verifier"
    assert drop_reason("images", {"reason": "question markdown image: ![x](y)"}) == "relies on an image"
    assert filter_reason("answer relies on an image: <img> tag: <img") == "relies on an image"
    assert filter_reason("category Ideas not in Q&A, Help") == "category not imported"
    assert filter_reason("unanswered") == "unanswered"
    assert reject_reason("task_validity") == "task validity" and reject_reason(None) == "no reason given"
    assert reject_reason("[bold]mine[/]") == "[bold]mine[/]"
    assert funnel_filters() == ("passed", "dropped:images", "dropped:classify", "dropped:verify")


def test_harvest_counts_distinct_records_and_a_later_import_once():
    pairs = [PairFacts("a", "r")]
    filtered = [FilteredImport("r", "u1", "unanswered"), FilteredImport("r", "u1", "unanswered"),
                FilteredImport("r", "u2", "no accepted answer"), FilteredImport("s", "u1", "unanswered")]
    n, reasons = harvest(pairs, filtered, [("r", "u2")])
    assert n == 3 and reasons == {"unanswered": 2}


def test_stages_chain_and_split_by_repository():
    pairs = [
        PairFacts("a", "r", {"images": DROP}),
        PairFacts("b", "r", {"images": OK, "classify": FAIL}),
        PairFacts("c", "s", {"images": OK, "classify": OK, "enrich": FAIL, "verify": OK}, "accept", released=True),
        PairFacts("d", "s", {"images": OK, "classify": OK, "verify": OK}, "reject", "directly-answerable"),
        PairFacts("e", None, {"images": OK, "classify": OK, "verify": OK}, "revise"),
        PairFacts("f", None, {"images": OK, "classify": OK, "verify": OK}, "accept", released=None),
    ]
    st = {s.name: s for s in funnel(pairs)}
    assert (st["classify"].entered, st["classify"].out, st["classify"].failed) == (5, 4, 1)
    assert (st["enrich"].entered, st["enrich"].failed, st["enrich"].not_run) == (4, 1, 3)
    assert st["verify"].entered == 4  # the rewriting steps drop nothing: verify takes classify's out
    assert st["human QA"].dropped == {"directly answerable": 1, "to revise": 1} and st["human QA"].out == 2
    assert (st["released"].entered, st["released"].out, st["released"].unknown) == (2, 1, True)
    for s in st.values():
        assert s.entered == s.out + s.n_dropped + s.failed + s.not_run
        assert Stage.from_dict(s.to_dict()) == s
    per = funnel_by_repository(pairs, [FilteredImport("r", "x", "unanswered")])
    assert list(per) == ["(none)", "r", "s"]
    assert per["r"][0].entered == 3 and per["r"][1].dropped == {"unanswered": 1}
    assert [s.out for s in per["s"]][-2:] == [1, 1]
    rows = stage_lines(funnel(pairs))
    assert ("  relies on an image", "", "", "1", "", "") in rows
    assert ("released", "2", "1?", "-", "0", "1") in rows


def test_every_gating_step_has_a_release_exclusion_that_comes_first():
    from benchwright.core.adjudication import Exclusion, FinalDecision, release_exclusion
    from benchwright.core.steps import gating_steps

    for step in gating_steps():
        assert Exclusion.dropped(step).value.startswith(f"dropped by {step} (")
    accepted = FinalDecision("accept", False, None)
    assert release_exclusion(accepted, has_checklist=True, dropped_by="verify") is Exclusion.DROPPED_VERIFY
    assert release_exclusion(FinalDecision(None, False, None), has_checklist=False, dropped_by="images") \
        is Exclusion.DROPPED_IMAGES
    assert release_exclusion(accepted, has_checklist=True) is None


def test_a_release_of_pairs_no_step_ran_on_counts_them_released():
    # tester finding (issue 20): 9 released pairs, no curation step run, showed "released 0" after 12 "not yet run"
    pairs = [PairFacts(f"p{i}", "r", {}, "accept", released=True) for i in range(9)]
    st = {s.name: s for s in funnel(pairs)}
    assert (st["human QA"].entered, st["human QA"].out) == (9, 9)
    assert (st["released"].entered, st["released"].out, st["released"].not_run) == (9, 9, 0)
    assert all(s.not_run == 9 for name, s in st.items() if name not in ("harvested", "imported", "human QA",
                                                                        "released"))
