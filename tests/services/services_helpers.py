"""Helpers of the services tests (a module with a unique name, not conftest, so tests can import it)."""

from __future__ import annotations

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item


def checklist(key_point: str = "Names the module") -> Checklist:
    """A valid checklist (5 + 4 + clarity)."""
    return Checklist(items=[
        ChecklistItem(key_point=key_point, weight=5, rubric=binary_rubric(5)),
        ChecklistItem(key_point="Explains the order", weight=4, rubric=binary_rubric(4)),
        clarity_item(),
    ])
