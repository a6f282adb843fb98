"""Helpers of the store tests: pairs as the importers make them, imports, and a labelled queue.

A module with a unique name (not conftest) so test modules can import it whatever else is collected."""

from __future__ import annotations

import json
from pathlib import Path

from benchwright.core.errors import ImportReport, InputProblem
from benchwright.core.importers import ParseResult
from benchwright.core.models import QAPair, Repository, SourceRef, qa_pair_id
from benchwright.db import Store

ALICE = "alice"
BOB = "bob"


def make_pair(
    question: str, answer: str | None = "An answer.", *, repository: str | None = "flask",
    qa_type: str | None = None, category: str | None = None, line: int = 1, extra: dict | None = None,
) -> QAPair:
    """A valid pair with the content-hash id the importers would give it."""
    return QAPair(
        id=qa_pair_id(repository, question, answer), repository=repository, question=question,
        reference_answer=answer, qa_type=qa_type, category=category,
        source=SourceRef(format="jsonl", file="input.jsonl", line=line, upstream_id=f"u{line}"),
        extra=extra or {},
    )


def import_pairs(
    store: Store, folder: Path, pairs: list[QAPair], *, repositories: tuple[Repository, ...] = (),
    problems: tuple[InputProblem, ...] = (), read: int | None = None, skip_invalid: bool = False,
    name: str = "input.jsonl", annotator: str = ALICE, repository: str | None = None,
) -> ImportReport:
    """Apply a ParseResult made of ``pairs`` as if the importer had read them from ``folder/name``."""
    f = folder / name
    f.write_text("\n".join(json.dumps({"id": p.id}) for p in pairs) or "{}\n", encoding="utf-8")
    result = ParseResult(
        "jsonl", str(f), read=len(pairs) + len(problems) if read is None else read, pairs=list(pairs),
        problems=list(problems), repositories=list(repositories),
    )
    return store.apply_import(
        result, annotator=annotator, file_path=f, skip_invalid=skip_invalid, repository=repository
    )


FLASK = Repository(name="flask", url="https://github.com/pallets/flask", version_label="3.1.1")
CLICK = Repository(name="click", version_label="8.1.7")

# The queue of the `loaded` fixture, in import order (ordinals 1..8).
QUEUE = [
    make_pair("What does ensure_ascii control?", "See src/flask/json/provider.py (lines 144-148).",
              qa_type="What", category="Implementation Details", line=1),
    make_pair("Why is 100% coverage required?", "Because of CI.", qa_type="Why",
              category="Project Architecture", line=2),
    make_pair("What is 100 percent of nothing?", "Nothing.", qa_type="What", category="Business Logic", line=3),
    make_pair("How does snake_case naming work?", "By convention.", qa_type="How",
              category="Implementation Details", line=4),
    make_pair("How does snakeXcase naming work?", "It does not.", qa_type="How",
              category="Implementation Details", line=5),
    make_pair("Where is the click entry point?", "In src/click/core.py.", repository="click", qa_type="Where",
              category="Project Architecture", line=6),
    make_pair("Which file holds C:\\paths handling?", None, qa_type="Where", line=7),
    make_pair("What does ENSURE_ASCII mean in upper case?", "The answer mentions Unicode.", qa_type="What",
              category="Business Logic", line=8),
]
IDS = [p.id for p in QUEUE]
