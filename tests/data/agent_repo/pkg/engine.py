"""The engine: tasks in order."""

from __future__ import annotations

from .util import normalize


class Engine:
    """Runs registered tasks in the order they were added."""

    def __init__(self) -> None:
        self.tasks = []

    def add(self, name: str, task) -> None:
        """Register ``task`` under ``name``."""
        self.tasks.append((normalize(name), task))

    def run(self) -> list:
        """Run every task; return their results in order."""
        return [task() for _, task in self.tasks]


def run_all(tasks) -> list:
    """Run ``tasks`` with a fresh engine."""
    engine = Engine()
    for i, task in enumerate(tasks):
        engine.add(f"task-{i}", task)
    return engine.run()
