"""One rule for a run against its variant's expectation (OracleRun.expectation_check), which the probe CLI,
the probes screen and the store's validation state all ask: a shortcut that failed to build was caught by the
compiler, not the oracle."""

from __future__ import annotations

import pytest

from benchwright.core.probes import ExpectationCheck, OracleRun, Variant
from benchwright.core.probes.runner import ModuleResult

BUILD_FAILED = [ModuleResult(name="compile", module_name="build", passed=False, reason="exit code 1")]
TEST_FAILED = [ModuleResult(name="compile", module_name="build", passed=True, reason="exit code 0"),
               ModuleResult(name="tests", module_name="unit_test", passed=False, reason="exit code 1")]


def run(kind: str, expected: str, outcome: str, modules=()) -> OracleRun:
    variant = Variant(name=kind, kind=kind, expected=expected, tree="t")
    return OracleRun(probe_id="p", variant=variant, outcome=outcome, expected=expected,
                     matches_expectation=outcome == expected, modules=list(modules))


@pytest.mark.parametrize(("kind", "expected", "outcome", "modules", "check"), [
    ("shortcut", "fail", "fail", BUILD_FAILED, ExpectationCheck.COMPILER_CAUGHT),
    ("shortcut", "fail", "fail", TEST_FAILED, ExpectationCheck.AS_EXPECTED),
    ("shortcut", "fail", "pass", (), ExpectationCheck.MISMATCH),
    ("near-miss", "fail", "fail", BUILD_FAILED, ExpectationCheck.AS_EXPECTED),  # only shortcuts must reach the oracle
    ("intended", "pass", "fail", BUILD_FAILED, ExpectationCheck.MISMATCH),
    ("intended", "pass", "error", (), ExpectationCheck.MISMATCH),
    ("intended", "pass", "pass", (), ExpectationCheck.AS_EXPECTED),
])
def test_expectation_check(kind, expected, outcome, modules, check):
    r = run(kind, expected, outcome, modules)
    assert r.expectation_check is check
    assert r.shortcut_failed_to_build is (check is ExpectationCheck.COMPILER_CAUGHT)


def test_the_starter_code_has_no_expectation():
    starter = OracleRun(probe_id="p", variant=None, outcome="fail", expected=None, matches_expectation=None,
                        modules=BUILD_FAILED)
    assert starter.expectation_check is None and not starter.shortcut_failed_to_build
