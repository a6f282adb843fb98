"""The values an agent run produces (SWE-QA-Pro §3.1): its settings, every turn and tool use, and its outcome.

A trajectory is the list of :class:`Turn` values; :meth:`AgentOutcome.trajectory_json` is what
``answers.trajectory_json`` and ``answer_runs.trajectory_json`` store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..llm.base import Usage


@dataclass(frozen=True)
class AgentSettings:
    """How an agent runs. Defaults are SWE-QA-Pro's (§3.1 "Agent setup": temperature 0, at most 25 turns, a 32k
    context); the output caps and the command timeout are ours (the paper is silent), configurable in
    ``[agent]`` of benchwright.toml.

    Attributes:
        model: the answering model.
        params: sampling parameters sent with every turn (``temperature`` 0 unless the role sets one).
        max_turns: model calls at most; a run that reaches it without Finish fails (``turn limit``).
        context_tokens: the context budget in tokens (estimated at 4 characters a token): when the conversation
            would exceed it, the oldest tool outputs are elided first, and each elision is recorded in its turn.
        tool_output_chars: at most this many characters of one tool's output go back to the model (the rest is
            cut, and the cut says how much).
        search_max_hits: Search lists at most this many matching lines.
        max_tool_calls_per_turn: a turn runs at most this many tool calls (Finish aside); the rest get a "not run"
            result saying so (ours: one reply could otherwise ask for thousands of commands).
        command_timeout_s: a CommandLine command is killed after this many seconds.
        project_dir: the project folder (prompt overrides in ``prompts/``), or None.
        sandbox: the CommandLine sandbox mode (``[agent] sandbox``: ``auto``, ``required`` or ``off``;
            ``$BENCHWRIGHT_AGENT_SANDBOX`` wins; None: ``auto``), see :mod:`benchwright.core.agent.sandbox`.
    """

    model: str
    params: dict = field(default_factory=lambda: {"temperature": 0})
    max_turns: int = 25
    context_tokens: int = 32_000
    tool_output_chars: int = 8_000
    search_max_hits: int = 50
    max_tool_calls_per_turn: int = 16
    command_timeout_s: float = 10.0
    project_dir: Any = None
    sandbox: str | None = None

    def as_json(self) -> dict:
        """The settings as stored in ``answer_runs.settings_json`` (no project folder)."""
        d = asdict(self)
        d.pop("project_dir", None)
        return d


@dataclass
class ToolUse:
    """One tool call and its result.

    Attributes:
        call_id, name, arguments: the call as the model made it (``arguments_raw`` when they did not parse).
        output: the text sent back to the model when the call was made (already capped); kept whole in the
            trajectory even after it was elided from later turns' context (see ``elided_at_turn``).
        ok: False when the call was refused or failed (unknown tool, bad arguments, a path outside the
            workspace, a command not allowed, a timeout); ``output`` then says why.
        truncated: the output was cut at ``tool_output_chars`` (or the command's own cap).
        elided_at_turn: the turn at which this output was elided from the context to fit the budget, or None.
    """

    call_id: str
    name: str
    arguments: dict
    output: str
    ok: bool = True
    truncated: bool = False
    arguments_raw: str | None = None
    elided_at_turn: int | None = None


@dataclass
class Turn:
    """One model call of a run: what the model said, the tools it called and what they returned.

    Attributes:
        index: 1-based turn number.
        text: the model's text this turn (its reasoning, or the final answer on the Finish turn).
        tool_uses: the tool calls and their results, in call order.
        usage: token counts of the call; cached: it came from the ledger (a resumed run).
        call_ids: ledger ids of the call.
        elided: earlier tool outputs elided before this turn was sent (to fit the budget), each as
            ``TURN:CALL_ID`` (the turn that made the call and its id: ids repeat across turns in the prompt
            protocol).
        context_tokens: the estimated size of the conversation sent this turn.
    """

    index: int
    text: str = ""
    tool_uses: list[ToolUse] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    call_ids: list[int] = field(default_factory=list)
    elided: list[str] = field(default_factory=list)
    context_tokens: int = 0

    def as_json(self) -> dict:
        """The turn as stored in a trajectory (usage as a dict)."""
        d = asdict(self)
        d["usage"] = asdict(self.usage)
        return d


@dataclass
class AgentOutcome:
    """The result of one run.

    Attributes:
        qa_pair_id, model, sample_index: what was run.
        status: ``ok`` (``answer`` holds the final answer from Finish) or ``failed`` (``reason`` says why:
            ``turn limit reached (25) without Finish``, ``no parseable Finish block``, ``provider error: ...``,
            ``truncated: ...``, ``refused: ...``). A failed run never has an answer.
        turns: the trajectory.
        usage, cost_usd, calls: totals over the run (calls made now; cached turns cost 0).
        cost_unknown: calls whose cost is unknown (no price or no usage).
        call_ids: ledger ids of every turn's call.
        sandbox: how the run's commands were confined (:data:`benchwright.core.agent.sandbox.SANDBOXED`, or a
            ``not sandboxed (...)`` note saying they ran unconfined); "" before the run began.
    """

    qa_pair_id: str
    model: str
    sample_index: int = 0
    status: str = "failed"
    answer: str | None = None
    reason: str | None = None
    turns: list[Turn] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    calls: int = 0
    cost_unknown: int = 0
    call_ids: list[int] = field(default_factory=list)
    sandbox: str = ""

    @property
    def ok(self) -> bool:
        """True when the run finished with an answer."""
        return self.status == "ok"

    def trajectory_json(self) -> list[dict]:
        """Every turn as JSON (``answers.trajectory_json``, ``answer_runs.trajectory_json``)."""
        return [t.as_json() for t in self.turns]

    def tool_counts(self) -> dict[str, int]:
        """How many times each tool was called in the run (SWE-QA-Pro Figure 4)."""
        counts: dict[str, int] = {}
        for t in self.turns:
            for u in t.tool_uses:
                counts[u.name] = counts.get(u.name, 0) + 1
        return counts
