"""Screenshots of every screen (pytest-textual-snapshot), each at a fixed terminal size on a seeded project
(tests/tui/snapshot_project.py: fixed ids, names, texts and times; no user home, configuration or key read),
reached the way a user reaches it: from the queue or a pair, by its key. Update with --snapshot-update after a
deliberate visual change, and look at the report before accepting: a screenshot that changes without one is a
real signal. tests/tui/test_keys_documented.py lists the screens these must cover."""

from __future__ import annotations

import time

import pytest
from snapshot_project import LEAD, VIEWER, frozen_clock, make_snapshot_project
from textual.widgets import Input, Select, TextArea

from benchwright.core.llm import ScriptedProvider
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp

SIZE = (140, 40)


def _app(make_project, tmp_path, *, resume=True, decide=0):
    db, ids = make_project(tmp_path)
    store = Store.open(db)
    for pair_id in ids[:decide]:
        store.record_decision(pair_id, "ann", "accept")
    return BenchwrightApp(store, "ann", resume=resume)


def test_review_screen(snap_compare, project_factory, tmp_path):
    assert snap_compare(_app(project_factory, tmp_path, decide=1), terminal_size=(140, 40))


def test_review_screen_literal_text(snap_compare, project_factory, tmp_path):
    assert snap_compare(_app(project_factory, tmp_path), terminal_size=(140, 40))


def test_queue_screen(snap_compare, project_factory, tmp_path):
    assert snap_compare(_app(project_factory, tmp_path, resume=False, decide=2), terminal_size=(140, 30))


