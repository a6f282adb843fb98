"""SWE-QA-Pro Parquet importer (Cai et al., 2026; the public test split's layout, SWE-QA-Pro §2).

Columns read: ``session_id`` (upstream id), ``cluster{id,name}``, ``qa_type{class_name,sub_class_name}``,
``refined_ground_truth`` (when present it supersedes the answer), ``reward_model{ground_truth,question}``,
``extra_info{answer,commit_id,question,repo_name,split}``, ``annotated_answer`` (kept in ``extra``).
Each row names its repository and commit; those repositories are registered by the import.
A row with no reference answer is imported as needing one and reported; it never vanishes.
Rows are counted from 1. Text that is not valid UTF-8 is a problem naming the row and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputFileError, InputProblem
from ..models import Repository, normalize_qa_type
from .base import ParseResult, build_pair, json_type, parquet_rows, read_parquet

REQUIRED_COLUMNS = ("extra_info",)


def _text(v: Any) -> str | None:
    if isinstance(v, str) and v.strip():
        return v
    return None


class _Fields:
    """Reads text fields of one row, recording a problem for a value that is neither null nor text."""

    def __init__(self, display: str, number: int, problems: list[InputProblem]):
        self.display, self.number, self.problems = display, number, problems

    def text(self, struct: dict, key: str, label: str, *, numbers: bool = False) -> str | None:
        """The non-blank string ``struct[key]`` or ``None``; numbers become text when ``numbers``."""
        v = struct.get(key)
        if numbers and isinstance(v, int | float) and not isinstance(v, bool):
            return str(v)
        if v is not None and not isinstance(v, str):
            self.problems.append(
                InputProblem(self.display, self.number, label, f"must be a string, found {json_type(v)}", "row")
            )
            return None
        return _text(v)


def _struct(row: dict, key: str, display: str, number: int, problems: list[InputProblem]) -> dict | None:
    v = row.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        problems.append(InputProblem(display, number, key, f"must be a struct, found {type(v).__name__}", "row"))
        return None
    return v


def parse_swe_qa_pro(path: Path, display: str, repository: str | None) -> ParseResult:
    """Read a SWE-QA-Pro Parquet file.

    Raises:
        InputFileError: the file is missing or empty, not Parquet, lacks a required column, or
            ``repository`` was given (rows name their own repositories).
    """
    if repository is not None:
        raise InputFileError.single(
            display, "swe-qa-pro rows name their own repository and commit; leave out --repo"
        )
    table = read_parquet(path, display)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise InputFileError([InputProblem(display, None, c, "required column is missing") for c in missing])
    result = ParseResult("swe-qa-pro", display)
    repos: dict[tuple[str, str | None], Repository] = {}
    problems = result.problems
    for number, row in parquet_rows(table, display, result):
        before = len(problems)
        info = _struct(row, "extra_info", display, number, problems)
        reward = _struct(row, "reward_model", display, number, problems)
        cluster = _struct(row, "cluster", display, number, problems)
        qtype = _struct(row, "qa_type", display, number, problems)
        if len(problems) > before:
            continue
        f = _Fields(display, number, problems)
        question = f.text(info, "question", "extra_info.question") or f.text(
            reward, "question", "reward_model.question"
        )
        repo_name = f.text(info, "repo_name", "extra_info.repo_name")
        commit = f.text(info, "commit_id", "extra_info.commit_id")
        original = f.text(reward, "ground_truth", "reward_model.ground_truth") or f.text(
            info, "answer", "extra_info.answer"
        )
        refined = f.text(row, "refined_ground_truth", "refined_ground_truth")
        class_name = f.text(qtype, "class_name", "qa_type.class_name")
        subtype = f.text(qtype, "sub_class_name", "qa_type.sub_class_name")
        cluster_id = f.text(cluster, "id", "cluster.id", numbers=True)
        cluster_name = f.text(cluster, "name", "cluster.name")
        upstream_id = f.text(row, "session_id", "session_id", numbers=True)
        split = f.text(info, "split", "extra_info.split")
        if len(problems) > before:
            continue
        if question is None:
            problems.append(InputProblem(display, number, "extra_info.question", "required field is missing", "row"))
            continue
        if repo_name is None:
            problems.append(InputProblem(display, number, "extra_info.repo_name", "required field is missing", "row"))
            continue
        reference = refined or original
        try:
            qa_type = normalize_qa_type(class_name)
        except ValueError as e:
            problems.append(InputProblem(display, number, "qa_type.class_name", str(e), "row"))
            continue
        key = (repo_name, commit)
        if key not in repos:
            repos[key] = Repository(
                name=repo_name if not any(k[0] == repo_name for k in repos) else f"{repo_name}@{(commit or '')[:12]}",
                url=f"https://github.com/{repo_name}" if repo_name.count("/") == 1 else None,
                commit=commit,
            )
        extra: dict[str, Any] = {}
        if refined and original and refined != original:
            extra["original_answer"] = original
        if _text(row.get("annotated_answer")):
            extra["annotated_answer"] = row["annotated_answer"]
        for k in ("data_source", "ability"):
            if _text(row.get(k)):
                extra[k] = row[k]
        pair = build_pair(
            display=display, line=number, unit="row", fmt="swe-qa-pro", problems=problems,
            question=question, reference_answer=reference, repository=repos[key].name,
            upstream_id=upstream_id, extra=extra, qa_type=qa_type, qa_subtype=subtype,
            cluster_id=cluster_id, cluster_name=cluster_name,
            split=split.lower() if split else None,
        )
        if pair:
            result.pairs.append(pair)
    result.repositories = list(repos.values())
    return result
