"""Agent answers: a model answering each pair inside its pinned repository (SWE-QA-Pro §3.1), under a condition
that says which tree it may read (Code-QA-Bench "Methodology": ``documented`` / ``agentic`` the registered
repository, ``code-only`` its stripped copy; :data:`~benchwright.core.vocabulary.CONDITION_ACCESS`).

- :func:`plan_agent_answers` chooses the work: every (pair, sample index) without an answer by the model under the
  condition, and the pairs refused with the reason (no repository, no local checkout, a checkout at another
  commit, no code-only copy).
- :func:`run_agent_answers` runs the agent (:func:`benchwright.core.agent.loop.run_agent`) on each, at most the
  provider's concurrency at once, and stores every run as it finishes: an ``answer_runs`` row always (ok or failed
  with its reason), and for an ok run the answer (source format ``agent``, its trajectory, citation counts).

Runs survive: every turn is a ledger call cached by request hash and sample, so a killed run resumes at the turn it
reached and a finished one replays with 0 calls; two processes share the work through claims
(:meth:`~benchwright.db.Store.claim`), as the judges do. A failed run is tried again by the next invocation (its
finished turns come from the cache).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.core.agent.model import AgentOutcome, AgentSettings
from benchwright.core.errors import BenchwrightError
from benchwright.core.judging import samples_problem
from benchwright.core.judgment import CONDITIONS, check_choice
from benchwright.core.llm.base import Usage
from benchwright.core.llm.client import LLMClient
from benchwright.core.llm.jobs import ItemTally, JobProgress
from benchwright.core.repository import changed_checkout_problem, git_changed_files, git_head
from benchwright.core.strip import CODE_ONLY
from benchwright.core.vocabulary import (
    ACCESS_CODE_ONLY,
    AGENT_CONDITIONS,
    CONDITION_REGISTRY,
    DEFAULT_AGENT_CONDITION,
)
from benchwright.db import QueueFilter, Store
from benchwright.db.llm import claim_owner

from .curation_runs import build_input
from .judge_runs import _pair_ids_matching, _run_and_store

AGENT_PURPOSE = "answer:agent"
"""The ledger purpose of an agent's turns (``llm_calls.purpose``)."""
AGENT_SOURCE_FORMAT = "agent"
"""``answers.source_format`` of an answer the agent wrote here."""


class AgentConditionError(BenchwrightError):
    """The condition gives the model no repository access, so the agent is not run under it."""


def check_agent_condition(condition: str | None) -> str:
    """The condition an agent run is under: ``condition``, or :data:`DEFAULT_AGENT_CONDITION` (agentic) when None.

    Raises:
        JudgmentError: unknown condition.
        AgentConditionError: a condition without repository access (closed-book, direct): their answers are
            direct, one-turn answers (``answers generate`` without ``--agent``).
    """
    condition = DEFAULT_AGENT_CONDITION if condition is None else condition
    check_choice(condition, CONDITIONS, "condition")
    if not CONDITION_REGISTRY.get(condition).needs_agent:
        raise AgentConditionError(
            f"condition {condition} gives the model no repository, so the agent is not run under it; use "
            f"--condition {' / '.join(AGENT_CONDITIONS)} with --agent, or drop --agent for a direct answer")
    return condition


def agent_settings(config, role, *, project_dir: Path | None = None, max_turns: int | None = None) -> AgentSettings:
    """The agent's settings for a resolved answering role: its model and sampling parameters (temperature 0 unless
    the role sets one, SWE-QA-Pro §3.1), the ``[agent]`` table of benchwright.toml (``config`` is an
    :class:`~benchwright.core.llm.config.LLMConfig`), and ``max_turns`` (``--max-turns``) over both."""
    overrides = config.settings.agent.overrides()
    if max_turns is not None:
        overrides["max_turns"] = max_turns
    return AgentSettings(model=role.model, params={"temperature": 0, **role.params}, project_dir=project_dir,
                         **overrides)


