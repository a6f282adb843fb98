"""Releases in the store: what is final (the preflight), and the record of each release made."""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass

from benchwright.core.adjudication import Exclusion, FinalDecision, final_decision, release_exclusion
from benchwright.core.checklist import Checklist
from benchwright.core.errors import BenchwrightError
from benchwright.core.models import PairText, QAPair, Repository, utc_now

from .llm import owner_alive
from .locking import serialized


@dataclass(frozen=True)
class ReleaseCandidate:
    """A pair that goes into a release, with what the release needs of it (``text``: its current text version and
``original``: version 1, both None when the pair has only its imported text)."""

    pair: QAPair
    repository: Repository
    checklist: Checklist
    final_decision: str
    adjudicated: bool
    annotators: list[str]
    text: PairText | None = None
    original: PairText | None = None


@dataclass(frozen=True)
class Preflight:
    """What a release would contain: ``included`` candidates and ``excluded`` ``(pair id, reason)`` (an
    :class:`~benchwright.core.adjudication.Exclusion`, whose value describes it); ``include_dropped``: pairs a
    gating curation step dropped were let in (``--include-dropped``); ``selection``: only its members were
    considered (included or excluded)."""

    included: list[ReleaseCandidate]
    excluded: list[tuple[str, Exclusion]]
    include_dropped: bool = False
    selection: object | None = None
    """The :class:`~benchwright.core.sampling.Selection` the release is restricted to (``--selection``), or None."""

    def reasons(self) -> dict[str, int]:
        """Excluded pairs counted by reason."""
        out: dict[str, int] = {}
        for _, reason in self.excluded:
            out[reason] = out.get(reason, 0) + 1
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class ProbeCandidate:
    """A signed-off probe that goes into a release: the probe and its variants (core models), its fingerprint,
    the sign-off, and the oracle runs the sign-off rests on (``{variant name or None: run dict}``: the latest
    run of each variant under the signed fingerprint made before the sign-off)."""

    probe: object
    variants: list
    fingerprint: str
    signoff: object
    runs: dict


@dataclass(frozen=True)
class ProbePreflight:
    """Which probes a release would include (``included``) and ``excluded`` ``(probe id, reason)`` (a
    :class:`~benchwright.core.probes.release.ProbeExclusion`)."""

    included: list[ProbeCandidate]
    excluded: list[tuple[str, str]]

    def reasons(self) -> dict[str, int]:
        """Excluded probes counted by reason."""
        out: dict[str, int] = {}
        for _, reason in self.excluded:
            out[str(reason)] = out.get(str(reason), 0) + 1
        return dict(sorted(out.items()))


_RUNNING: set[str] = set()
"""Owners of the release attempts running in this process (an attempt of this process that ended without
confirming, e.g. for a held write lock, is not running, though its process is)."""


