"""Versioned prompt templates: files in the package (``core/prompts/ID.md``), overridable per project.

A project overrides template ``ID`` by putting ``prompts/ID.md`` next to its project file. Templates use
``string.Template`` placeholders (``$question``, ``${reference_answer}``); every placeholder must be given.
The template's SHA-256 goes into the ledger, so a changed prompt is a different request (no stale cache).
Untrusted text (questions, answers, pages) is passed through :func:`delimit` so it cannot pose as
instructions.
"""

from __future__ import annotations

import functools
import hashlib
import re
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import BenchwrightError

PROJECT_PROMPTS_DIR = "prompts"


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template.

    Attributes:
        id: the template id (file stem), e.g. ``classify``.
        text: the template text.
        sha256: hex digest of ``text`` (recorded in the ledger as the template hash).
        origin: ``package`` or the overriding file's path.
    """

    id: str
    text: str
    sha256: str
    origin: str

    def render(self, **values: str) -> str:
        """The template with every placeholder filled.

        Raises:
            BenchwrightError: a placeholder has no value (names the template and the placeholder).
        """
        try:
            return string.Template(self.text).substitute(values)
        except KeyError as e:
            raise BenchwrightError(f"prompt template {self.id} ({self.origin}): no value for ${e.args[0]}") from None
        except ValueError as e:
            raise BenchwrightError(f"prompt template {self.id} ({self.origin}): {e}") from None


def load_template(template_id: str, project_dir: str | Path | None = None) -> PromptTemplate:
    """Template ``template_id``: the project's override if there is one, else the packaged one.

    Raises:
        BenchwrightError: no such template (lists the known ones), or the override is not UTF-8.
    """
    if project_dir is not None:
        override = Path(project_dir) / PROJECT_PROMPTS_DIR / f"{template_id}.md"
        if override.is_file():
            try:
                text = override.read_text(encoding="utf-8")
            except UnicodeDecodeError as e:
                raise BenchwrightError(f"{override}: not UTF-8 text (byte {e.start})") from None
            return PromptTemplate(template_id, text, _sha(text), str(override))
    return _packaged_template(template_id)


@functools.cache
def _packaged_template(template_id: str) -> PromptTemplate:
    """The packaged template, read once per process (a step renders it for every pair; the package's files do not
    change under a running process, a project's overrides are read each time)."""
    res = resources.files("benchwright.core").joinpath("prompts", f"{template_id}.md")
    if not res.is_file():
        raise BenchwrightError(f"no prompt template {template_id!r}; known: {', '.join(template_ids())}")
    text = res.read_text(encoding="utf-8")
    return PromptTemplate(template_id, text, _sha(text), "package")


def template_ids() -> list[str]:
    """Ids of the packaged templates."""
    folder = resources.files("benchwright.core").joinpath("prompts")
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))


DATA_TAGS = ("question", "answer", "answer_a", "answer_b", "candidate_answer", "reference_answer", "checklist",
             "code", "judge_scores", "page", "rubric", "summaries", "member", "subtopic", "documentation",
             "gold_answer")
"""Tags that delimit data in benchwright's prompts; their tags inside data are defused by :func:`delimit`."""
_DATA_TAG = re.compile(r"<(/?)(" + "|".join(sorted(DATA_TAGS, key=len, reverse=True)) + r")>", re.I)


def delimit(tag: str, text: str | None) -> str:
    """``text`` between ``<tag>`` and ``</tag>``, with every data tag inside it (opening or closing, any of
    :data:`DATA_TAGS`) defused as ``<\\/tag>`` / ``<\\tag>``, so data can neither end its block early nor
    fake another block and pose as instructions."""
    body = _DATA_TAG.sub(lambda m: f"<\\{m.group(1)}{m.group(2)}>", text or "")
    return f"<{tag}>\n{body}\n</{tag}>"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
