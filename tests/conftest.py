"""Test-run policy shared by every layer.

Tests marked ``slow`` (real subprocesses killed at every step, C++ probe builds, one full-app walk per hostile
markup string: about three minutes together) run in CI, where ``CI`` is set (``.ci/run`` sets it), and whenever
asked for: ``-m slow``, or ``BENCHWRIGHT_RUN_SLOW=1``. Elsewhere they are skipped with that reason, so the
README's test line stays well under ten minutes on a developer's machine. Benchmarks (``perf``) never run by
default (``-m perf``).
"""

from __future__ import annotations

import os

import pytest


def slow_tests_wanted(config: pytest.Config) -> bool:
    """True in CI, with ``BENCHWRIGHT_RUN_SLOW`` set, or when ``-m`` names ``slow``."""
    if os.environ.get("CI") or os.environ.get("BENCHWRIGHT_RUN_SLOW"):
        return True
    return "slow" in (config.getoption("markexpr") or "").replace("not slow", "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if slow_tests_wanted(config):
        return
    skip = pytest.mark.skip(reason="slow: runs in CI (CI=true), with -m slow, or with BENCHWRIGHT_RUN_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_frozen_heap_left_behind(request: pytest.FixtureRequest):
    """The app freezes its start heap (``gc.freeze``) and must give it back when it ends; a test after which objects
    are still frozen fails here, naming itself, and the heap is unfrozen so that later tests start clean."""
    import gc

    yield
    left = gc.get_freeze_count()
    if left:
        gc.unfreeze()
        pytest.fail(f"{request.node.nodeid} left {left} objects frozen (gc.freeze) behind")
