"""Answer-first task generation (Code-QA-Bench "Methodology" 3 and 4): from a scored documentation chunk
(:mod:`benchwright.core.doc_chunks`) to a gold answer, its code-only audit, and the question derived from it.

The steps, each on one chunk under one task set (:data:`~benchwright.core.vocabulary.TASK_SETS`):

- ``gold``, code-derivable: the agent (:func:`benchwright.core.agent.loop.run_agent`, template ``gold_agent``)
  explores the documented repository from the chunk and writes a gold answer that goes at least one level deeper
  than the chunk and holds facts not in it; output ``{"answer", "turns", "tool_counts"}``, the trajectory kept
  apart (:attr:`GenerationOutcome.trajectory`).
- ``gold``, doc-dependent (Methodology 4): one call (``gold_doc``) writes the gold answer from the chunk alone;
  output ``{"answer", "key_points"}``. No agent, no audit.
- ``audit`` (code-derivable only): one call (``gold_audit``) checks each claim of the gold answer against the
  files it cites in the code-only copy (:mod:`benchwright.core.strip`): ``code-recoverable`` or
  ``documentation-only``, with evidence; documentation-only claims are removed or rewritten. Output
  ``{"claims": [{"claim", "verdict", "evidence", "rewrite"}], "answer", "original_answer", "removed",
  "rewritten"}``; flagged when nothing of the answer is left.
- ``question``: one call (``gold_question``) derives the question from the verified gold answer (the audit's
  ``answer``, or the doc-dependent gold answer), with the answer's key points; output ``{"question",
  "key_points", "answer"}``. The caller makes the Q&A pair of it.

Steps never touch the store; :mod:`benchwright.tui.services.generation` reads inputs and saves outcomes. Every
call goes through :class:`~benchwright.core.llm.client.LLMClient` (ledger, cache, schema validation, one repair
turn), so a rerun of a finished step makes no call. The JSON Schemas suit OpenAI strict structured output and
Anthropic (every property required, no additional properties).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .curation import SYSTEM, StepOutcome, StepSettings, _fail, _obj, _request
from .doc_chunks import DocChunk
from .llm.client import LLMClient
from .llm.prompts import delimit
from .vocabulary import TASK_SET_REGISTRY

CODE_DERIVABLE = TASK_SET_REGISTRY.get("code-derivable").name
"""The task set of pairs whose gold answer the audit verified recoverable from the code (a name of
:data:`~benchwright.core.vocabulary.TASK_SETS`)."""
DOC_DEPENDENT = TASK_SET_REGISTRY.get("doc-dependent").name
"""The task set of pairs whose gold answer was written from the documentation alone (Methodology 4)."""
GENERATION_TASK_SETS = (CODE_DERIVABLE, DOC_DEPENDENT)

GENERATION_STEPS = ("gold", "audit", "question")
"""The steps in order."""
GENERATION_ROLES = {"gold": "generator", "audit": "verifier", "question": "generator"}
"""Step -> the configured role (``[roles.NAME]`` in benchwright.toml) that runs it."""
VERDICTS = ("code-recoverable", "documentation-only")
"""An audited claim's verdict."""
GOLD_AGENT_TEMPLATE = "gold_agent"
PURPOSE_PREFIX = "generate:"
"""Ledger purposes are ``generate:gold``, ``generate:audit``, ``generate:question``."""

_STR = {"type": "string"}
_POINTS = {"type": "array", "items": _STR, "minItems": 1, "maxItems": 8}
GOLD_DOC_SCHEMA = _obj({"answer": _STR, "key_points": _POINTS})
AUDIT_SCHEMA = _obj({
    "claims": {"type": "array", "items": _obj({"claim": _STR, "verdict": {"type": "string", "enum": list(VERDICTS)},
                                                "evidence": _STR, "rewrite": _STR})},
    "answer": _STR,
})
QUESTION_SCHEMA = _obj({"question": _STR, "key_points": _POINTS})


class GenerationStepError(ValueError):
    """A step asked of a task set it does not belong to (``audit`` of the doc-dependent path)."""


def steps_of(task_set: str) -> tuple[str, ...]:
    """The steps a task set goes through: code-derivable gold, audit, question; doc-dependent gold, question.

    Raises:
        GenerationStepError: unknown task set.
    """
    if task_set == CODE_DERIVABLE:
        return GENERATION_STEPS
    if task_set == DOC_DEPENDENT:
        return ("gold", "question")
    raise GenerationStepError(f"unknown task set {task_set!r}; expected {' or '.join(GENERATION_TASK_SETS)}")


