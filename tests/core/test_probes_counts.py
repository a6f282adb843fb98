"""Zero tests is never a pass: test counts read from CTest, GoogleTest, pytest and unittest output, the unit_test
verdict built on them (min_expected_tests), and a shortcut that fails to build told apart from one the oracle
catches."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from benchwright.core.probes import OracleRun, Probe, Variant, run_probe, separation
from benchwright.core.probes.counts import read_test_counts
from benchwright.core.probes.pipeline import pipeline_from_dict
from benchwright.core.probes.runner import FAILED_TO_BUILD, ModuleResult

CTEST_SKIPPED = """Test project /tmp/ct/b
    Start 2: skipme
1/1 Test #2: skipme ...........................***Skipped   0.00 sec

100% tests passed, 0 tests failed out of 1

Total Test time (real) =   0.00 sec

The following tests did not run:
\t  2 - skipme (Skipped)
"""
CTEST_MIXED = """50% tests passed, 2 tests failed out of 4

Total Test time (real) =   0.01 sec

The following tests did not run:
\t  2 - skipme (Skipped)
\t  5 - dis (Disabled)

The following tests FAILED:
\t  3 - bad (Failed)
\t  4 - missing (Not Run)
Errors while running CTest
"""
GTEST = """[==========] Running 4 tests from 1 test suite.
[==========] 4 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 2 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] Calc.Later
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Calc.Bad
"""


def _text(output: str) -> list[str]:
    return [c.text() for c in read_test_counts(output)]


def test_counts_from_each_tool():
    assert _text("Test project /x\nNo tests were found!!!\n") == ["0 run: 0 passed, 0 failed, 0 skipped (ctest)"]
    assert _text(CTEST_SKIPPED) == ["0 run: 0 passed, 0 failed, 1 skipped (ctest)"]
    assert _text(CTEST_MIXED) == ["3 run: 1 passed, 2 failed, 2 skipped (ctest)"]
    assert _text("100% tests passed, 0 tests failed out of 3\n") == ["3 run: 3 passed, 0 failed, 0 skipped (ctest)"]
    assert _text(GTEST) == ["3 run: 2 passed, 1 failed, 1 skipped (gtest)"]
    assert _text("==== 1 failed, 1 passed, 1 skipped, 1 xfailed in 3.63s ====\n") == [
        "2 run: 1 passed, 1 failed, 2 skipped (pytest)"]
    assert _text("1 passed, 2 errors in 0.10s\n") == ["3 run: 1 passed, 2 failed, 0 skipped (pytest)"]
    assert _text("=============== 1 skipped in 5.79s ===============\n") == ["0 run: 0 passed, 0 failed, 1 skipped (pytest)"]
    assert _text("1 deselected in 4.13s\n") == ["0 run: 0 passed, 0 failed, 0 skipped (pytest)"]
    assert _text("===== no tests ran in 0.01s =====\n") == ["0 run: 0 passed, 0 failed, 0 skipped (pytest)"]
    assert _text("....\nRan 4 tests in 0.006s\n\nFAILED (failures=1, errors=1, skipped=1)\n") == [
        "3 run: 1 passed, 2 failed, 1 skipped (unittest)"]
    assert _text("s\nRan 1 test in 0.009s\n\nOK (skipped=1)\n") == ["0 run: 0 passed, 0 failed, 1 skipped (unittest)"]
    assert _text("all good, trust me\n") == []
    # ctest wrapping a pytest suite (ctest -V): the outer tool first
    assert _text("== 2 passed in 0.1s ==\n100% tests passed, 0 tests failed out of 1\n")[0].endswith("(ctest)")


def _probe(tmp_path: Path, modules: list[dict], files: dict[str, str]) -> Probe:
    case, evaluator = tmp_path / "probe" / "case", tmp_path / "probe" / "evaluator"
    for root, content in ((case, {"main.py": "x = 1\n"}), (evaluator, files)):
        root.mkdir(parents=True, exist_ok=True)
        for relative, text in content.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text, encoding="utf-8")
    return Probe(id="counted", title="counted", primary_dimension="D7", granularity="micro", steps=["Do it."],
                 case_dir=str(case), evaluator_dir=str(evaluator), pipeline=pipeline_from_dict({"modules": modules}))


def _unit(name: str, *command: str, **fields) -> dict:
    return {"module_name": "unit_test", "name": name, "command": list(command), **fields}


PYTEST = ["{python}", "-m", "pytest", "-p", "no:cacheprovider", "-q"]
QUICK = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # the venv's plugins are not needed and slow to load


def test_a_pytest_probe_whose_only_test_is_skipped_fails(tmp_path):
    tests = {
        "only_skipped/test_a.py": "import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n",
        "one_of_two/test_b.py": "import pytest\n\ndef test_ok():\n    pass\n\n@pytest.mark.skip\ndef test_no():\n    pass\n",
    }
    probe = _probe(tmp_path, [
        _unit("only skipped", *PYTEST, "{evaluator_root}/only_skipped", env=QUICK),
        _unit("one of two, two needed", *PYTEST, "{evaluator_root}/one_of_two", min_expected_tests=2, env=QUICK),
    ], tests)
    run = run_probe(probe, None, timeout_s=120)
    skipped, two_needed = run.modules
    assert skipped.returncode == 0 and not skipped.passed, "exit code 0 with every test skipped is not a pass"
    assert skipped.reason.startswith("no test passed; every test was skipped")
    assert skipped.tests.model_dump() == {"tool": "pytest", "run": 0, "passed": 0, "failed": 0, "skipped": 1}
    assert two_needed.returncode == 0 and not two_needed.passed
    assert two_needed.reason == ("only 1 tests passed, at least 2 expected: "
                                 "1 run: 1 passed, 0 failed, 1 skipped (pytest)")
    assert run.outcome == "fail" and run.caught_by == "oracle"


def test_a_test_command_without_a_summary_or_a_filter_matching_nothing_fails(tmp_path):
    probe = _probe(tmp_path, [
        _unit("silent", "true"),
        _unit("renamed test", "{python}", "-c", "print('Test project /b'); print('No tests were found!!!')"),
        _unit("unittest ok", "{python}", "-m", "unittest", "discover", "-s", "{evaluator_root}/ut"),
    ], {"ut/test_c.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test_c(self):\n        pass\n"})
    silent, renamed, ok = run_probe(probe, None).modules
    assert not silent.passed and "no test summary" in silent.reason and silent.tests is None
    assert not renamed.passed and renamed.reason.startswith("no tests were run (the test filter matched nothing)")
    assert ok.passed and ok.tests.passed == 1 and ok.tests.tool == "unittest"


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ctest") is None, reason="cmake/ctest not installed")
def test_ctest_filter_matching_nothing_and_quiet_ctest_fail(tmp_path):
    cmake = textwrap.dedent("""\
        cmake_minimum_required(VERSION 3.16)
        project(counted NONE)
        enable_testing()
        add_test(NAME ok COMMAND sh -c "exit 0")
        add_test(NAME later COMMAND sh -c "exit 77")
        set_tests_properties(later PROPERTIES SKIP_RETURN_CODE 77)
        """)
    ctest = ["ctest", "--test-dir", "{build_dir}"]
    probe = _probe(tmp_path, [
        {"module_name": "build", "name": "configure", "command": ["cmake", "-S", "{evaluator_root}", "-B", "{build_dir}"]},
        _unit("quiet, nothing", *ctest, "-Q", "-R", "nonexistent"),
        _unit("nothing", *ctest, "-R", "nonexistent"),
        _unit("skipped", *ctest, "-R", "^later$"),
        _unit("ok", *ctest, "-R", "^ok$"),
    ], {"CMakeLists.txt": cmake})
    configure, quiet, nothing, skipped, ok = run_probe(probe, None, timeout_s=120).modules
    assert configure.passed, configure.log
    assert quiet.returncode == 0 and not quiet.passed and "no test summary" in quiet.reason
    assert nothing.returncode == 0 and not nothing.passed and nothing.reason.startswith("no tests were run")
    assert not skipped.passed and skipped.tests.skipped == 1 and skipped.tests.passed == 0
    assert ok.passed and ok.tests.model_dump() == {"tool": "ctest", "run": 1, "passed": 1, "failed": 0, "skipped": 0}


def test_a_shortcut_that_fails_to_build_is_not_caught_by_the_oracle(tmp_path):
    probe = _probe(tmp_path, [
        {"module_name": "build", "name": "compile", "command": ["{python}", "-m", "compileall", "-q", "{case_root}"]},
        {"module_name": "source_analysis", "name": "no globals", "scan_roots": ["."], "suffixes": [".py"],
         "rules": [{"id": "no-global", "any_patterns": ["\\bglobal\\b"]}]},
    ], {})
    overlays = {"intended": "def f():\n    return 1\n", "broken": "def f(:\n    return 1\n",
                "global": "X = 0\n\ndef f():\n    global X\n    return X\n"}
    variants = []
    for name, text in overlays.items():
        tree = tmp_path / "variants" / name / "tree"
        tree.mkdir(parents=True)
        (tree / "main.py").write_text(text)
        kind = "intended" if name == "intended" else "shortcut"
        variants.append(Variant(name=name, kind=kind, expected="pass" if kind == "intended" else "fail", tree=str(tree)))
    runs = {v.name: run_probe(probe, v) for v in variants}
    assert runs["broken"].outcome == "fail" and runs["broken"].matches_expectation
    assert runs["broken"].failed_to_build and runs["broken"].caught_by == "build"
    assert runs["broken"].verdict == FAILED_TO_BUILD == "failed to build"
    assert runs["broken"].summary().startswith("broken: failed to build")
    assert runs["global"].caught_by == "oracle" and runs["global"].verdict == "fail"
    assert runs["intended"].verdict == "pass" and runs["intended"].caught_by is None

    result = separation(list(runs.values()))
    assert not result.separating, "a shortcut only the compiler caught does not show the oracle separates"
    assert result.shortcuts_failing_to_build == ["broken"]
    assert result.caught_by == {"broken": "build", "global": "oracle"}
    assert result.shortcut_notes[0].startswith("broken: failed to build (compile: exit code 1")
    assert "the compiler caught it, not the oracle" in result.shortcut_notes[0]
    assert result.shortcut_notes[1].startswith("global: caught by the oracle (no globals: rule no-global matched in")
    assert separation([runs["intended"], runs["global"]], min_per_family=1).separating


def test_stored_runs_from_before_counts_still_read():
    old = {"name": "functional", "module_name": "unit_test", "passed": True, "reason": "exit code 0"}
    module = ModuleResult.model_validate(old)
    assert module.tests is None
    run = OracleRun.model_validate({"probe_id": "p", "variant": None, "outcome": "pass", "expected": None,
                                    "matches_expectation": None, "modules": [json.loads(json.dumps(old))]})
    assert run.verdict == "pass" and not run.failed_to_build
