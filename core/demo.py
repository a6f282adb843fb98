"""The bundled demo: Q&A pairs the team wrote about click, a library benchwright installs.

The sample (``samples/demo_click.jsonl``) cites click's files with line anchors written as
``{{line:FILE:PREFIX}}``; :func:`prepare_demo_sample` replaces each with the line number of the first line
of FILE that starts with PREFIX in the click installed here, so the evidence view opens at the right line
whatever click version is installed (an anchor that is not found becomes a bare path).
"""

from __future__ import annotations

import json
import re
from importlib import metadata, resources
from pathlib import Path

from .checklist import Checklist
from .models import Repository

DEMO_REPOSITORY = "click"
_ANCHOR = re.compile(r"(?P<file>[\w./-]+):\{\{line:(?P=file):(?P<prefix>[^}]*)\}\}")


def click_source_root() -> Path:
    """The folder of the installed ``click`` package (the demo's repository root)."""
    import click

    return Path(click.__file__).resolve().parent


def demo_repository() -> Repository:
    """The click repository record: local package folder, version label from the installed distribution."""
    return Repository(
        name=DEMO_REPOSITORY,
        url="https://github.com/pallets/click",
        version_label=metadata.version("click"),
        local_path=str(click_source_root()),
        language="Python",
        theme="CLI Framework",
    )


def _line_of(root: Path, file: str, prefix: str, cache: dict[str, list[str]]) -> int | None:
    if file not in cache:
        try:
            cache[file] = (root / file).read_text(encoding="utf-8").splitlines()
        except OSError:
            cache[file] = []
    for number, line in enumerate(cache[file], start=1):
        if line.startswith(prefix):
            return number
    return None


def resolve_anchors(text: str, root: Path) -> str:
    """``text`` with every ``FILE:{{line:FILE:PREFIX}}`` anchor replaced by ``FILE:LINE`` (or ``FILE``)."""
    cache: dict[str, list[str]] = {}

    def sub(m: re.Match) -> str:
        line = _line_of(root, m.group("file"), m.group("prefix"), cache)
        return f"{m.group('file')}:{line}" if line else m.group("file")

    return _ANCHOR.sub(sub, text)


def prepare_demo_sample(dest: Path) -> Path:
    """Write the demo sample with anchors resolved to ``dest`` (a JSONL file) and return ``dest``.

    Raises:
        OSError: ``dest`` cannot be written.
    """
    raw = resources.files("benchwright.core").joinpath("samples/demo_click.jsonl").read_text(encoding="utf-8")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(resolve_anchors(raw, click_source_root()), encoding="utf-8")
    return dest


def demo_checklists() -> list[tuple[str, Checklist]]:
    """``(question prefix, checklist)`` pairs: generated checklists shipped with the demo (one breaks the
    weight rule on purpose, so the demo shows a draft to fix)."""
    raw = resources.files("benchwright.core").joinpath("samples/demo_click_checklists.jsonl").read_text(encoding="utf-8")
    out = []
    for line in raw.splitlines():
        if line.strip():
            record = json.loads(line)
            out.append((record["question_startswith"], Checklist.model_validate({"items": record["items"]})))
    return out


DEMO_MAPPING = (
    "question=question", "answer=answer", "qa_type=qa_type", "qa_subtype=qa_subtype", "category=category",
    "theme=theme", "language=language",
)
"""``--map`` items that read the sample through the generic ``jsonl`` importer."""


def demo_answers() -> list[dict]:
    """Sample answers with sample judgments for the demo's judge inspector, written by the benchwright team:
    records ``{question_startswith, model, condition, answer, judgments: [{judge, judge_model, run_index,
    entries}], failure_mode?: {mode, rationale}}``. The runs of one answer disagree on one item on purpose."""
    raw = resources.files("benchwright.core").joinpath("samples/demo_click_answers.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]