# ------------------------------------------------------------------------------------------------- plan
@dataclass
class AgentPlan:
    """The work of one agent run over the queue.

    Attributes:
        model, condition, samples: what is run (``samples`` answers per pair, sample indices 0..samples-1).
        targets: ``(pair id, sample index)`` to run, pair by pair in queue order.
        already_answered: (pair, sample) left out because the model has an answer there under the condition.
        refused: ``(pair id, reason)`` for pairs with work the agent cannot do here (no repository registered, no
            local checkout, a checkout not at the pinned commit, no code-only copy); one entry per pair.
        workspaces: pair id -> the folder the agent runs in (the checkout, or the code-only copy).
        repositories: pair id -> the name of the repository of that folder (the copy's name for code-only).
    """

    model: str
    condition: str
    samples: int = 1
    targets: list[tuple[str, int]] = field(default_factory=list)
    already_answered: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    workspaces: dict[str, str] = field(default_factory=dict)
    repositories: dict[str, str] = field(default_factory=dict)


def repository_for_condition(store: Store, name: str | None, condition: str) -> tuple[str, str]:
    """Where the agent reads under ``condition`` for a pair about repository ``name``: ``(folder, repository
    name)``. For repository access, the registered repository's local checkout, verified at its pinned commit
    (:func:`~benchwright.core.repository.git_head`) when it is a git checkout; for code-only access, the
    repository's stripped copy (``store.derived_repository``), made at the same commit.

    Raises:
        BenchwrightError: why the agent cannot run (the message is the plan's refusal reason, with the remedy).
    """
    if not name:
        raise BenchwrightError("the pair names no repository (import it with --repo NAME)")
    repo = store.get_repository(name, missing_ok=True)
    if repo is None:
        raise BenchwrightError(f"no repository registered as {name!r} (benchwright repos add {name} PATH)")
    if CONDITION_REGISTRY.get(condition).access == ACCESS_CODE_ONLY:
        copy = store.derived_repository(name, CODE_ONLY)
        if copy is None:
            raise BenchwrightError(f"no code-only copy of {name}: run benchwright repos strip {name}")
        if repo.commit and copy.commit and copy.commit != repo.commit:
            raise BenchwrightError(f"the code-only copy {copy.name} was made at {copy.commit[:12]}, not at {name}'s "
                                   f"pinned commit {repo.commit[:12]}: run benchwright repos strip {name} --force")
        if not copy.local_path or not Path(copy.local_path).is_dir():
            raise BenchwrightError(f"the code-only copy {copy.name} has no folder here ({copy.local_path or 'none'}): "
                                   f"run benchwright repos strip {name} --force")
        return copy.local_path, copy.name
    if not repo.local_path:
        raise BenchwrightError(f"no local checkout of {name} (register one: benchwright repos add {name} PATH)")
    root = Path(repo.local_path)
    if not root.is_dir():
        raise BenchwrightError(f"the local checkout of {name} at {repo.local_path} is gone")
    head = git_head(root)
    if head is not None and repo.commit and not head.startswith(repo.commit):
        raise BenchwrightError(f"the checkout of {name} at {repo.local_path} is at {head[:12]}, not at the pinned "
                               f"commit {repo.commit[:12]} (git -C {repo.local_path} checkout {repo.commit})")
    changed = git_changed_files(root) if head is not None else None
    if changed:
        raise BenchwrightError(changed_checkout_problem(name, repo.local_path, repo.commit or head, changed))
    return str(root), repo.name