def previous_step(step: str, task_set: str) -> str | None:
    """The step whose ok result ``step`` reads (None for ``gold``).

    Raises:
        GenerationStepError: ``step`` is not a step of ``task_set``.
    """
    steps = steps_of(task_set)
    if step not in steps:
        raise GenerationStepError(f"{step} is not a step of the {task_set} path (its steps: {', '.join(steps)})")
    i = steps.index(step)
    return steps[i - 1] if i else None


@dataclass(frozen=True)
class ChunkInput:
    """What a step reads about one chunk.

    Attributes:
        chunk: the documentation chunk.
        task_set: ``code-derivable`` or ``doc-dependent``.
        gold: the answer the step reads: the gold answer (``audit``), the verified answer (``question``); "" for
            ``gold``.
        code: the cited files of the code-only copy (``audit``), or "" (not part of the input hash).
    """

    chunk: DocChunk
    task_set: str
    gold: str = ""
    code: str = ""

    def input_hash(self, step: str) -> str:
        """SHA-256 (hex, 16 digits) of what ``step`` reads: the chunk's id and text, the task set, and the
        answer it starts from. A stored result whose input hash is another is stale."""
        parts = [step, self.task_set, self.chunk.id, self.chunk.text, self.gold]
        return hashlib.sha256("\x1e".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass
class GenerationOutcome(StepOutcome):
    """A :class:`~benchwright.core.curation.StepOutcome` with the agent's trajectory (code-derivable ``gold``)."""

    trajectory: list | None = field(default=None, kw_only=True)


PASSAGE_CHARS = 20_000
"""At most this many characters of a chunk go to the model (the rest is cut, and the cut says so)."""


def chunk_passage(chunk: DocChunk) -> str:
    """The chunk as the prompts show it: where it is, then its text (at most :data:`PASSAGE_CHARS` characters),
    delimited as ``documentation``."""
    where = f"{chunk.path}, lines {chunk.start_line}-{chunk.end_line} ({chunk.kind}: {chunk.title[:300]})"
    text = chunk.text
    if len(text) > PASSAGE_CHARS:
        text = text[:PASSAGE_CHARS] + f"\n[passage cut: {len(chunk.text) - PASSAGE_CHARS:,} more characters]"
    return delimit("documentation", f"{where}\n\n{text}")


def gold_task(chunk: DocChunk) -> str:
    """The agent's first turn for a code-derivable gold answer: the chunk as data, and what to do with it."""
    return ("Here is a passage of this repository's documentation. Explore the code it describes and write the "
            "gold answer, going at least one level deeper than the passage, with facts it does not state.\n\n"
            + chunk_passage(chunk))


def _outcome(step: str, template_hash: str | None = None) -> GenerationOutcome:
    return GenerationOutcome(step, "ok", template_hash=template_hash)


async def _one_call(client: LLMClient, item: ChunkInput, settings: StepSettings, step: str, template_id: str,
                    schema: dict, **values: str):
    req = _request(template_id, settings, schema, f"{step}_output", repository=item.chunk.repository, **values)
    out = _outcome(step, req.template_hash)
    r = await client.call(req, force=settings.force, purpose=PURPOSE_PREFIX + step)
    out.add(r)
    if not r.ok:
        _fail(out, r, step)
    return out, r


async def gold_from_documentation(client: LLMClient, item: ChunkInput, settings: StepSettings) -> GenerationOutcome:
    """The doc-dependent gold answer (Code-QA-Bench "Methodology" 4): written from the chunk alone, one call."""
    out, r = await _one_call(client, item, settings, "gold", "gold_doc", GOLD_DOC_SCHEMA,
                             documentation=chunk_passage(item.chunk))
    if out.ok:
        out.output = {"answer": r.parsed["answer"], "key_points": list(r.parsed["key_points"])}
        out.flagged = not r.parsed["answer"].strip()
    return out


async def gold_by_agent(client: LLMClient, workspace, item: ChunkInput, settings) -> GenerationOutcome:
    """The code-derivable gold answer (Code-QA-Bench "Methodology" 3, step 2): the agent explores ``workspace``
    (the documented repository, read-only) from the chunk. ``settings`` is an
    :class:`~benchwright.core.agent.model.AgentSettings`; ``force`` is not offered (the agent's turns are cached
    by request and sample, as for agent answers).

    Raises:
        BenchwrightError: a bad prompt override; LLMConfigError: a misconfigured provider.
    """
    from .agent.loop import run_agent

    agent = await run_agent(client, workspace, "", settings, qa_pair_id=None, purpose=PURPOSE_PREFIX + "gold",
                            template_id=GOLD_AGENT_TEMPLATE, task=gold_task(item.chunk))
    out = _outcome("gold")
    out.call_ids, out.calls, out.usage = list(agent.call_ids), agent.calls, agent.usage
    out.cached = sum(1 for t in agent.turns if t.cached)
    out.cost_usd, out.cost_unknown, out.model = agent.cost_usd, agent.cost_unknown, settings.model
    out.trajectory = agent.trajectory_json()
    if not agent.ok:
        out.status, out.reason = "failed", f"gold: {agent.reason}"
        return out
    out.output = {"answer": agent.answer or "", "turns": len(agent.turns), "tool_counts": agent.tool_counts()}
    return out


async def audit(client: LLMClient, item: ChunkInput, settings: StepSettings) -> GenerationOutcome:
    """The code-only audit (Code-QA-Bench "Methodology" 3, step 3) of ``item.gold`` against ``item.code``.

    The verified answer is the model's ``answer``; ``removed`` counts documentation-only claims with an empty
    rewrite, ``rewritten`` those with one. Flagged when the verified answer is empty (nothing code-recoverable)."""
    out, r = await _one_call(client, item, settings, "audit", "gold_audit", AUDIT_SCHEMA,
                             documentation=chunk_passage(item.chunk), gold_answer=delimit("gold_answer", item.gold),
                             code=delimit("code", item.code or "(the answer cites no file of the code-only copy)"))
    if not out.ok:
        return out
    claims = [dict(c) for c in r.parsed["claims"]]
    doc_only = [c for c in claims if c["verdict"] == "documentation-only"]
    out.output = {"claims": claims, "answer": r.parsed["answer"], "original_answer": item.gold,
                  "removed": sum(1 for c in doc_only if not c["rewrite"].strip()),
                  "rewritten": sum(1 for c in doc_only if c["rewrite"].strip())}
    out.flagged = not r.parsed["answer"].strip()
    return out


async def derive_question(client: LLMClient, item: ChunkInput, settings: StepSettings) -> GenerationOutcome:
    """The question derived from the verified gold answer (Code-QA-Bench "Methodology" 3, step 4), with the
    answer's key points (the 0-5 judge's rubric, ``extra["gold_key_points"]``)."""
    out, r = await _one_call(client, item, settings, "question", "gold_question", QUESTION_SCHEMA,
                             gold_answer=delimit("gold_answer", item.gold))
    if out.ok:
        out.output = {"question": r.parsed["question"].strip(), "key_points": list(r.parsed["key_points"]),
                      "answer": item.gold}
        out.flagged = not out.output["question"]
    return out


def code_only_files(root: str | Path | None, text: str, *, limit_chars: int = 16_000) -> str:
    """The files of the code-only copy at ``root`` that ``text`` cites, whole and numbered, at most
    ``limit_chars`` characters (the copy's lines may differ from the documented repository's, so cited line
    ranges are not cut out); "" without a copy."""
    from .evidence import gather_evidence
    from .repository import read_repository_file

    if root is None:
        return ""
    parts: list[str] = []
    used = 0
    seen: set[str] = set()
    for ev in gather_evidence(root, text):
        if not ev.openable or ev.path in seen:
            continue
        seen.add(ev.path)
        try:
            lines = read_repository_file(root, ev.path).splitlines()
        except Exception:  # unreadable, or stripped away: the auditor sees less
            continue
        block = f"--- {ev.path}\n" + "\n".join(f"{n:>5} {line}" for n, line in enumerate(lines, 1)) + "\n"
        if used + len(block) > limit_chars:
            block = block[: max(0, limit_chars - used)] + "\n[cut]\n"
        parts.append(block)
        used += len(block)
        if used >= limit_chars:
            break
    return "".join(parts)


__all__ = ["AUDIT_SCHEMA", "CODE_DERIVABLE", "DOC_DEPENDENT", "GENERATION_ROLES", "GENERATION_STEPS",
           "GENERATION_TASK_SETS", "GOLD_DOC_SCHEMA", "QUESTION_SCHEMA", "SYSTEM", "VERDICTS", "ChunkInput",
           "GenerationOutcome", "GenerationStepError", "audit", "chunk_passage", "code_only_files", "derive_question",
           "gold_by_agent", "gold_from_documentation", "gold_task", "previous_step", "steps_of"]
