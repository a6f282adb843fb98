"""Releases in the store: what is final (the preflight), and the record of each release made."""

from __future__ import annotations

import json
from dataclasses import dataclass

from benchwright.core.checklist import Checklist
from benchwright.core.errors import BenchwrightError
from benchwright.core.models import QAPair, Repository

from .locking import serialized


@dataclass(frozen=True)
class ReleaseCandidate:
    """A pair that goes into a release, with what the release needs of it."""

    pair: QAPair
    repository: Repository
    checklist: Checklist
    final_decision: str
    adjudicated: bool
    annotators: list[str]


@dataclass(frozen=True)
class Preflight:
    """What a release would contain: ``included`` candidates and ``excluded`` ``(pair id, reason)``."""

    included: list[ReleaseCandidate]
    excluded: list[tuple[str, str]]

    def reasons(self) -> dict[str, int]:
        """Excluded pairs counted by reason."""
        out: dict[str, int] = {}
        for _, reason in self.excluded:
            out[reason] = out.get(reason, 0) + 1
        return dict(sorted(out.items()))


class ReleaseStoreMixin:
    """Release methods of :class:`benchwright.db.Store`."""

    def final_decision(self, pair_id: str) -> tuple[str | None, bool, str | None]:
        """``(decision, adjudicated, why_not)`` of a pair: the latest adjudication wins; otherwise the
        reviews' decision when every submitted review agrees on it and on the criteria; otherwise None with
        the reason (no review, unresolved disagreement)."""
        adj = self.adjudication_of(pair_id)
        dis = self.disagreement_of(pair_id)
        if adj is not None and dis is None:
            return adj.decision, True, None
        if dis is not None:
            return None, False, "unresolved disagreement"
        reviews = self.reviews_of(pair_id)
        if not reviews:
            return None, False, "not reviewed"
        pending = [a for a in self.assignees(pair_id) if a not in reviews]
        if pending:
            return None, False, "reviews pending"
        return next(iter(reviews.values())).decision, False, None

    def release_preflight(self) -> Preflight:
        """Which pairs a release includes, and why each other pair is excluded.

        A pair is included when its final decision is ``accept``, it has a current checklist that is valid
        and not a draft, and its repository is pinned (a commit or a version label) with a reference answer.
        """
        included: list[ReleaseCandidate] = []
        excluded: list[tuple[str, str]] = []
        repos = {r.name: r for r in self.repositories()}
        for (pid,) in self.db.conn.execute("SELECT id FROM qa_pairs ORDER BY ordinal").fetchall():
            pair = self.get_pair(pid)
            decision, adjudicated, why = self.final_decision(pid)
            if decision is None:
                excluded.append((pid, why or "not reviewed"))
                continue
            if decision != "accept":
                excluded.append((pid, f"not accepted (final decision: {decision})"))
                continue
            current = self.checklist_version(pid)
            if current is None:
                excluded.append((pid, "no checklist"))
                continue
            if current.is_draft:
                excluded.append((pid, "draft checklist"))
                continue
            if not current.is_valid:
                excluded.append((pid, "invalid checklist"))
                continue
            if pair.needs_reference:
                excluded.append((pid, "no reference answer"))
                continue
            repo = repos.get(pair.repository or "")
            if repo is None or not (repo.commit or repo.version_label):
                excluded.append((pid, "missing repository commit"))
                continue
            annotators = sorted(self.reviews_of(pid))
            included.append(ReleaseCandidate(pair, repo, current.checklist, decision, adjudicated, annotators))
        return Preflight(included, excluded)

    @serialized
    def release_exists(self, name: str, version: str) -> bool:
        """True when ``name`` ``version`` was released from this project."""
        return self.db.conn.execute(
            "SELECT 1 FROM releases WHERE name = ? AND version = ?", [name, version]
        ).fetchone() is not None

    @serialized
    def previous_release(self, name: str, before_version: str | None = None) -> dict | None:
        """The latest release of ``name`` (``{version, path, created_at}``), or the one made just before
        ``before_version``; None when there is none."""
        if before_version is None:
            r = self.db.conn.execute(
                "SELECT version, path, created_at FROM releases WHERE name = ? ORDER BY id DESC LIMIT 1", [name]
            ).fetchone()
        else:
            r = self.db.conn.execute(
                """SELECT version, path, created_at FROM releases WHERE name = ? AND id <
                   (SELECT id FROM releases WHERE name = ? AND version = ?) ORDER BY id DESC LIMIT 1""",
                [name, name, before_version],
            ).fetchone()
        return {"version": r[0], "path": r[1], "created_at": r[2]} if r else None

    def record_release(self, name: str, version: str, *, created_at: str, created_by: str, path: str,
                       n_pairs: int, manifest: dict) -> None:
        """Append the record of a release that was written.

        Raises:
            BenchwrightError: this name and version were released already.
        """
        if self.release_exists(name, version):
            raise BenchwrightError(f"release {name} {version} exists already; choose a new version")
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO releases (name, version, created_at, created_by, path, n_pairs, manifest_json)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (name, version, created_at, created_by, path, n_pairs, json.dumps(manifest, sort_keys=True)),
            )
