"""``repos strip``: make the code-only copy of a registered repository and register it (Code-QA-Bench,
"Methodology" 2). The stripping rules are :mod:`benchwright.core.strip`'s; this module places the copy, keeps
the work all-or-nothing, and records it in the store. The CLI calls it; the app may.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchwright.core.errors import RepositoryError
from benchwright.core.models import Repository
from benchwright.core.repository import changed_checkout_problem, git_changed_files, git_head
from benchwright.core.strip import CODE_ONLY, strip_tree
from benchwright.db import Store


@dataclass(frozen=True)
class StripOutcome:
    """What ``repos strip`` did.

    Attributes:
        repository: the code-only copy as registered (``manifest`` holds what was removed).
        original: the repository it was made from.
        existed: True when the copy was already there and nothing was done (no ``force``).
        rebuilt: True when an existing copy was replaced (``force``).
        seconds: wall time of the stripping (0 when ``existed``).
    """

    repository: Repository
    original: Repository
    existed: bool = False
    rebuilt: bool = False
    seconds: float = 0.0


def default_copy_name(name: str) -> str:
    """``NAME-code-only``: the name ``repos strip NAME`` gives the copy unless told otherwise."""
    return f"{name}-{CODE_ONLY}"


_FOLDER_MAX = 200
"""The longest folder name :func:`copy_folder_name` gives (longer ones are cut and end in a hash of the name)."""


def copy_folder_name(name: str) -> str:
    """The folder ``repos/`` holds the copy ``name`` in: one path segment, the name with every character other
    than letters, digits, ``.``, ``_`` and ``-`` made ``_`` (``acme/widget-code-only`` ->
    ``acme_widget-code-only``), never ``.``, ``..`` or hidden."""
    folder = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    folder = "_" + folder[1:] if folder.startswith(".") else folder
    if len(folder) > _FOLDER_MAX:  # a file name holds 255 bytes, and the temporary folder adds 15 characters
        folder = folder[: _FOLDER_MAX - 9] + "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return folder


def strip_repository(
    store: Store, name: str, *, annotator: str, as_name: str | None = None, to: str | Path | None = None,
    keep_lines: bool = False, force: bool = False,
) -> StripOutcome:
    """Make the code-only copy of repository ``name`` and register it as ``as_name`` (default ``NAME-code-only``),
    derived from ``name``, derivation ``code-only``, at the original's commit or version, ``local_path`` the copy.

    The copy goes to ``to``, else to ``<project folder>/repos/<folder>`` (the project folder holds the database
    file; the folder is :func:`copy_folder_name` of the copy's name). It is written into a temporary folder beside its place and renamed into place; then it is registered.
    Any failure (or an interrupt) removes what was written and leaves the store as it was; with ``force``, the
    copy it replaces is put back.

    Raises:
        NotFoundError: ``name`` is not registered.
        RepositoryError: ``name`` is itself a derived copy, has no local path here, or its git checkout has moved
            off the registered commit; the copy is registered but its folder is missing (without ``force``); ``as_name`` is taken by another repository; the place is inside the
            original (or holds it) or already exists and is not this copy; a file cannot be read or written.
    """
    original = store.get_repository(name)
    if original.derived_from:
        raise RepositoryError(
            f"'{name}' is the {original.derivation} copy of '{original.derived_from}'; strip "
            f"'{original.derived_from}' instead"
        )
    root = _checked_out(original)
    copy_name = as_name or default_copy_name(name)
    existing = store.get_repository(copy_name, missing_ok=True)
    if existing is not None and (existing.derived_from, existing.derivation) != (name, CODE_ONLY):
        what = (f"the {existing.derivation} copy of '{existing.derived_from}'" if existing.derived_from
                else f"the repository {existing.pin}")
        raise RepositoryError(f"the name '{copy_name}' is already used by {what}; choose another with --as")
    if existing is not None and not force:
        if not existing.local_path or not Path(existing.local_path).is_dir():
            raise RepositoryError(f"'{copy_name}', the code-only copy of '{name}', is registered at "
                                  f"{existing.local_path or '(no folder)'}, but that folder is missing; --force "
                                  "rebuilds it")
        return StripOutcome(existing, original, existed=True)
    if to is not None:
        dest = Path(to).expanduser().absolute()
    elif existing is not None and existing.local_path:
        dest = Path(existing.local_path)
    else:
        dest = Path(store.path).absolute().parent / "repos" / copy_folder_name(copy_name)
    ours = existing is not None and existing.local_path and Path(existing.local_path) == dest
    try:
        resolved = dest.resolve()
        taken = dest.exists() or dest.is_symlink()
    except OSError as e:  # a --to whose name is too long, a folder that cannot be searched
        raise RepositoryError(f"{dest}: cannot be used for the copy ({e.strerror or e})") from None
    if resolved == root or root in resolved.parents or resolved in root.parents:
        raise RepositoryError(f"{dest}: the copy cannot be written inside {name} ({root}) or around it")
    if taken and not ours:
        raise RepositoryError(f"{dest} already exists; choose another place with --to, or remove it")

    started = time.perf_counter()
    sweep_stale_builds(dest)
    tag = f"{_HOST}~{os.getpid()}~{uuid.uuid4().hex[:8]}"
    building = dest.parent / f".{dest.name}.strip-{tag}"
    aside = dest.parent / f".{dest.name}.old-{tag}"
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RepositoryError(f"{dest.parent}: cannot be created ({e.strerror or e})") from None
    placed = moved_aside = False
    try:
        manifest = strip_tree(root, building, keep_lines=keep_lines)
        if ours and (dest.exists() or dest.is_symlink()):
            dest.rename(aside)
            moved_aside = True
        building.rename(dest)
        placed = True
        copy = Repository(
            name=copy_name, url=original.url, commit=original.commit, version_label=original.version_label,
            local_path=str(dest), language=original.language, theme=original.theme,
            commit_verified=original.commit_verified, derived_from=name, derivation=CODE_ONLY, manifest=manifest,
        )
        saved = store.add_derived_repository(copy, annotator, replace=existing is not None)
    except BaseException as e:
        shutil.rmtree(dest if placed else building, ignore_errors=True)
        if moved_aside:
            aside.rename(dest)
        if isinstance(e, OSError):
            raise RepositoryError(f"{dest}: the copy cannot be put in place ({e.strerror or e})") from None
        raise
    if moved_aside:
        shutil.rmtree(aside, ignore_errors=True)
    return StripOutcome(saved, original, rebuilt=existing is not None, seconds=time.perf_counter() - started)


_HOST = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:64] or "host"
_WORK_FOLDER = re.compile(r"^\.(?P<copy>.+)\.(?:strip|old)-(?P<host>[A-Za-z0-9._-]+)~(?P<pid>\d+)~[0-9a-f]{8}$")


def sweep_stale_builds(dest: Path) -> list[Path]:
    """Remove the hidden work folders (``.COPY.strip-HOST~PID~X``, ``.COPY.old-...``) that a strip of ``dest`` killed
    with SIGKILL left beside it: those of a process on this host that no longer runs, or older than a day
    (:func:`benchwright.db.llm.owner_alive`, the rule of work claims). A folder of a strip still running is kept.
    Returns the folders removed."""
    from datetime import UTC, datetime

    from benchwright.db.llm import owner_alive

    removed: list[Path] = []
    try:
        entries = list(dest.parent.iterdir()) if dest.parent.is_dir() else []
    except OSError:
        return removed
    for entry in entries:
        m = _WORK_FOLDER.match(entry.name)
        if m is None or m["copy"] != dest.name or entry.is_symlink():
            continue
        try:
            started = datetime.fromtimestamp(entry.stat().st_mtime, UTC).isoformat()
        except OSError:
            continue
        if not owner_alive(f"{m['host']}:{m['pid']}:x", started):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _checked_out(original: Repository) -> Path:
    """The original's folder, checked: present here, and (a git checkout) still at the registered commit."""
    if not original.local_path:
        raise RepositoryError(
            f"'{original.name}' is not checked out here; register its folder with: "
            f"benchwright repos add {original.name} PATH"
        )
    root = Path(original.local_path)
    if not root.is_dir():
        raise RepositoryError(f"'{original.name}': its folder {root} is missing")
    head = git_head(root)
    if head and original.commit and not head.lower().startswith(original.commit.lower()):
        raise RepositoryError(
            f"{root} is checked out at {head[:12]}, but '{original.name}' is registered at {original.commit[:12]}; "
            f"check out {original.commit[:12]} to strip it"
        )
    changed = git_changed_files(root) if head else None
    if changed:
        raise RepositoryError(changed_checkout_problem(original.name, root, original.commit or head, changed))
    return root.resolve()
