"""Shared helpers of the benchmarks: synthetic SWE-QA records, a 100k-pair project, timing helpers.

Benchmarks are excluded from the default run (``-m 'not perf'`` in pyproject.toml); run them with::

    .venv/bin/python -m pytest tests/perf -m perf -s

They print their figures (``-s`` shows them) and only assert generous safety nets, since they run on
noisy shared machines.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

N_PAIRS = 100_000
"""Size of the synthetic data set (records in the JSONL file, pairs in the project)."""

ANNOTATOR = "bench"
REPO = "r"

_WORDS = ["request", "context", "handler", "blueprint", "config", "route", "session", "signal", "template", "extension", "application", "registry", "loader", "callback", "middleware", "dispatcher", "view", "response", "object", "method", "class", "function", "module", "returns", "calls", "stores", "resolves", "which", "because", "each", "value", "default", "instance", "attribute", "decorator", "wrapper", "cache", "lookup", "parser", "token", "stream", "buffer", "encoder", "decoder", "serializer", "validator", "schema", "field", "option", "argument", "command", "group", "parameter", "environment", "variable", "converter", "endpoint", "rule", "matcher", "the", "a", "of", "in", "to", "and", "is", "for", "when", "with", "from", "that", "by", "on", "as", "at"]
_TOPICS = (
    "How does", "Why does", "Where is", "What happens when", "How is", "Why is", "Where does", "What is",
)


def _sentence_pool(rng: random.Random, n: int, words: tuple[int, int]) -> list[str]:
    out = []
    for _ in range(n):
        k = rng.randint(*words)
        s = " ".join(rng.choice(_WORDS) for _ in range(k))
        out.append(s[0].upper() + s[1:] + ".")
    return out


def synthetic_records(n: int = N_PAIRS, seed: int = 20261129):
    """Yield ``n`` unique SWE-QA-style ``{question, answer}`` dicts.

    Questions are ~150 characters, answers ~1500 characters of Markdown the way SWE-QA answers look:
    paragraphs citing files (``src/pkg/mod_12.py:40-58``), inline code, a bullet list and, for one
    record in three, a fenced code block. Every record carries its index, so all are unique.
    """
    rng = random.Random(seed)
    sentences = _sentence_pool(rng, 4000, (8, 18))
    fence = "```python\ndef dispatch(self, request):\n    rule = self.url_map.match(request.path)\n    return self.view_functions[rule.endpoint](**rule.args)\n```"
    for i in range(n):
        subject = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 14)))
        q = f"{rng.choice(_TOPICS)} the `{rng.choice(_WORDS)}_{i % 997}` {subject} work in module mod_{i % 50} (case {i})?"
        if len(q) < 140:
            q = q[:-1] + " " + " ".join(rng.choice(_WORDS) for _ in range(12))
            q = q[:148].rstrip() + "?"
        parts = [
            f"The `{rng.choice(_WORDS)}_{i % 997}` path starts in `src/pkg/mod_{i % 50}.py:{i % 300 + 1}-{i % 300 + 18}`. "
            + " ".join(rng.choice(sentences) for _ in range(3)),
            "\n\n".join(
                [
                    "Key steps:",
                    "\n".join(
                        f"- `{rng.choice(_WORDS)}()` {rng.choice(sentences).lower()}" for _ in range(3)
                    ),
                ]
            ),
        ]
        if i % 3 == 0:
            parts.append(fence)
        parts.append(f"See also src/pkg/sub/helper_{i % 7}.py. " + " ".join(rng.choice(sentences) for _ in range(2)))
        a = "\n\n".join(parts)
        target = rng.randint(1400, 1600)
        while len(a) < target:
            a += " " + rng.choice(sentences)
        a = a[:target].rstrip() + f" (record {i})."
        yield {"question": q, "answer": a}


def write_jsonl(path: Path, n: int = N_PAIRS) -> Path:
    """Write ``n`` synthetic records to ``path`` as JSON lines; returns ``path``."""
    with path.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(rec, ensure_ascii=False) + "\n" for rec in synthetic_records(n))
    return path


def make_repo_dir(root: Path) -> Path:
    """A small plain directory standing for the repository (a few of the cited files exist)."""
    d = root / "repo"
    (d / "src" / "pkg" / "sub").mkdir(parents=True, exist_ok=True)
    for k in range(10):
        (d / "src" / "pkg" / f"mod_{k}.py").write_text(f"# module {k}\n" + "x = 1\n" * 400)
    for k in range(3):
        (d / "src" / "pkg" / "sub" / f"helper_{k}.py").write_text("def helper():\n    return 1\n")
    return d


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest-rank."""
    v = sorted(values)
    return v[min(len(v) - 1, max(0, round(q * len(v) + 0.5) - 1))]