def plan_agent_answers(store: Store, model: str, condition: str, *, samples: int = 1,
                       where: QueueFilter | None = None, limit: int | None = None,
                       annotator: str = "") -> AgentPlan:
    """What the agent has to do for ``model`` under ``condition``: every (pair matching ``where``, in queue order;
    sample 0..samples-1) without an answer yet. ``limit`` caps the number of pairs with work. A pair whose
    repository the agent cannot read under the condition is refused with the reason (see
    :func:`repository_for_condition`), checked once per repository.

    Raises:
        JudgmentError: unknown condition.
        AgentConditionError: a condition without repository access.
        BenchwrightError: samples outside 1..MAX_SAMPLES (core.judging.samples_problem).
    """
    condition = check_agent_condition(condition)
    problem = samples_problem(samples)
    if problem:
        raise BenchwrightError(problem)
    plan = AgentPlan(model, condition, samples)
    wanted = _pair_ids_matching(store, where, annotator)
    ids = wanted if wanted is not None else store.filtered_pair_ids(annotator)
    have = {(a.qa_pair_id, a.sample_index) for a in store.answers(model=model, condition=condition)}
    where_of: dict[str | None, tuple[str, str] | str] = {}
    with_work = 0
    for pid in ids:
        todo = [(pid, s) for s in range(samples) if (pid, s) not in have]
        plan.already_answered += samples - len(todo)
        if not todo:
            continue
        if limit is not None and with_work >= limit:
            break
        with_work += 1
        repo_name = store.get_pair(pid).repository
        if repo_name not in where_of:
            try:
                where_of[repo_name] = repository_for_condition(store, repo_name, condition)
            except BenchwrightError as e:
                where_of[repo_name] = str(e)
        found = where_of[repo_name]
        if isinstance(found, str):
            plan.refused.append((pid, found))
            continue
        plan.workspaces[pid], plan.repositories[pid] = found
        plan.targets.extend(todo)
    return plan


# -------------------------------------------------------------------------------------------------- run
@dataclass
class AgentAnswerOutcome:
    """What one (pair, sample) of an agent job came to.

    Attributes:
        qa_pair_id, sample_index: the work item.
        status: ``ok`` (an answer was stored: ``answer_id``), ``failed`` (the run was stored failed with
            ``reason``; no answer) or ``skipped`` (another process had it, or it was answered meanwhile).
        run_id: the ``answer_runs`` row (None when skipped).
        outcome: the agent's outcome (trajectory, totals), None when skipped.
        citations: the final answer's cited locations, resolving / not (``CitationCount.as_json``), for ok runs.
    """

    qa_pair_id: str
    sample_index: int
    status: str
    reason: str | None = None
    answer_id: str | None = None
    run_id: int | None = None
    outcome: AgentOutcome | None = None
    citations: dict | None = None

    @property
    def ok(self) -> bool:
        """True when an answer was stored."""
        return self.status == "ok"

    @property
    def skipped(self) -> bool:
        """True when another process had the item or answered it meanwhile."""
        return self.status == "skipped"

    @property
    def calls(self) -> int:
        """Requests sent to the provider (cached turns not counted)."""
        return self.outcome.calls if self.outcome else 0

    @property
    def cached(self) -> int:
        """Turns replayed from the ledger (a resumed or finished run)."""
        return sum(1 for t in self.outcome.turns if t.cached) if self.outcome else 0

    @property
    def turns(self) -> int:
        """Model calls of the run (made or cached)."""
        return len(self.outcome.turns) if self.outcome else 0

    @property
    def usage(self) -> Usage:
        """Tokens of the calls made."""
        return self.outcome.usage if self.outcome else Usage()

    @property
    def cost_usd(self) -> float:
        """Known cost of the calls made, US dollars."""
        return self.outcome.cost_usd if self.outcome else 0.0

    @property
    def cost_unknown(self) -> int:
        """Calls made whose cost is unknown."""
        return self.outcome.cost_unknown if self.outcome else 0

    def tally(self) -> ItemTally:
        """This item's share of the job's progress."""
        return ItemTally(failed=self.status == "failed", skipped=self.skipped, calls=self.calls, cached=self.cached,
                         usage=self.usage, cost_usd=self.cost_usd, cost_unknown=self.cost_unknown)


def _citations_json(root: str, text: str) -> dict:
    """The cited locations of ``text`` resolved in ``root`` as JSON (resolving / not, with the items)."""
    from benchwright.core.agent.citations import resolve_citations

    return resolve_citations(Path(root), text).as_json()