def _of_this_process(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    return host == socket.gethostname() and rest.partition(":")[0] == str(os.getpid())


@dataclass(frozen=True)
class PendingRelease:
    """A release being written (or whose writer died): recorded before any file is written.

    ``created_at`` is the time the release will carry; ``path`` the folder it is written to (absolute);
    ``owner`` the writing process (:func:`benchwright.db.llm.claim_owner`), ``started_at`` when it began.
    """

    name: str
    version: str
    created_at: str
    created_by: str
    path: str
    owner: str
    started_at: str

    @property
    def alive(self) -> bool:
        """True while the writing attempt still runs (a pending record of a dead process, or of an attempt of
        this process that has ended, is stale)."""
        if _of_this_process(self.owner):
            return self.owner in _RUNNING
        return owner_alive(self.owner, self.started_at)


class ReleaseStoreMixin:
    """Release methods of :class:`benchwright.db.Store`."""

    def final_decision(self, pair_id: str, *, reviews: dict | None = None) -> FinalDecision:
        """``(decision, adjudicated, why_not)`` of a pair: the rule of
        :func:`benchwright.core.adjudication.final_decision`, fed from the store (``reviews``: the pair's
        :meth:`reviews_of`, when the caller has read them already)."""
        reopened_at, reason = self.reopening(pair_id)
        return final_decision(
            self.reviews_of(pair_id) if reviews is None else reviews, self.assignees(pair_id), adjudication=self.adjudication_of(pair_id),
            disagreement=self.disagreement_of(pair_id), reopened_at=reopened_at, reopened_reason=reason,
        )

    def release_preflight(self, *, include_dropped: bool = False, selection=None) -> Preflight:
        """Which pairs a release includes, and why each other pair is excluded.

        A pair a gating curation step dropped (images, classify, verify: :meth:`dropped_pairs`) is excluded
        unless ``include_dropped``. With ``selection`` (a :class:`~benchwright.core.sampling.Selection`) only its
        members are considered: the others are neither included nor listed as excluded.

        The rule is :func:`benchwright.core.adjudication.release_exclusion`: a pair is included when its final
        decision is ``accept``, it has a current checklist that is valid and not a draft, and its repository is
        pinned (a commit or a version label) with a reference answer.
        """
        included: list[ReleaseCandidate] = []
        excluded: list[tuple[str, Exclusion]] = []
        repos = {r.name: r for r in self.repositories()}
        dropped = {} if include_dropped else self.dropped_pairs()
        members = None if selection is None else self.selection_member_ids(selection.id)
        # pairs with their imported text only (one version): no checklist of theirs is stale and they ship no
        # source.text, so neither is read per pair (the same answers as stale_checklist and text_versions)
        imported_only = {pid for (pid,) in self.db.conn.execute(
            "SELECT qa_pair_id FROM pair_texts GROUP BY qa_pair_id HAVING count(*) = 1")}
        from .store import _PAIR_COLUMNS, _pair_from_row  # get_pair's row shape (store imports this module)

        for row in self.db.conn.execute(f"SELECT {_PAIR_COLUMNS} FROM qa_pairs ORDER BY ordinal").fetchall():
            pid = row[0]
            if members is not None and pid not in members:
                continue
            pair = _pair_from_row(row)
            reviews = self.reviews_of(pid)
            final = self.final_decision(pid, reviews=reviews)
            current = self.checklist_version(pid) if final.decision == "accept" else None
            repo = repos.get(pair.repository or "")
            why = release_exclusion(
                final, has_checklist=current is not None, draft_checklist=bool(current and current.is_draft),
                valid_checklist=bool(current and current.is_valid),
                stale_checklist=current is not None and pid not in imported_only
                and self.stale_checklist(pid) is not None,
                needs_reference=pair.needs_reference,
                repository_pinned=repo is not None and bool(repo.commit or repo.version_label),
                dropped_by=dropped.get(pid),
            )
            if why is not None:
                excluded.append((pid, why))
                continue
            annotators = sorted(reviews)
            texts = () if pid in imported_only else self.text_versions(pid)
            included.append(ReleaseCandidate(pair, repo, current.checklist, final.decision, final.adjudicated,
                                             annotators, *((texts[-1], texts[0]) if len(texts) > 1 else ())))
        return Preflight(included, excluded, include_dropped, selection)

    def probe_release_preflight(self) -> ProbePreflight:
        """Which probes a release includes, and why each other is left out: the rule of
        :func:`benchwright.core.probes.release.probe_release_exclusion` (signed off under the current fingerprint,
        files on disk unchanged), fed from the store. Probes of NITR checkouts whose shared run-time files differ
        from those of the first included probe's checkout are left out too (a release holds one set)."""
        from benchwright.core.probes import Probe, Variant, probe_fingerprint
        from benchwright.core.probes.release import (
            ProbeExclusion,
            checkout_shared_digest,
            probe_release_exclusion,
        )

        included: list[ProbeCandidate] = []
        excluded: list[tuple[str, str]] = []
        shared: str | None = None
        for pid in self.probe_ids():
            record = self.probe_record(pid)
            signoff = self.latest_signoff(pid)
            probe = Probe.model_validate(record["probe"])
            variants = [Variant.model_validate(v) for v in record["variants"]]
            why = probe_release_exclusion(
                verdict=signoff.verdict if signoff else None, signed_fingerprint=signoff.fingerprint if signoff else None,
                fingerprint=record["fingerprint"],
                disk_fingerprint=probe_fingerprint(probe, variants) if signoff else "")
            digest = checkout_shared_digest(probe.checkout_root)
            if why is None and digest and shared not in (None, digest):
                why = ProbeExclusion.OTHER_CHECKOUT
            if why is not None:
                excluded.append((pid, why))
                continue
            if digest:
                shared = digest
            included.append(ProbeCandidate(probe, variants, record["fingerprint"], signoff,
                                           self._runs_at_signoff(pid, signoff, {v.name for v in variants})))
        return ProbePreflight(included, excluded)

    @serialized
    def _runs_at_signoff(self, probe_id: str, signoff, names: set[str]) -> dict:
        """``{variant name or None: run dict}``: the latest run of each variant (and of the starter) under the
        sign-off's fingerprint made no later than the sign-off (later runs do not change what was signed off)."""
        rows = self.db.conn.execute(
            """SELECT variant, run_json FROM oracle_runs o WHERE probe_id = ? AND fingerprint = ? AND created_at <= ?
               AND id = (SELECT max(id) FROM oracle_runs x WHERE x.probe_id = o.probe_id AND x.variant IS o.variant
                         AND x.fingerprint = o.fingerprint AND x.created_at <= ?)""",
            [probe_id, signoff.fingerprint, signoff.created_at, signoff.created_at]).fetchall()
        return {r[0]: json.loads(r[1]) for r in rows if r[0] is None or r[0] in names}

    @serialized
    def release_exists(self, name: str, version: str) -> bool:
        """True when ``name`` ``version`` was released from this project."""
        return self.db.conn.execute(
            "SELECT 1 FROM releases WHERE name = ? AND version = ?", [name, version]
        ).fetchone() is not None

    def release_exists_error(self, name: str, version: str) -> BenchwrightError:
        """The error for making ``name`` ``version`` again: it says the release is recorded and complete (when,
        where), so a retry after a kill that came after the commit knows it has nothing left to do."""
        row = self.db.conn.execute(
            "SELECT created_at, path, n_pairs FROM releases WHERE name = ? AND version = ?", [name, version]
        ).fetchone()
        where = f" ({row[2]} pairs, made {row[0]}, in {row[1]}; 'benchwright releases verify' checks it)" if row else ""
        return BenchwrightError(f"release {name} {version} exists already and is complete{where}; "
                                "choose a new version to make another")

    @serialized
    def release_record(self, name: str, version: str) -> dict | None:
        """The record of release ``name`` ``version`` (``{created_at, created_by, path, n_pairs, manifest}``,
        the manifest as a dict), or None when it was not made from this project."""
        r = self.db.conn.execute(
            "SELECT created_at, created_by, path, n_pairs, manifest_json FROM releases WHERE name = ? AND version = ?",
            [name, version]).fetchone()
        if r is None:
            return None
        return {"created_at": r[0], "created_by": r[1], "path": r[2], "n_pairs": r[3], "manifest": json.loads(r[4])}

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

    @serialized
    def pending_release(self, name: str, version: str) -> PendingRelease | None:
        """The pending record of ``name`` ``version`` (being written, or left by a writer that died), or None."""
        r = self.db.conn.execute(
            """SELECT name, version, created_at, created_by, path, owner, started_at FROM pending_releases
               WHERE name = ? AND version = ?""", [name, version]).fetchone()
        return PendingRelease(*r) if r else None

    def begin_release(self, name: str, version: str, *, created_at: str, created_by: str, path: str,
                      owner: str) -> PendingRelease | None:
        """Record that ``owner`` starts writing ``name`` ``version`` to ``path`` (pending), before any file is
        written; a pending record of a process that is gone is taken over. Returns the record taken over.

        Raises:
            BenchwrightError: released already, or being written by another process that still runs.
            StoreError: the write lock was held too long (nothing was recorded or written).
        """
        with self.write() as db:
            if self.release_exists(name, version):
                raise self.release_exists_error(name, version)
            stale = self.pending_release(name, version)
            if stale is not None and stale.owner != owner and stale.alive:
                raise BenchwrightError(
                    f"release {name} {version} is being written by another process (since {stale.started_at}, "
                    f"to {stale.path}); wait for it to finish")
            db.conn.execute("DELETE FROM pending_releases WHERE name = ? AND version = ?", [name, version])
            _RUNNING.add(owner)
            db.conn.execute(
                """INSERT INTO pending_releases (name, version, created_at, created_by, path, owner, started_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""", (name, version, created_at, created_by, path, owner, utc_now()))
        return stale

    def end_release_attempt(self, owner: str) -> None:
        """Mark ``owner``'s attempt (begun by :meth:`begin_release` in this process) as ended, confirmed or not:
        a pending record it leaves is stale from now on, so the next attempt may resume it."""
        _RUNNING.discard(owner)

    def drop_pending_release(self, name: str, version: str, owner: str) -> bool:
        """Remove ``owner``'s pending record of ``name`` ``version`` (its folder never appeared); False when the
        record is gone or belongs to another owner."""
        with self.write() as db:
            cur = db.conn.execute("DELETE FROM pending_releases WHERE name = ? AND version = ? AND owner = ?",
                                  [name, version, owner])
        return cur.rowcount > 0

    def confirm_release(self, name: str, version: str, *, owner: str, n_pairs: int, manifest: dict) -> None:
        """Turn ``owner``'s pending record into the release record, in one transaction, once the folder is in
        place (``created_at``, ``created_by`` and ``path`` are the pending record's).

        Raises:
            BenchwrightError: released already, or no pending record of ``owner`` (another process took it).
            StoreError: the write lock was held too long (the record stays pending; the next attempt adopts
                the folder).
        """
        with self.write() as db:
            if self.release_exists(name, version):
                raise self.release_exists_error(name, version)
            pending = self.pending_release(name, version)
            if pending is None or pending.owner != owner:
                raise BenchwrightError(f"release {name} {version}: its pending record was taken over by another "
                                       "process; run the command again")
            db.conn.execute(
                """INSERT INTO releases (name, version, created_at, created_by, path, n_pairs, manifest_json)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (name, version, pending.created_at, pending.created_by, pending.path, n_pairs,
                 json.dumps(manifest, sort_keys=True)),
            )
            db.conn.execute("DELETE FROM pending_releases WHERE name = ? AND version = ?", [name, version])

    def record_release(self, name: str, version: str, *, created_at: str, created_by: str, path: str,
                       n_pairs: int, manifest: dict) -> None:
        """Append the record of a release that was written.

        Raises:
            BenchwrightError: this name and version were released already.
        """
        if self.release_exists(name, version):
            raise self.release_exists_error(name, version)
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO releases (name, version, created_at, created_by, path, n_pairs, manifest_json)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (name, version, created_at, created_by, path, n_pairs, json.dumps(manifest, sort_keys=True)),
            )

    def record_release_push(self, *, name: str, version: str, manifest_sha256: str, endpoint: str, repo_id: str,
                            revision: str, private: bool, commit_url: str, commit_oid: str, by: str) -> dict:
        """Append the record of release ``name`` ``version`` pushed to a Hugging Face Hub (``releases push``,
        issue 20 item 4) and return it as :meth:`release_pushes` does. No token is stored."""
        row = {"release_name": name, "release_version": version, "manifest_sha256": manifest_sha256,
               "endpoint": endpoint, "repo_id": repo_id, "revision": revision, "private": bool(private),
               "commit_url": commit_url, "commit_oid": commit_oid, "pushed_at": utc_now(), "pushed_by": by}
        with self.write() as db:
            db.conn.execute(
                """INSERT INTO release_pushes (release_name, release_version, manifest_sha256, endpoint, repo_id,
                   revision, private, commit_url, commit_oid, pushed_at, pushed_by)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [*(int(v) if k == "private" else v for k, v in row.items())])
        return row

    @serialized
    def release_pushes(self, name: str | None = None, version: str | None = None) -> list[dict]:
        """Every recorded push (of release ``name`` and ``version`` when given), oldest first: dicts with
        ``release_name, release_version, manifest_sha256, endpoint, repo_id, revision, private`` (bool),
        ``commit_url, commit_oid, pushed_at, pushed_by``."""
        cols = ("release_name, release_version, manifest_sha256, endpoint, repo_id, revision, private, commit_url, "
                "commit_oid, pushed_at, pushed_by")
        where, args = [], []
        for col, v in (("release_name", name), ("release_version", version)):
            if v is not None:
                where.append(f"{col} = ?")
                args.append(v)
        sql = f"SELECT {cols} FROM release_pushes" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        names = [c.strip() for c in cols.split(",")]
        out = []
        for r in self.db.conn.execute(sql, args).fetchall():
            d = dict(zip(names, r, strict=True))
            d["private"] = bool(d["private"])
            out.append(d)
        return out