# ------------------------------------------------------------------------------ every screen, on a seeded project
@pytest.fixture
def seeded(project_factory, tmp_path, monkeypatch):
    """The seeded project, with nothing of the user's read: home, configuration and data folders in
    ``tmp_path``, no annotator, project or API key from the environment, the store's clock frozen."""
    home = tmp_path / "home"
    for var, sub in (("HOME", ""), ("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                     ("XDG_STATE_HOME", ".local/state"), ("XDG_CACHE_HOME", ".cache")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(home / "no-config.toml"))
    monkeypatch.setenv("BENCHWRIGHT_DATA_DIR", str(home / "data"))
    for var in ("BENCHWRIGHT_DB", "BENCHWRIGHT_ANNOTATOR", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    frozen_clock(monkeypatch)
    made = make_snapshot_project(tmp_path / "project", project_factory)
    (made["db"].parent / "benchwright.toml").write_text(
        '[roles.generator]\nprovider = "openai"\nmodel = "gen-model"\n'
        '[roles.verifier]\nprovider = "openai"\nmodel = "ver-model"\n'
        '[roles.judge]\nprovider = "openai"\nmodel = "judge-model"\n')
    return made


async def _settle(pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


class _NotReached(Exception):
    """A screen did not come up; raised inside the app, reported by :func:`_shoot` after it (``pytest.fail``
    raised in the app's loop would stop the loop without ending the app)."""


def _in_select(app) -> bool:
    focused = app.focused
    return focused is not None and any(isinstance(node, Select) for node in focused.ancestors_with_self)


async def _wait(pilot, done, what: str) -> None:
    """Pause until ``done(app)`` holds, up to 60 s (the machine may be busy), then let workers finish."""
    deadline = time.monotonic() + 60
    while not done(pilot.app):
        if time.monotonic() > deadline:
            raise _NotReached(f"expected {what}; the app shows {pilot.app.screen_stack}, focus on {pilot.app.focused}")
        await pilot.pause(0.05)
    await _settle(pilot)
    await pilot.wait_for_scheduled_animations()


async def _on(pilot, screen: str) -> None:
    """Wait until the screen on top is of class ``screen`` and mounted at full size: the picture is taken of
    the screen meant, painted."""
    await _wait(pilot, lambda app: (type(app.screen).__name__ == screen and app.screen.is_mounted
                                    and app.screen.size == app.size), f"the {screen}, mounted")
    # then the focus: on the screen's widget (if it has one to focus) and there for 5 looks in a row, so the
    # picture shows the focused field's cursor, or none, on every run
    last, same = None, 0
    deadline = time.monotonic() + 60
    while same < 5 and time.monotonic() < deadline:
        focused = pilot.app.screen.focused
        if focused is None and pilot.app.screen.focus_chain:
            same = 0
        elif focused is last:
            same += 1
        else:
            last, same = focused, 0
        await pilot.pause(0.05)
    await _settle(pilot)


async def _press(pilot, key: str) -> None:
    """Press ``key`` once the focus is outside a ``Select``: while a screen starts, focus may pass through
    its first drop-down, which takes typed letters for its search, and the key would not reach the screen."""
    await _wait(pilot, lambda app: not _in_select(app), f"the focus outside a drop-down before {key!r}")
    await pilot.press(key)


def _shoot(snap_compare, made, steps=(), annotator=VIEWER) -> bool:
    """Open the app as ``annotator`` on the queue, take ``steps`` in order and compare the screenshot. A step
    is ``(key, screen)``: press ``key``, then wait for ``screen`` (a class name) to be on top; or an async
    function of the pilot."""
    problems: list[str] = []

    def no_call(request):
        problems.append(f"a screenshot made an LLM call: {request}")
        raise RuntimeError("no LLM calls in screenshots")

    provider = ScriptedProvider(no_call)
    with Store.open(made["db"]) as store:
        app = BenchwrightApp(store, annotator, resume=False, provider_factory=lambda config, role: provider)

        async def run_before(pilot) -> None:
            pilot.app.animation_level = "none"  # an indeterminate progress bar stands still
            try:
                await _on(pilot, "QueueScreen")
                for step in steps:
                    if callable(step):
                        await step(pilot)
                        await _settle(pilot)
                    else:
                        await _press(pilot, step[0])
                        await _on(pilot, step[1])
            except _NotReached as e:
                problems.append(str(e))
            for field in [*pilot.app.screen.query(Input), *pilot.app.screen.query(TextArea)]:
                field.cursor_blink = False  # the cursor of the focused field is shown, whenever the picture is taken
            await _settle(pilot)

        same = snap_compare(app, terminal_size=SIZE, run_before=run_before)
    if problems:
        pytest.fail("; ".join(problems))
    return same


async def _blur(pilot) -> None:
    """A step that takes the focus off every field: a text area's cursor is drawn only while it has the
    focus, and on a loaded machine the picture was taken on either side of the moment the focus arrived."""
    pilot.app.screen.set_focus(None)


def _set(selector: str, value: str):
    """A step that types ``value`` into the input ``selector`` of the screen on top."""
    async def step(pilot) -> None:
        pilot.app.screen.query_one(selector, Input).value = value
    return step


async def _agent_answer(pilot) -> None:
    """A step that stores an agent answer with a trajectory (a search with long output, a refused command, an
    elision, the finish) on the first pair, before the inspector opens."""
    from benchwright.core.agent.model import AgentOutcome, ToolUse, Turn
    from benchwright.core.llm.base import Usage

    hits = "\n".join(f"src/pkg/app.py:{i}: line_{i} = {i}" for i in range(118, 140))
    outcome = AgentOutcome(qa_pair_id="", model="agent-model", status="ok", turns=[
        Turn(1, "Search for the name first. [bold]not bold[/bold]", usage=Usage(900, 40), context_tokens=950,
             tool_uses=[ToolUse("c1", "search", {"query": "line_120", "path": None}, hits, elided_at_turn=3),
                        ToolUse("c2", "command_line", {"command": "rm -rf src"},
                                "refused: rm is not an allowed command", ok=False)]),
        Turn(2, "", usage=Usage(1400, 30), cached=True, context_tokens=1450,
             tool_uses=[ToolUse("c3", "view", {"path": "src/pkg/app.py", "start_line": 119, "end_line": 121},
                                "119 line_119 = 119\n120 line_120 = 120\n121 line_121 = 121")]),
        Turn(3, "", usage=Usage(700, 25), elided=["c1"], context_tokens=720,
             tool_uses=[ToolUse("c4", "finish", {"answer": "src/pkg/app.py: line 120 sets it."}, "")]),
    ])
    pilot.app.store.add_generated_answer(
        pilot.app.store.queue_page(VIEWER, limit=1)[0].id, "agent-model", "agentic",
        "src/pkg/app.py: line 120 sets it.", extra={"citations": {"resolving": 1, "not_resolving": 0}},
        by="setup", trajectory=outcome.trajectory_json(), source_format="agent")


async def _refined(pilot) -> None:
    """A step that gives the first pair a refined text version (with its model) before the text screen opens."""
    store = pilot.app.store
    pid = store.queue_page(VIEWER, limit=1)[0].id
    original = store.text_version(pid)
    store.save_text_version(pid, "In the pkg package, " + original.question[0].lower() + original.question[1:],
                            (original.reference_answer or "") + " The module is src/pkg/app.py.",
                            origin="refined", by="setup", model="gen-model", call_ids=[1])


async def _duplicates(pilot) -> None:
    """A step that stores a dedup run grouping the first two pairs (cross-split when their splits differ) before
    the duplicates screen opens."""
    import numpy as np

    from benchwright.core.dedup import find_groups

    store = pilot.app.store
    pairs = store.dedup_candidates(store.filtered_pair_ids(VIEWER))
    vectors = np.array([[1.0, 0.0], [0.995, 0.0998]], dtype=np.float32)
    groups = find_groups([p.id for p in pairs[:2]], vectors, threshold=0.9, splits=[p.split for p in pairs[:2]])
    store.save_dedup_run(scope="global", threshold=0.9, across_splits=True, embedder_model="hashing", dimensions=2,
                         pair_count=2, groups=groups, multi_query={}, annotator="setup")


async def _taxonomy(pilot) -> None:
    """A step that stores a taxonomy of the pairs (fixed vectors, seed 0) with labels on a topic and a leaf before
    the taxonomy screen opens."""
    import numpy as np

    from benchwright.core import taxonomy as tx
    from benchwright.tui.services.taxonomy import edit_taxonomy

    store = pilot.app.store
    ids = store.filtered_pair_ids(VIEWER)
    vectors = np.random.default_rng(0).normal(size=(len(ids), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.save_taxonomy(tx.build(vectors, ids, 2, 3, 0), operation="build", source="pairs", embedder_model="hand",
                        dimensions=8, by="setup")
    version = store.taxonomy_version().taxonomy
    edit_taxonomy(store, "rename", by="setup", node=version.leaves[0].node_id, label="Request routing",
                  description="How URLs reach views.")


async def _batches(pilot) -> None:
    """A step that stores two batches before the batches screen opens: a collected one (two results back, one
    errored, one missing) and, newest, one still running at the provider."""
    from benchwright.core.llm.batch import BatchItem, BatchStatus, NewRequest, ResultKind

    store = pilot.app.store
    made = []
    for n, command in ((3, ["curation", "run", "classify", "--batch"]), (2, ["judge", "run", "--batch"])):
        reqs = [NewRequest(f"bw-snapshot{len(made)}{i}", f"snapshot-hash-{len(made)}-{i}", 0, "classify", None,
                           {"custom_id": f"bw-snapshot{len(made)}{i}", "params": {}}) for i in range(n)]
        bid, _ = store.create_batch(label=f"benchwright-snapshot{len(made)}", provider="openai", provider_kind="openai",
                                    base_url=None, endpoint="/v1/chat/completions", owner="setup", command=command,
                                    requests=reqs, status=BatchStatus.PENDING)
        store.batch_submitted(bid, f"batch_snapshot{len(made)}")
        made.append((bid, reqs))
    (done, reqs), (running, _) = made
    store.store_batch_results(done, [BatchItem(reqs[0].custom_id, ResultKind.SUCCEEDED, {}),
                                     BatchItem(reqs[1].custom_id, ResultKind.ERRORED, {})])
    store.batch_collected(done)
    store.batch_state(running, status=BatchStatus.SUBMITTED, provider_status="in_progress", counts={"processing": 2})


REVIEW = ("enter", "ReviewScreen")
"""From the queue, the first pair: reviewed by both annotators (accept against reject), their checklist edits,
a note, a flagged curation step, an answer judged twice."""
EDITOR = ("c", "ChecklistEditorScreen")
INSPECTOR = ("j", "InspectorScreen")
PROBES = ("P", "ProbesScreen")

SHOTS = {
    "queue": [],
    "review": [REVIEW],
    "help": [REVIEW, ("question_mark", "HelpScreen")],
    "notes": [REVIEW, ("n", "NotesScreen"), _blur],
    "criteria-notes": [REVIEW, ("k", "CriteriaNotesScreen")],
    "reject-reason": [REVIEW, ("x", "RejectReasonScreen")],
    "evidence": [REVIEW, ("e", "ReviewScreen"), ("enter", "EvidenceScreen")],
    "checklist-editor": [REVIEW, EDITOR],
    "normalize": [REVIEW, EDITOR, _set("#w-0", "7"), ("ctrl+g", "NormalizeScreen")],  # 7 + 4 offered as 6 + 3
    "leave-editor": [REVIEW, EDITOR, _set("#kp-0", "An edited key point"), ("escape", "LeaveScreen")],
    "checklist-diff": [REVIEW, ("d", "ChecklistDiffScreen")],
    "history": [REVIEW, ("h", "HistoryScreen")],
    "text-versions": [_refined, REVIEW, ("w", "TextVersionsScreen")],
    "text-edit": [_refined, REVIEW, ("w", "TextVersionsScreen"), ("e", "TextEditScreen"), _blur],
    "curation": [REVIEW, ("g", "CurationScreen")],
    "inspector": [REVIEW, INSPECTOR],
    "override": [REVIEW, INSPECTOR, ("o", "OverrideScreen")],
    "failure-mode": [REVIEW, INSPECTOR, ("m", "FailureModeScreen")],
    "human-score": [REVIEW, INSPECTOR, ("h", "HumanScoreScreen")],
    "assigned-answers": [REVIEW, INSPECTOR, ("l", "AssignedAnswersScreen")],
    "curation-run": [("G", "CurationRunScreen")],
    "inspector-trajectory": [_agent_answer, REVIEW, INSPECTOR, ("t", "InspectorScreen")],
    "answer-run": [("M", "AnswerRunScreen")],
    "statistics": [("S", "StatisticsScreen")],
    "statistics-plots": [("S", "StatisticsScreen"), ("3", "StatisticsScreen")],  # score distributions
    "release": [("R", "ReleaseScreen")],
    "probes": [PROBES],
    "sign-off-reason": [PROBES, ("n", "ReasonScreen")],
    "rules-editor": [PROBES, ("e", "RulesEditorScreen")],
    "duplicates": [_duplicates, ("D", "DuplicatesScreen")],
    "taxonomy": [_taxonomy, ("X", "TaxonomyScreen")],
    "rename-node": [_taxonomy, ("X", "TaxonomyScreen"), ("e", "RenameNodeScreen"), _blur],
    "batches": [_batches, ("B", "BatchesScreen")],
    "cancel-batch": [_batches, ("B", "BatchesScreen"), ("c", "CancelBatchScreen")],
}
"""Each picture: how it is reached from the queue. Every screen class is the last screen of one of them (and of
the adjudication test); test_every_screen_has_a_picture keeps it so."""


@pytest.mark.slow  # 21 app runs, 2-4 minutes here: in CI and on request (tests/conftest.py), not the default run
@pytest.mark.parametrize("name", list(SHOTS))
def test_screen(snap_compare, seeded, name):
    assert _shoot(snap_compare, seeded, SHOTS[name])


@pytest.mark.slow
def test_adjudication(snap_compare, seeded):
    """As the lead, who reviewed nothing: the first pair's reviews and checklist edits side by side."""
    assert _shoot(snap_compare, seeded, [("A", "AdjudicationScreen")], annotator=LEAD)


def test_every_screen_has_a_picture():
    from test_keys_documented import _screen_classes

    shot = {step[1] for steps in SHOTS.values() for step in steps if not callable(step)} | {"QueueScreen",
                                                                                            "AdjudicationScreen"}
    missing = sorted(set(_screen_classes()) - shot)
    assert not missing, f"screens without a screenshot test (add them to SHOTS): {missing}"