def save_agent_outcome(store: Store, plan: AgentPlan, outcome: AgentOutcome, *, condition: str, by: str,
                       settings: AgentSettings) -> AgentAnswerOutcome:
    """Store one finished run in one transaction: its ``answer_runs`` row, and for an ok run the answer (source
    format ``agent``, the trajectory, extra: citations resolving / not, call ids, settings, repository). A failed
    run that replayed entirely from the cache to the same failure as the latest stored run adds no second row.

    Raises:
        BenchwrightError: the sample already has a different answer (another process stored one meanwhile).
    """
    pid, sample = outcome.qa_pair_id, outcome.sample_index
    repository = plan.repositories.get(pid)
    result = AgentAnswerOutcome(pid, sample, "ok" if outcome.ok else "failed", reason=outcome.reason,
                                outcome=outcome)
    common = dict(sample_index=sample, repository=repository, turns=len(outcome.turns),
                  trajectory=outcome.trajectory_json(), call_ids=outcome.call_ids,
                  input_tokens=outcome.usage.input_tokens, output_tokens=outcome.usage.output_tokens,
                  cost_usd=None if outcome.cost_unknown else outcome.cost_usd,
                  settings={**settings.as_json(), "sandbox_note": outcome.sandbox})
    with store.write():
        if outcome.ok:
            result.citations = _citations_json(plan.workspaces[pid], outcome.answer or "")
            extra = {"generated_by": "benchwright answers generate --agent", "repository": repository,
                     "citations": result.citations, "call_ids": outcome.call_ids, "settings": common["settings"],
                     "turns": len(outcome.turns), "tool_counts": outcome.tool_counts()}
            result.answer_id = store.add_generated_answer(
                pid, settings.model, condition, outcome.answer or "", extra=extra, by=by, sample_index=sample,
                trajectory=outcome.trajectory_json(), source_format=AGENT_SOURCE_FORMAT)
            run = store.record_answer_run(pid, settings.model, condition, status="ok", by=by,
                                          answer_id=result.answer_id, **common)
        else:
            reason = outcome.reason or "the run ended without an answer"
            result.reason = reason
            last = store.answer_runs(pid, settings.model, condition, sample, latest_only=True)
            if (outcome.calls == 0 and last and not last[-1].ok and last[-1].reason == reason
                    and last[-1].turns == len(outcome.turns)):
                result.run_id = last[-1].id
                return result
            run = store.record_answer_run(pid, settings.model, condition, status="failed", by=by, reason=reason,
                                          **common)
    result.run_id = run.id
    return result


def internal_error_reason(error: Exception) -> str:
    """The failed-run reason of an unexpected exception: ``internal error: TYPE: message (please report)``."""
    return f"internal error: {type(error).__name__}: {error} (please report)"


def _internal_failure(partial: AgentOutcome, error: Exception,
                      release: Callable[[], object]) -> AgentAnswerOutcome | AgentOutcome:
    """One (pair, sample) met an unexpected exception: the run fails with :func:`internal_error_reason`. When
    calls were made (paid), the outcome so far (its turns, the trajectory) goes back to be stored as a failed
    ``answer_runs`` row (the claim is released after saving); otherwise nothing is stored and the claim is released
    now."""
    partial.status, partial.reason, partial.answer = "failed", internal_error_reason(error), None
    if partial.calls:
        return partial
    release()
    return AgentAnswerOutcome(partial.qa_pair_id, partial.sample_index, "failed", reason=partial.reason,
                              outcome=partial)


