"""``repos move``: re-pin a registered repository to another checkout and check every pair's citations at the new pin
(no Textual here; the command line prints :class:`MovePlan`).

:func:`plan_move` reads the two pins and compares each citation (:mod:`benchwright.core.evidence_drift`) without
writing anything (``--dry-run`` stops there); :func:`apply_move` stores the new pin and the checks in one
transaction (:meth:`benchwright.db.Store.record_repository_move`): stale pairs go back to review.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchwright.core.errors import RepositoryError
from benchwright.core.evidence_drift import (
    EVIDENCE_STALE,
    CitationChange,
    DirectoryFiles,
    check_text,
    old_files,
    pair_status,
    recheck_status,
)
from benchwright.core.models import Repository
from benchwright.core.repository import (
    changed_checkout_problem,
    describe_local_repository,
    git_changed_files,
    git_commit_sha,
    git_renames,
)
from benchwright.db import Store


@dataclass(frozen=True)
class PairCheck:
    """One pair's citations at the new pin: id, ``#N``, status (:data:`~benchwright.core.evidence_drift.EVIDENCE_STATUSES`) and every citation's
    change."""

    pair_id: str
    ordinal: int
    status: str
    changes: tuple[CitationChange, ...]


@dataclass(frozen=True)
class MovePlan:
    """What ``repos move`` does, worked out before anything is written.

    Attributes:
        before: the repository as registered now.
        after: the repository at the new pin (same name, url, language, theme).
        checks: one per pair of the repository, in queue order.
        old_source: where the old pin's files were read from, in words (or why they could not be).
        derived: copies made from the repository (``repos strip``) that the move leaves out of date.
        old_readable: False when the old pin's files could not be read at all (``old_source`` says why).
    """

    before: Repository
    after: Repository
    checks: tuple[PairCheck, ...]
    old_source: str
    derived: tuple[Repository, ...]
    old_readable: bool = True

    def count(self, status: str) -> int:
        """Pairs with ``status``."""
        return sum(1 for c in self.checks if c.status == status)


def plan_move(store: Store, name: str, path: str | Path, *, commit: str | None = None,
              version: str | None = None) -> MovePlan:
    """Check every citation of ``name``'s pairs between its current pin and the checkout at ``path`` (a git
    checkout at ``commit``, or read from git when neither is given; or a plain folder with the version label
    ``version``), writing nothing.

    Raises:
        NotFoundError: ``name`` is not registered.
        RepositoryError: ``name`` is a derived copy; both commit and version, or neither for a plain folder;
            ``path`` is missing, not a directory, not at ``commit`` (checked as ``repos add`` checks it), or has
            uncommitted changes to tracked files; the new pin and path are the repository's current ones.
    """
    before = store.get_repository(name)
    if before.derived_from:
        raise RepositoryError(f"'{name}' is the {before.derivation} copy of '{before.derived_from}': move "
                              f"'{before.derived_from}', then rebuild the copy (benchwright repos strip "
                              f"{before.derived_from} --force)")
    described = describe_local_repository(name, path, commit=commit, version=version)
    root = Path(described.local_path)
    if commit or described.commit_verified:
        if not described.commit_verified:
            raise RepositoryError(f"{path} is not a git checkout, so commit {commit} cannot be checked; give "
                                  "--version LABEL for a plain folder")
        changed = git_changed_files(root)
        if changed:
            raise RepositoryError(changed_checkout_problem(name, root, described.commit, changed))
    after = before.model_copy(update={
        "commit": described.commit, "version_label": described.version_label, "local_path": described.local_path,
        "commit_verified": described.commit_verified,
    })
    if (after.commit, after.version_label, after.local_path) == (before.commit, before.version_label,
                                                                  before.local_path):
        raise RepositoryError(f"'{name}' is already pinned to {before.pin} at {before.local_path}; nothing to do")
    old, source = old_files(before, root)
    renames: dict[str, str] = {}
    if old is not None and before.commit and after.commit:
        old_sha = git_commit_sha(root, before.commit)
        if old_sha:
            renames = git_renames(root, old_sha, after.commit)
    new = DirectoryFiles(root)
    checks = []
    for p in store.repository_pair_texts(name):
        text = p.question + "\n\n" + (p.reference_answer or "")
        changes = check_text(text, old, new, renames=renames, old_unreadable=source)
        checks.append(PairCheck(p.pair_id, p.ordinal, pair_status(changes), tuple(changes)))
    return MovePlan(before=before, after=after, checks=tuple(checks), old_source=source,
                    derived=tuple(store.derived_repositories(name)), old_readable=old is not None)


def apply_move(store: Store, plan: MovePlan, annotator: str) -> str:
    """Store ``plan`` in one transaction (the new pin, the checks; stale pairs sent back to review).

    Returns:
        The time recorded.

    Raises:
        RepositoryError: the repository was re-pinned since ``plan`` was made (nothing is written).
    """
    return store.record_repository_move(
        plan.before, plan.after, [(c.pair_id, c.status, list(c.changes)) for c in plan.checks], annotator)



def recheck_after_edit(store: Store, pair_id: str, annotator: str) -> str | None:
    """After an annotator changed the text of a pair whose evidence is stale (``repos move`` found its cited code
    changed), check the citations of the new text at the repository's current pin: ``ok`` when each cited file and
    range is there (the annotator re-cited the code as it is now), ``stale`` when one is still missing. Stored as an
    evidence check (:meth:`~benchwright.db.Store.record_evidence_recheck`).

    Returns:
        The new status, or None when nothing was checked (the evidence was not stale, or the checkout is not here).
    """
    check = store.evidence_check(pair_id)
    if check is None or check.status != EVIDENCE_STALE:
        return None
    pair = store.get_pair(pair_id)
    repo = store.get_repository(pair.repository, missing_ok=True) if pair.repository else None
    if repo is None or not repo.local_path or not Path(repo.local_path).is_dir():
        return None
    here = DirectoryFiles(repo.local_path)
    changes = check_text(pair.question + "\n\n" + (pair.reference_answer or ""), here, here)
    status = recheck_status(changes)
    store.record_evidence_recheck(pair_id, repo.pin, status, changes, annotator)
    return status
