"""Fixtures of the benchmarks (helpers are in perf_support.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from perf_support import ANNOTATOR, N_PAIRS, REPO, make_repo_dir, report, synthetic_records


@pytest.fixture(scope="session")
def perf_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("perf")


@pytest.fixture(scope="session")
def base_project(perf_dir: Path) -> Path:
    """A project file with :data:`N_PAIRS` pairs about repository ``r``, built through Store.apply_import.

    The ParseResult is built directly from the synthetic records (QAPair.model_construct, the same
    fields parse_swe_qa fills), which skips the per-record validation; the write path is the real one.
    """
    from benchwright.core.importers import ParseResult
    from benchwright.core.models import QAPair, Repository, SourceRef, qa_pair_id
    from benchwright.db import Store

    t0 = time.perf_counter()
    jsonl = perf_dir / "project-source.jsonl"
    repo_dir = make_repo_dir(perf_dir)
    result = ParseResult("swe-qa", str(jsonl))
    for line, rec in enumerate(synthetic_records(), start=1):
        result.read += 1
        result.pairs.append(
            QAPair.model_construct(
                id=qa_pair_id(REPO, rec["question"], rec["answer"]), repository=REPO, question=rec["question"],
                reference_answer=rec["answer"], category=None, qa_type=None, qa_subtype=None, cluster_id=None,
                cluster_name=None, language=None, theme=None, task_set=None,
                source=SourceRef(format="swe-qa", file=str(jsonl), line=line, unit="line"), extra={},
            )
        )
    jsonl.write_text("{}\n")  # apply_import hashes the file; its content does not matter here
    t1 = time.perf_counter()
    db_path = perf_dir / "base.db"
    with Store.open(db_path) as store:
        store.add_repository(
            Repository(name=REPO, version_label="1", local_path=str(repo_dir.resolve())), ANNOTATOR
        )
        rep = store.apply_import(result, annotator=ANNOTATOR, file_path=jsonl, repository=REPO)
        assert rep.added == N_PAIRS
    t2 = time.perf_counter()
    report(
        "fixture: 100k-pair project",
        [f"records built in {t1 - t0:.2f} s; Store.apply_import wrote {N_PAIRS} pairs in {t2 - t1:.2f} s"],
    )
    return db_path
