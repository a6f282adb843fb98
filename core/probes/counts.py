"""How many tests a ``unit_test`` command ran, read from its output: CTest, GoogleTest, pytest or unittest.

A test command that exits with 0 proves nothing by itself: ``ctest -R`` with a filter that matches nothing
exits 0 (``ctest -Q`` even says nothing), and so does a suite whose only test is skipped. The runner therefore
reads the counts from the runner's own summary lines and passes a ``unit_test`` module only when at least one
test (or the module's ``min_expected_tests``) ran and passed and none failed.

Summaries read (the first found in this order gives the counts; several tools can appear when one wraps
another, e.g. ``ctest -V`` running a pytest suite):

* CTest: ``100% tests passed, 0 tests failed out of 3`` with the ``(Skipped)`` / ``(Disabled)`` lines of
  "The following tests did not run"; ``No tests were found!!!`` is zero tests.
* GoogleTest: ``[==========] 3 tests from 1 test suite ran.``, ``[  PASSED  ] 2 tests.``,
  ``[  SKIPPED ] 1 test``, ``[  FAILED  ] 1 test``.
* pytest: the final ``== 2 passed, 1 skipped, 1 failed in 0.12s ==`` line (also ``-q``'s bare form,
  ``no tests ran``); errors count as failed, xfailed as skipped, xpassed as passed.
* unittest: ``Ran 3 tests in 0.001s`` with ``OK (skipped=1)`` or ``FAILED (failures=1, errors=1, skipped=1)``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

TestTool = Literal["ctest", "gtest", "pytest", "unittest"]


class TestCounts(BaseModel):
    """Counts of one test run, as the test tool reported them.

    Attributes:
        tool: which summary they were read from.
        run: tests that ran (``passed + failed``; skipped tests did not run).
        passed: tests that ran and passed.
        failed: tests that ran and failed (errors included).
        skipped: tests that were skipped or disabled.
    """

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(frozen=True)

    tool: TestTool
    run: int
    passed: int
    failed: int
    skipped: int

    def text(self) -> str:
        """``5 run: 4 passed, 1 failed, 2 skipped (ctest)``."""
        return f"{self.run} run: {self.passed} passed, {self.failed} failed, {self.skipped} skipped ({self.tool})"


def _counts(tool: TestTool, passed: int, failed: int, skipped: int) -> TestCounts:
    passed, failed, skipped = max(passed, 0), max(failed, 0), max(skipped, 0)
    return TestCounts(tool=tool, run=passed + failed, passed=passed, failed=failed, skipped=skipped)


_CTEST_SUMMARY = re.compile(r"^\s*\d+% tests passed, (\d+) tests? failed out of (\d+)", re.M)
_CTEST_NOT_RUN = re.compile(r"^\s*\d+ - .+ \((Skipped|Disabled)\)\s*$", re.M)


def _ctest(text: str) -> TestCounts | None:
    summaries = _CTEST_SUMMARY.findall(text)
    if not summaries:
        return _counts("ctest", 0, 0, 0) if "No tests were found!!!" in text else None
    failed, total = (int(x) for x in summaries[-1])
    not_run = _CTEST_NOT_RUN.findall(text)
    skipped = sum(1 for kind in not_run if kind == "Skipped")  # counted in "out of N"; Disabled ones are not
    return _counts("ctest", total - failed - skipped, failed, skipped + sum(1 for k in not_run if k == "Disabled"))


_GTEST_RAN = re.compile(r"^\[=+\] (\d+) tests? from \d+ test (?:suites?|cases?) ran\.", re.M)
_GTEST_LINE = re.compile(r"^\[\s+(PASSED|SKIPPED|FAILED)\s+\] (\d+) tests?[,.]", re.M)


def _gtest(text: str) -> TestCounts | None:
    if not _GTEST_RAN.search(text):
        return None
    found = {kind: int(n) for kind, n in _GTEST_LINE.findall(text)}
    return _counts("gtest", found.get("PASSED", 0), found.get("FAILED", 0), found.get("SKIPPED", 0))


_PYTEST_FINAL = re.compile(
    r"^(?:=+ )?((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+|"
    r"no tests ran)(?: in [\d.]+s?(?: \([^)]*\))?)?(?: =+)?\s*$",
    re.M,
)
_PYTEST_PART = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def _pytest(text: str) -> TestCounts | None:
    lines = [m for m in _PYTEST_FINAL.finditer(text) if " in " in m.group(0) or m.group(0).startswith("=")]
    if not lines:
        return None
    found: dict[str, int] = {}
    for n, kind in _PYTEST_PART.findall(lines[-1].group(1)):
        found[kind.rstrip("s") if kind.startswith("error") else kind] = int(n)
    return _counts("pytest", found.get("passed", 0) + found.get("xpassed", 0),
                   found.get("failed", 0) + found.get("error", 0), found.get("skipped", 0) + found.get("xfailed", 0))


_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$", re.M)
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.M)


def _unittest(text: str) -> TestCounts | None:
    ran = _UNITTEST_RAN.findall(text)
    if not ran:
        return None
    total = int(ran[-1])
    results = _UNITTEST_RESULT.findall(text)
    details: dict[str, int] = {}
    if results:
        for part in (results[-1][1] or "").split(","):
            key, _, value = part.strip().partition("=")
            if value.strip().isdigit():
                details[key.strip()] = int(value)
    failed = details.get("failures", 0) + details.get("errors", 0) + details.get("unexpected successes", 0)
    skipped = details.get("skipped", 0) + details.get("expected failures", 0)
    return _counts("unittest", total - failed - skipped, failed, skipped)


_READERS = (_ctest, _gtest, _pytest, _unittest)


def read_test_counts(output: str) -> list[TestCounts]:
    """Every test summary found in ``output`` (a command's stdout and stderr), outermost tool first (CTest,
    GoogleTest, pytest, unittest); empty when none is recognised."""
    return [counts for reader in _READERS if (counts := reader(output)) is not None]
