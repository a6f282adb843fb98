"""Counts kept by tui/services/views.py until the project changes (issue 19: the app on 100,000 pairs)."""

from __future__ import annotations

from benchwright.db import QueueFilter, Store
from benchwright.tui.services.views import (
    counted,
    known_count,
    known_queue_progress,
    progress_in_thread,
    queue_progress,
)


def test_a_count_is_made_once_until_the_project_changes(project):
    store, ids = project
    calls = []

    def count():
        calls.append(1)
        return store.progress("ada")

    first = counted(store, ("progress", "ada"), count)
    assert counted(store, ("progress", "ada"), count) == first and len(calls) == 1
    store.record_decision(ids[0], "ada", "accept")  # a write of this connection
    again = counted(store, ("progress", "ada"), count)
    assert len(calls) == 2 and again.mine == first.mine + 1


def test_a_commit_of_another_connection_makes_the_counts_stale(project):
    store, ids = project
    before = queue_progress(store, "ada", QueueFilter())
    assert known_queue_progress(store, "ada", QueueFilter()) == before
    with Store.open(store.path) as other:  # another terminal on the same project
        other.record_decision(ids[1], "ada", "reject")
    assert known_count(store, ("progress", "ada")) is None
    after = queue_progress(store, "ada", QueueFilter())
    assert after.progress.decided == before.progress.decided + 1


def test_progress_counted_in_a_thread_is_kept(project):
    store, ids = project
    store.record_decision(ids[2], "ada", "accept")
    got = progress_in_thread(store, "ada")
    assert got == store.progress("ada") and known_count(store, ("progress", "ada")) == got
