"""Start-up benchmark (issue 19 item 5): ``benchwright --help`` as a user runs it (the console script, a fresh
process each time), against ``python -c pass`` and ``sqlite-utils --help`` measured in the same run; then
``--version``, a command's ``--help`` and a completion request.

Each figure is the median wall time of :data:`RUNS` runs (the runs interleaved, so a busy moment of the shared
machine falls on every command alike). Goal: ``benchwright --help`` under 0.3 s and no slower than
``sqlite-utils --help``; the safety net (an assert) is 3x ``sqlite-utils --help``.

Run with ``.venv/bin/python -m pytest tests/perf/test_startup_perf.py -m perf -s``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from perf_support import goal, report

pytestmark = pytest.mark.perf

RUNS = 5
GOAL_S = 0.3
SAFETY_RATIO = 3.0
BIN = Path(sys.executable).parent


def _script(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return path


def _medians(commands: dict[str, tuple[list[str], dict[str, str]]]) -> dict[str, float]:
    """Median wall time in seconds of each ``label: (argv, extra environment)``, runs interleaved."""
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(RUNS):
        for label, (argv, env) in commands.items():
            t0 = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False, env={**os.environ, **env}, timeout=120)
            times[label].append(time.perf_counter() - t0)
    return {label: statistics.median(ts) for label, ts in times.items()}


def test_startup_against_python_and_sqlite_utils():
    bw, su = _script("benchwright"), _script("sqlite-utils")
    complete = {"_BENCHWRIGHT_COMPLETE": "bash_complete", "COMP_WORDS": "benchwright ju", "COMP_CWORD": "1"}
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], {}),
        "sqlite-utils --help": ([su, "--help"], {}),
        "benchwright --help": ([bw, "--help"], {}),
        "benchwright --version": ([bw, "--version"], {}),
        "benchwright judgments run --help": ([bw, "judgments", "run", "--help"], {}),
        "benchwright generate --help": ([bw, "generate", "--help"], {}),
        "complete 'benchwright ju'": ([bw], complete),
    }
    t = _medians(commands)
    base, su_help, help_s = t["python -c pass"], t["sqlite-utils --help"], t["benchwright --help"]
    lines = [f"{label:34s} {s * 1000:6.0f} ms   {s / base:5.1f}x python -c pass   {s / su_help:5.2f}x sqlite-utils --help"
             for label, s in t.items()]
    lines.append(f"benchwright --help under {GOAL_S} s and within sqlite-utils --help: "
                 f"{goal(help_s < GOAL_S and help_s <= su_help)}")
    report(f"start-up, median of {RUNS} runs", lines)
    assert help_s < SAFETY_RATIO * su_help, f"benchwright --help {help_s:.2f} s vs sqlite-utils --help {su_help:.2f} s"
