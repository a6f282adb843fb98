"""The curation-step registry: the pipeline of RepoProbe §3.2 (figure 2), every step declared once.

A :class:`StepSpec` names a step, describes it for help texts and screens, says which configured role runs it
(``[roles.NAME]`` in benchwright.toml), which prompt templates it uses and what it writes; its coroutine
(``run``) is attached by :mod:`benchwright.core.curation`, where the LLM code lives, so this module is cheap to
import (the store checks step names on write against it). Registration order is the pipeline's order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .registry import Attribute, Names, Registry


@dataclass(frozen=True)
class StepSpec:
    """One curation step.

    Attributes:
        name: the stored name (``curation_results.step``) and the CLI's choice (``generate STEP``).
        title: its title on screens (``Classify``).
        description: what it does, for help texts and screens.
        role: the configured role that runs it (``generator`` or ``verifier``); None for a step that calls no
            model (``images``: a deterministic rule, :mod:`benchwright.core.images`).
        template_ids: the prompt templates it uses (``core/prompts/ID.md``).
        writes: what its ``ok`` result holds (the shape is in :mod:`benchwright.core.curation`'s docstring).
        run: the coroutine function ``(client, PairInput, StepSettings) -> StepOutcome`` (attached by
            :mod:`benchwright.core.curation`; None until then).
        gating: True for a step that drops pairs (RepoProbe §3.2: the image filter, relevance classification and
            the verifier): a pair whose current result of a gating step is flagged is *dropped* by that step,
            and later steps leave it alone unless asked (``--all``). Rewriting steps only flag (``enrich``: an
            unresolved link is reported, the verifier's link check drops it).
    """

    name: str
    title: str
    description: str
    role: str | None
    template_ids: tuple[str, ...]
    writes: str
    run: Callable[..., Any] | None = None
    gating: bool = False

    @property
    def label(self) -> str:
        """``Title (description)``, as screens list the steps."""
        return f"{self.title} ({self.description})"


STEP_REGISTRY: Registry[StepSpec] = Registry("step")
"""The curation steps in pipeline order (RepoProbe §3.2, figure 2)."""


def register_step(spec: StepSpec) -> StepSpec:
    """Register a curation step (after the others in the pipeline).

    Raises:
        ValueError: the name is taken.
    """
    return STEP_REGISTRY.register(spec)


for _s in (
    StepSpec("images", "Images", "drop pairs that rely on an image", None, (),
             "the image the question or answer relies on; flagged (dropped) when there is one", gating=True),
    StepSpec("classify", "Classify", "code-understanding relevance, category", "generator", ("classify",),
             "relevance, category and rationale; flagged when not code-understanding relevant", gating=True),
    StepSpec("enrich", "Enrich", "resolve and integrate external links", "generator",
             ("link_summary", "integrate_links"),
             "each link's status and summary, and the text with relevant summaries integrated"),
    StepSpec("refine", "Refine", "self-contained rewrite", "generator", ("refine",),
             "the rewritten question and answer, the changes, and the originals"),
    StepSpec("checklist", "Checklist", "generate under RepoProbe §4.1", "generator", ("checklist",),
             "a checklist valid under RepoProbe §4.1 (a new checklist version)"),
    StepSpec("verify", "Verify", "self-contained, answerable", "verifier", ("verify",),
             "the two checks with rationales; flagged when either fails", gating=True),
):
    register_step(_s)
del _s

STEPS = Names(STEP_REGISTRY)
"""The step names in pipeline order (a live view of the registry)."""

STEP_ROLES = Attribute(STEP_REGISTRY, "role")
"""Step -> the configured role (``[roles.NAME]`` in benchwright.toml) that runs it."""

STEP_LABELS = Attribute(STEP_REGISTRY, "label")
"""Step -> its label on screens."""


def gating_steps() -> tuple[str, ...]:
    """The gating steps in pipeline order (``images``, ``classify``, ``verify``): see :attr:`StepSpec.gating`."""
    return tuple(s.name for s in STEP_REGISTRY if s.gating)


def gating_steps_before(step: str) -> tuple[str, ...]:
    """The gating steps that come before ``step`` in the pipeline (a run of ``step`` skips pairs they dropped).

    Raises:
        UnknownNameError: unknown step.
    """
    STEP_REGISTRY.get(step)
    names = list(STEPS)
    return tuple(g for g in gating_steps() if names.index(g) < names.index(step))

__all__ = ["STEPS", "STEP_LABELS", "STEP_REGISTRY", "STEP_ROLES", "StepSpec", "gating_steps", "gating_steps_before",
           "register_step"]
