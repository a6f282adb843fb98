"""Derived repositories (m018): registration, the link to the original, the manifest read back, refusals."""

from __future__ import annotations

import pytest

from benchwright.core.errors import NotFoundError, RepositoryError
from benchwright.core.models import Repository

ALICE = "alice"
ORIGINAL = Repository(name="flask", commit="abc1234def", local_path="/src/flask", commit_verified=True)


def _copy(name: str = "flask-code-only", **changes) -> Repository:
    fields = dict(name=name, commit="abc1234def", local_path="/p/repos/flask-code-only", commit_verified=True,
                  derived_from="flask", derivation="code-only", manifest={"totals": {"docstrings": 3}})
    return Repository(**{**fields, **changes})


def test_a_derived_repository_round_trips_with_its_link_and_manifest(store):
    store.add_repository(ORIGINAL, ALICE)
    saved = store.add_derived_repository(_copy(), ALICE)
    assert saved == _copy()
    assert store.get_repository("flask-code-only").manifest == {"totals": {"docstrings": 3}}
    assert store.derived_repository("flask") == _copy()
    assert store.derived_repository("flask", "other-kind") is None
    assert store.get_repository("flask").derived_from is None  # the original is a plain checkout


def test_the_latest_copy_is_returned(store):
    store.add_repository(ORIGINAL, ALICE)
    store.add_derived_repository(_copy("a"), ALICE)
    store.add_derived_repository(_copy("b"), ALICE)
    assert store.derived_repository("flask").name == "b"
    assert [r.name for r in store.derived_repositories("flask")] == ["b", "a"]
    store.add_derived_repository(_copy("a", manifest={"totals": {}}), ALICE, replace=True)
    assert store.derived_repository("flask").name == "a"  # rebuilt, so the latest
    assert store.derived_repository("flask").manifest == {"totals": {}}


def test_refusals_write_nothing(store):
    with pytest.raises(NotFoundError, match="'flask' is not registered"):
        store.add_derived_repository(_copy(), ALICE)
    with pytest.raises(NotFoundError):
        store.derived_repository("flask")
    store.add_repository(ORIGINAL, ALICE)
    store.add_repository(Repository(name="click", version_label="8.1.7"), ALICE)
    with pytest.raises(RepositoryError, match="'click' is already used by a registered checkout"):
        store.add_derived_repository(_copy("click"), ALICE, replace=True)
    store.add_derived_repository(_copy(), ALICE)
    with pytest.raises(RepositoryError, match=r"already exists at /p/repos/flask-code-only .*--force"):
        store.add_derived_repository(_copy(local_path="/elsewhere"), ALICE)
    store.add_derived_repository(_copy("click-code-only", derived_from="click", commit=None,
                                       version_label="8.1.7"), ALICE)
    with pytest.raises(RepositoryError, match="already used by the code-only copy of 'click'"):
        store.add_derived_repository(_copy("click-code-only"), ALICE, replace=True)
    with pytest.raises(ValueError, match="derived from itself"):
        store.add_derived_repository(_copy("flask"), ALICE)
    with pytest.raises(ValueError, match="needs derived_from"):
        store.add_derived_repository(_copy(derivation=None), ALICE)
    assert store.get_repository("flask-code-only").local_path == "/p/repos/flask-code-only"
    assert store.get_repository("click").derived_from is None
