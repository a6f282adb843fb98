"""Derived repositories in the store: a copy made from a registered repository (``repos strip`` makes the
code-only copy, Code-QA-Bench "Methodology 2"), registered under its own name and linked to the original by the
``repositories.derived_from`` / ``derivation`` / ``manifest_json`` columns of migration m018.

A derived repository is an ordinary row of ``repositories`` (answers and pairs name it like any other); these
methods add the link and the manifest, and find the latest copy of a kind made from a repository.
"""

from __future__ import annotations

import json

from benchwright.core.errors import NotFoundError, RepositoryError
from benchwright.core.models import Repository
from benchwright.core.strip import CODE_ONLY

from .locking import serialized


def derived_columns(repo: Repository) -> dict:
    """The m018 columns of ``repo``'s ``repositories`` row: ``derived_from``, ``derivation``, ``manifest_json``."""
    return {
        "derived_from": repo.derived_from, "derivation": repo.derivation,
        "manifest_json": None if repo.manifest is None else json.dumps(repo.manifest, sort_keys=True),
    }


def derived_fields(row: dict) -> dict:
    """The :class:`Repository` fields read back from a ``repositories`` row's m018 columns."""
    manifest = row.get("manifest_json")
    return {
        "derived_from": row.get("derived_from"), "derivation": row.get("derivation"),
        "manifest": None if manifest is None else json.loads(manifest),
    }


class DerivedRepositoryMixin:
    """Store methods for derived repositories (mixed into :class:`benchwright.db.store.Store`)."""

    def add_derived_repository(self, repo: Repository, annotator: str, *, replace: bool = False) -> Repository:
        """Register ``repo``, a copy made from the registered repository ``repo.derived_from``.

        ``repo`` carries ``derived_from``, ``derivation`` (``code-only``) and ``manifest``; its pin (commit or
        version label) should be the original's. With ``replace``, a copy of the same name, original and
        derivation is overwritten (its path, pin and manifest; ``created_at`` becomes now), as ``repos strip
        --force`` does. One transaction: on an error nothing is written.

        Returns:
            The repository as stored.

        Raises:
            ValueError: ``repo`` has no ``derived_from`` or no ``derivation``, or names itself as its original.
            NotFoundError: ``derived_from`` is not registered.
            RepositoryError: the name is taken by another repository (a checkout, or a copy of another original
                or kind), or by this same copy and ``replace`` is false.
        """
        if not repo.derived_from or not repo.derivation:
            raise ValueError(f"repository '{repo.name}': a derived repository needs derived_from and derivation")
        if repo.derived_from == repo.name:
            raise ValueError(f"repository '{repo.name}' cannot be derived from itself")
        with self.write() as db:
            self.get_repository(repo.derived_from)  # NotFoundError with the fix
            existing = self.get_repository(repo.name, missing_ok=True)
            from .store import _repo_row  # the one row shape of a repository (store imports this module)

            row = _repo_row(repo, annotator)
            if existing is None:
                db["repositories"].insert(row)
            elif (existing.derived_from, existing.derivation) != (repo.derived_from, repo.derivation):
                what = (f"the {existing.derivation} copy of '{existing.derived_from}'" if existing.derived_from
                        else f"a registered checkout ({existing.pin})")
                raise RepositoryError(f"the name '{repo.name}' is already used by {what}; choose another with --as")
            elif not replace:
                raise RepositoryError(
                    f"'{repo.name}', the {repo.derivation} copy of '{repo.derived_from}', already exists at "
                    f"{existing.local_path} ({existing.pin}); --force rebuilds it"
                )
            else:
                row.pop("name")
                db["repositories"].update(repo.name, row)
        return self.get_repository(repo.name)

    @serialized
    def derived_repository(self, of: str, derivation: str = CODE_ONLY) -> Repository | None:
        """The latest repository made from ``of`` by ``derivation`` (by registration time), or ``None``.

        Raises:
            NotFoundError: ``of`` is not registered.
        """
        if self.get_repository(of, missing_ok=True) is None:
            raise NotFoundError(
                f"repository '{of}' is not registered; register it with: benchwright repos add {of} PATH"
            )
        return next(iter(self.derived_repositories(of, derivation)), None)

    @serialized
    def derived_repositories(self, of: str, derivation: str | None = None) -> list[Repository]:
        """Every repository made from ``of`` (of one ``derivation`` if given), latest registered first."""
        sql = "SELECT name FROM repositories WHERE derived_from = ?"
        params = [of]
        if derivation is not None:
            sql += " AND derivation = ?"
            params.append(derivation)
        names = [r[0] for r in self.db.execute(sql + " ORDER BY created_at DESC, rowid DESC", params)]
        return [self.get_repository(name) for name in names]