def summary_ms(values: list[float]) -> str:
    """``p50 / p95 / max / mean`` in milliseconds."""
    return (
        f"p50 {percentile(values, 0.5) * 1e3:8.2f} ms  p95 {percentile(values, 0.95) * 1e3:8.2f} ms  "
        f"max {max(values) * 1e3:8.2f} ms  mean {statistics.fmean(values) * 1e3:8.2f} ms  (n={len(values)})"
    )


def report(title: str, lines: list[str]) -> None:
    """Print a block of figures (visible with ``-s``)."""
    print(f"\n==== {title} " + "=" * max(0, 70 - len(title)))
    for line in lines:
        print("  " + line)


def goal(ok: bool) -> str:
    return "goal met" if ok else "GOAL MISSED"



def copy_project(src: Path, dst: Path) -> Path:
    """Copy a closed project file (WAL checkpointed on close, so the .db file is complete)."""
    shutil.copyfile(src, dst)
    return dst


def decide_first(db_path: Path, n: int, annotator: str = ANNOTATOR) -> None:
    """Record accept/reject decisions of ``annotator`` on the first ``n`` pairs, straight into
    review_decisions (the review_decisions_current trigger fills review_state)."""
    from benchwright.db import Store

    with Store.open(db_path) as store, store.write() as db:
        ids = [r[0] for r in db.conn.execute("SELECT id FROM qa_pairs ORDER BY ordinal LIMIT ?", [n])]
        db.conn.executemany(
            "INSERT INTO review_decisions (qa_pair_id, annotator, decision, created_at) VALUES (?, ?, ?, ?)",
            (
                (pid, annotator, "reject" if k % 5 == 0 else "accept", "2026-11-29T10:00:00.000000+00:00")
                for k, pid in enumerate(ids)
            ),
        )


_LAUNCHER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(sys.argv[1], "w") as fh:
    fh.write(f"{wall} {ru.ru_maxrss} {ru.ru_utime + ru.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""Runs one command and writes its wall seconds, peak RSS (KiB) and CPU seconds to a file. The child is spawned
from this small interpreter, not from the test process: Linux counts in a child's ``ru_maxrss`` the memory of
the process it was forked (or vfork-ed) from until its ``exec``, so a child of a 1.6 GiB pytest process reported
1.6 GiB whatever it used."""


@dataclass
class ChildRun:
    """One measured child process: wall seconds, peak RSS in MiB, CPU seconds (user + system), its output."""

    wall: float
    rss_mib: float
    cpu: float
    output: str


def run_child(cmd: list, *, env: dict | None = None, cwd: Path | None = None, log: Path | None = None,
              check: bool = True) -> ChildRun:
    """Run ``cmd`` (its first element a path to an executable) and measure it alone, through :data:`_LAUNCHER`
    (a ``python -S`` of ~10 MiB, so the RSS figure has that floor). stdout and stderr go to ``log`` (else are
    captured) and are returned as text. Raises AssertionError on a non-zero exit when ``check``."""
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".measure", delete=False) as fh:
        figures = Path(fh.name)
    try:
        out_path = log or figures.with_suffix(".out")
        with out_path.open("wb") as out:
            proc = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, str(figures), *map(str, cmd)],
                                  stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        output = out_path.read_text(errors="replace")
        if log is None:
            out_path.unlink(missing_ok=True)
        if check:
            assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{output[-3000:]}"
        wall, rss_kib, cpu = figures.read_text().split()
        return ChildRun(float(wall), int(rss_kib) / 1024, float(cpu), output)
    finally:
        figures.unlink(missing_ok=True)
