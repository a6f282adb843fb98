"""RepoProbe Table 2's statistics of a release: repositories, pairs, languages, the average number of files and
lines of code per repository, and the share of pairs whose text merged external context (the ``enrich`` step's
``integrated``, RepoProbe §3.2 "Context Enhancement").

Files and lines are counted from each pinned checkout: the files git tracks (``git ls-files``) when it is a git
checkout, else every file under it (``.git`` folders and symbolic links left out). Only text files count (git's
rule: no NUL byte in the first 8,000 bytes); a file that cannot be read is skipped. Lines are newline characters,
plus one for a last line without one. The paper does not say how it counted; this is our rule.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .repository import _git_out

_SNIFF = 8000
_CHUNK = 1 << 20


@dataclass(frozen=True)
class CodeSize:
    """Text files and their lines in a checkout (``skipped``: files that could not be read)."""

    files: int
    lines: int
    skipped: int = 0


def _tracked_files(root: Path) -> list[Path] | None:
    """The files git tracks in the checkout ``root`` (``git ls-files -z``), or None when it is no git checkout."""
    if not (root / ".git").exists():
        return None
    out = _git_out(root, "ls-files", "-z", "--full-name", timeout=120)
    if out is None:
        return None
    return [root / name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name]


def _walked_files(root: Path) -> list[Path]:
    files = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        files += [Path(folder) / n for n in sorted(names)]
    return files


def _text_lines(path: Path) -> int | None:
    """Lines of the text file ``path``; None when it is binary, a link, or cannot be read."""
    if path.is_symlink() or not path.is_file():
        return None
    lines = 0
    last = b""
    with path.open("rb") as f:
        head = f.read(_SNIFF)
        if b"\0" in head:
            return None
        chunk = head
        while chunk:
            lines += chunk.count(b"\n")
            last = chunk[-1:]
            chunk = f.read(_CHUNK)
    return lines + (1 if last and last != b"\n" else 0)


def code_size(root: str | Path) -> CodeSize:
    """Text files and lines of code of the checkout at ``root`` (the module docstring's rule).

    Raises:
        OSError: ``root`` is not a readable folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a folder")
    files = _tracked_files(root)
    if files is None:
        files = _walked_files(root)
    n = lines = skipped = 0
    for p in files:
        try:
            counted = _text_lines(p)
        except OSError:
            skipped += 1
            continue
        if counted is not None:
            n += 1
            lines += counted
    return CodeSize(n, lines, skipped)


def repository_statistics(pairs_per_repository: Mapping[str, int], sizes: Mapping[str, CodeSize | None],
                          languages: Mapping[str, str | None], merged_context: int) -> dict:
    """RepoProbe Table 2 as a JSON-ready dict (kept in a release's manifest).

    Args:
        pairs_per_repository: repository -> released pairs about it.
        sizes: repository -> its :func:`code_size`, None when its checkout could not be read (left out of the
            averages, and counted in ``not_counted``).
        languages: repository -> its language (None: unknown).
        merged_context: released pairs whose current ``enrich`` result integrated external context.

    Returns:
        ``{"repositories", "pairs", "languages" (sorted names), "files_per_repository",
        "lines_per_repository" (means over the counted repositories, one decimal; None when none),
        "not_counted" (repositories), "merged_context" (pairs), "merged_context_share" (0-1, four decimals),
        "per_repository": {name: {"pairs", "files", "lines"}}}``.
    """
    counted = {name: s for name, s in sizes.items() if s is not None}
    n = sum(pairs_per_repository.values())
    return {
        "repositories": len(pairs_per_repository),
        "pairs": n,
        "languages": sorted({lang for lang in languages.values() if lang}),
        "files_per_repository": round(sum(s.files for s in counted.values()) / len(counted), 1) if counted else None,
        "lines_per_repository": round(sum(s.lines for s in counted.values()) / len(counted), 1) if counted else None,
        "not_counted": sorted(name for name in pairs_per_repository if sizes.get(name) is None),
        "merged_context": merged_context,
        "merged_context_share": round(merged_context / n, 4) if n else None,
        "per_repository": {
            name: {"pairs": pairs_per_repository[name],
                   "files": sizes[name].files if sizes.get(name) else None,
                   "lines": sizes[name].lines if sizes.get(name) else None}
            for name in sorted(pairs_per_repository)
        },
    }


__all__ = ["CodeSize", "code_size", "repository_statistics"]
