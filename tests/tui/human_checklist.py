"""The checklist the human-judgment tests score against (a module with a unique name, not conftest, so test
modules can import it): item 1 of weight 5 allows 0, 3 and 5 and its key point holds markup-like text; item 2 is
binary of weight 4; item 3 is the clarity item."""

from __future__ import annotations

from benchwright.core.checklist import (
    Checklist,
    ChecklistItem,
    ItemKind,
    RubricTier,
    binary_rubric,
    clarity_item,
)


def three_item_checklist(first: str = "Names [red]app.py[/red]") -> Checklist:
    """Items 1 (``first``, 0/3/5), 2 (``Explains the flow``, 0/4) and the clarity item (0/1)."""
    return Checklist(items=[
        ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point=first, weight=5,
                      rubric=[RubricTier(score=s, criterion=f"criterion {s}") for s in (0, 3, 5)]),
        ChecklistItem(kind=ItemKind.KNOWLEDGE, key_point="Explains the flow", weight=4, rubric=binary_rubric(4)),
        clarity_item(),
    ])