async def run_agent_answers(store: Store, client: LLMClient, plan: AgentPlan, settings: AgentSettings, *,
                            condition: str, by: str, on_progress: Callable[[JobProgress], object] | None = None,
                            on_outcome: Callable[[AgentAnswerOutcome], object] | None = None) -> JobProgress:
    """Run the agent on every ``(pair, sample)`` of ``plan.targets`` (at most the provider's concurrency at once)
    in the folder the plan chose, and store each run as it finishes (:func:`save_agent_outcome`). Items another
    process holds (claims, as the judges) or answered meanwhile are skipped. Returns the final progress.

    Raises:
        asyncio.CancelledError: the run was cancelled (finished runs are stored; the turns of unfinished ones are
            in the ledger, so the next invocation resumes them).
        BenchwrightError: the agent sandbox is ``required`` and bubblewrap does not work here (before any run); a
            configuration error met by a run (LLMConfigError, a bad prompt override). Any other exception in one
            (pair, sample) is that item's failed run (:func:`internal_error_reason`); the others go on.
    """
    from benchwright.core.agent.loop import run_agent
    from benchwright.core.agent.sandbox import require_sandbox
    from benchwright.core.agent.workspace import Workspace

    require_sandbox(settings.sandbox)

    owner = claim_owner()
    work_key = f"agent:{condition}:{settings.model}"
    questions: dict[str, str] = {}

    def answered(pid: str, sample: int) -> bool:
        return bool(store.answers(pair_id=pid, model=settings.model, condition=condition, sample_index=sample))

    async def work(target: tuple[str, int]) -> AgentAnswerOutcome | AgentOutcome:
        pid, sample = target
        item = f"{pid}:{sample}"
        partial = AgentOutcome(qa_pair_id=pid, model=settings.model, sample_index=sample)
        if not store.claim(work_key, item, owner):
            return AgentAnswerOutcome(pid, sample, "skipped", reason="another run is answering it")
        try:
            if answered(pid, sample):
                store.release(work_key, item, owner)
                return AgentAnswerOutcome(pid, sample, "skipped", reason="answered meanwhile by another run")
            if pid not in questions:
                questions[pid] = build_input(store, pid, "checklist").question
            try:
                # The scope keeps each condition's draws apart in the cache (the first turn's messages are the
                # same under every condition).
                workspace = Workspace(Path(plan.workspaces[pid]), scope=f"{condition}:{plan.repositories[pid]}")
            except BenchwrightError as e:  # the folder went away since the plan: this pair only, nothing paid
                store.release(work_key, item, owner)
                return AgentAnswerOutcome(pid, sample, "failed", reason=f"not run: {e}")
            return await run_agent(client, workspace, questions[pid], settings, qa_pair_id=pid,
                                   sample_index=sample, purpose=AGENT_PURPOSE, outcome=partial)
        except BenchwrightError:  # a configuration error (LLMConfigError, a bad prompt override): every pair's
            store.release(work_key, item, owner)
            raise
        except Exception as e:  # a bug met by this pair only: a failed run, and the job goes on
            return _internal_failure(partial, e, lambda: store.release(work_key, item, owner))
        except BaseException:
            store.release(work_key, item, owner)
            raise

    results: dict[tuple[str, int], AgentAnswerOutcome] = {}

    def tally(result: AgentAnswerOutcome | AgentOutcome) -> ItemTally:
        if isinstance(result, AgentOutcome):
            result = AgentAnswerOutcome(result.qa_pair_id, result.sample_index,
                                        "ok" if result.ok else "failed", outcome=result)
        return result.tally()

    def save(target: tuple[str, int], result: AgentAnswerOutcome | AgentOutcome) -> None:
        if isinstance(result, AgentAnswerOutcome):  # skipped, or not run (nothing to store)
            results[target] = result
            return
        item = f"{target[0]}:{target[1]}"
        try:
            results[target] = save_agent_outcome(store, plan, result, condition=condition, by=by,
                                                 settings=settings)
        except BenchwrightError as e:  # e.g. another answer stored meanwhile outside the claims: keep going
            results[target] = AgentAnswerOutcome(target[0], target[1], "failed", reason=f"not stored: {e}",
                                                 outcome=result)
        finally:
            store.release(work_key, item, owner)

    def outcome_of(result: AgentAnswerOutcome | AgentOutcome) -> None:
        if on_outcome is not None:
            key = (result.qa_pair_id, result.sample_index)
            on_outcome(results[key])

    return await _run_and_store(client, plan.targets, work, tally, save, on_progress, outcome_of)
