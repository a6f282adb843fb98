"""A model answering inside a pinned repository: the read-only agent of SWE-QA-Pro §3.1.

- :mod:`.workspace`: the repository as a read-only workspace (no path outside it, nothing writable).
- :mod:`.tools`: the tools Search, View, CommandLine and Finish (JSON-Schema specs and their implementations).
- :mod:`.loop`: the ReAct loop (:func:`run_agent`) with its turn limit and context budget.
- :mod:`.citations`: the locations a final answer cites, resolved and counted (:func:`resolve_citations`).
- :mod:`.model`: the values a run produces (:class:`AgentSettings`, :class:`AgentOutcome`, :class:`Turn`).
"""

from .model import AgentOutcome, AgentSettings, ToolUse, Turn

__all__ = ["AgentOutcome", "AgentSettings", "CitationCount", "ToolUse", "Turn", "Workspace", "resolve_citations",
           "run_agent"]


def __getattr__(name: str):
    if name == "run_agent":
        from .loop import run_agent

        return run_agent
    if name in ("CitationCount", "resolve_citations"):
        from . import citations

        return getattr(citations, name)
    if name == "Workspace":
        from .workspace import Workspace

        return Workspace
    raise AttributeError(name)
