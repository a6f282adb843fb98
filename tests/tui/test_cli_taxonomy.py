"""``benchwright taxonomy`` end to end on a scratch project (hashing embedder, scripted LLM through
``provider_factory``; no network, no keys): build from pairs and from issues, show, label (a failed node stays
unlabelled and is labelled on the rerun), edit with author, history, assign with origins and ``--force``, and
hostile text printed literally."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from taxonomy_topics import planted

from benchwright.core.llm import ScriptedProvider
from benchwright.db import Store
from benchwright.tui.cli import main

HOSTILE = "[bold]x[/] [@click=app.quit]q \x1b[31mred"


@pytest.fixture
def project(tmp_path, monkeypatch, cli_env) -> Path:
    monkeypatch.setenv("COLUMNS", "200")
    db = tmp_path / "p.db"
    repo = tmp_path / "repo"
    repo.mkdir()
    assert run(db, "init").exit_code == 0
    assert run(db, "repos", "add", "flask", str(repo), "--version", "1.0").exit_code == 0
    rows = planted()
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps({"question": t, "answer": f"answer {i}"}) + "\n"
                           for i, (_, t) in enumerate(rows)), encoding="utf-8")
    r = run(db, "pairs", "import", "jsonl", str(src), "--repo", "flask")
    assert r.exit_code == 0, r.output
    issues = tmp_path / "issues.jsonl"
    issues.write_text("".join(json.dumps({"number": i + 1, "title": f"Issue {i}", "body": t}) + "\n"
                              for i, (_, t) in enumerate(rows)), encoding="utf-8")
    r = run(db, "issues", "import", str(issues), "--repo", "flask")
    assert r.exit_code == 0, r.output
    return db


def run(db: Path, *args: str, provider=None):
    return CliRunner().invoke(main, ["--db", str(db), *args],
                              obj={"provider_factory": (lambda c, r: provider) if provider else None},
                              catch_exceptions=False)


def topic_of(db: Path) -> dict[str, str]:
    with Store.open(db) as s:
        return {pid: t for pid, (t, _) in zip(s.filtered_pair_ids("x"), planted(), strict=True)}


def test_build_from_pairs_groups_the_planted_topics_and_a_rerun_embeds_nothing(project):
    r = run(project, "taxonomy", "build", "--source", "pairs", "--k1", "3", "--k2", "6", "--seed", "1",
            "--model", "hashing")
    assert r.exit_code == 0, r.output
    assert "embedded 90 texts with hashing (256 dimensions), 0 from the cache" in r.output
    assert "taxonomy version 1 (build, lineage 1) · source pairs · 90 items" in r.output
    truth = topic_of(project)
    with Store.open(project) as s:
        tax = s.taxonomy_version().taxonomy
        for node in tax.level1:
            assert len({truth[m.item_id] for m in tax.members_of(node.node_id)}) == 1
    again = run(project, "taxonomy", "build", "--source", "pairs", "--k1", "3", "--k2", "6", "--seed", "1",
                "--model", "hashing")
    assert "embedded 0 texts with hashing (256 dimensions), 90 from the cache" in again.output
    with Store.open(project) as s:
        assert [m.node_id for m in s.taxonomy_version(2).taxonomy.members] == [m.node_id for m in tax.members]


def test_build_from_issues_and_too_few_items(project):
    r = run(project, "taxonomy", "build", "--k1", "3", "--k2", "6", "--model", "hashing", "--repo", "flask")
    assert r.exit_code == 0, r.output
    assert "source issues, repository flask · 90 items" in r.output
    with Store.open(project) as s:
        assert all(m.item_id.startswith("iss_") for m in s.taxonomy_version().taxonomy.members)
    big = run(project, "taxonomy", "build", "--k1", "3", "--k2", "500", "--model", "hashing")
    assert big.exit_code == 1 and "cannot make 500 clusters (k2)" in big.output
    assert "Traceback" not in big.output


def test_build_from_issues_without_issues_says_what_to_do(tmp_path, cli_env):
    db = tmp_path / "empty.db"
    run(db, "init")
    r = run(db, "taxonomy", "build", "--model", "hashing")
    assert r.exit_code == 1 and "no issues in the project" in r.output and "--source pairs" in r.output
    assert run(db, "taxonomy", "show").output.strip() == "error: the project has no taxonomy yet"


def _labeller(fail: set[str] = frozenset()):
    """Labels every node; a request whose text contains a member of ``fail`` gets invalid output (twice)."""
    def answer(request):
        text = "\n".join(m.content for m in request.messages)  # the repair turn too
        if any(f in text for f in fail):
            return {"label": "", "description": "x"}
        kind = "Topic" if "sub-topics of one topic" in text else "Leaf"
        return {"label": f"{kind} {HOSTILE}", "description": f"About {HOSTILE}."}
    return ScriptedProvider(answer)


def _build(db):
    r = run(db, "taxonomy", "build", "--source", "pairs", "--k1", "3", "--k2", "6", "--seed", "1",
            "--model", "hashing")
    assert r.exit_code == 0, r.output


def test_label_saves_a_version_a_failed_node_stays_unlabelled_and_the_rerun_finishes(project):
    _build(project)
    with Store.open(project) as s:
        tax = s.taxonomy_version().taxonomy
        leaf = tax.leaves[0]
        ids = [m.item_id for m in tax.members_of(leaf.node_id)]
        texts = s.taxonomy_item_texts(ids)
    bad = set(texts.values())  # every member text of the first leaf
    provider = _labeller(bad)
    r = run(project, "taxonomy", "label", "--model", "m-1", "--sample", "50", "--as", "ada", provider=provider)
    assert r.exit_code == 1, r.output
    assert "label: 8 labelled, 1 failed" in r.output and f"failed {leaf.node_id}: invalid output" in r.output
    assert "saved taxonomy version 2 (from 1)" in r.output
    assert "Leaf [bold]x[/] [@click=app.quit]q ␛[31mred" in r.output  # printed literally
    with Store.open(project) as s:
        tv = s.taxonomy_version()
        assert tv.operation == "label" and tv.operation_args["failed"] == [leaf.node_id]
        assert tv.taxonomy.node(leaf.node_id).label is None
        other = tv.taxonomy.leaves[1]
        assert (other.label_origin, other.label_model, other.label_by) == ("llm", "m-1", "ada")
        assert other.label_call_ids and s._one("SELECT purpose FROM llm_calls WHERE id = ?",
                                               [other.label_call_ids[0]])[0] == "taxonomy-label"
        failed_calls = s._one("SELECT count(*) FROM llm_calls WHERE status = 'invalid'")[0]
        assert failed_calls == 2
    fixed = _labeller()
    r2 = run(project, "taxonomy", "label", "--model", "m-1", "--sample", "50", provider=fixed)
    assert r2.exit_code == 0, r2.output
    assert len(fixed.calls) == 1 and "label: 1 labelled, 0 failed" in r2.output
    assert "pairs keep their cluster names until: benchwright taxonomy assign" in r2.output
    r3 = run(project, "taxonomy", "label", "--model", "m-1", provider=_labeller())
    assert r3.exit_code == 0 and "nothing to label" in r3.output


def test_edits_history_and_assign_with_origins(project):
    _build(project)
    r = run(project, "taxonomy", "edit", "rename", "1.1", "--label", HOSTILE, "--description", "mine", "--as", "ada")
    assert r.exit_code == 0 and "rename: saved taxonomy version 2 (from 1) by ada" in r.output
    assert "[bold]x[/] [@click=app.quit]q ␛[31mred  [annotator]" in r.output
    assert run(project, "taxonomy", "edit", "merge", "2", "3", "--as", "bob").exit_code == 0
    assert run(project, "taxonomy", "edit", "split", "1.1", "--k", "2").exit_code == 0
    r = run(project, "taxonomy", "edit", "delete", "1.2")
    assert r.exit_code == 0, r.output
    bad = run(project, "taxonomy", "edit", "delete", "1")
    assert bad.exit_code == 1 and "level-1 node" in bad.output
    stale = run(project, "taxonomy", "edit", "rename", "1.1", "--label", "x", "--version", "2")
    assert stale.exit_code == 1 and "no longer the latest" in stale.output
    hist = run(project, "taxonomy", "history")
    assert [line.split()[4] for line in hist.output.splitlines()] == ["build", "rename", "merge", "split", "delete"]
    assert "ada" in hist.output.splitlines()[1] and "bob" in hist.output.splitlines()[2]
    node_hist = run(project, "taxonomy", "history", "1.1")
    assert "version 2 (rename) as 1.1: [bold]x[/]" in node_hist.output and "annotator by ada" in node_hist.output

    # assign: an imported cluster and a human one are kept without --force
    with Store.open(project) as s:
        first, second = s.filtered_pair_ids("x")[:2]
        # as an import that carried a cluster leaves it (qa_pairs.cluster_origin 'imported')
        s.db.conn.execute("UPDATE qa_pairs SET cluster_id = 'up.1', cluster_name = 'Upstream', "
                          "cluster_origin = 'imported' WHERE id = ?", [first])
        s.db.conn.commit()
    r = run(project, "taxonomy", "assign", "--pair", second, "--node", "1.1", "--as", "ada")
    assert r.exit_code == 0 and "now on 1.1 (set by ada)" in r.output
    r = run(project, "taxonomy", "assign")
    assert r.exit_code == 0, r.output
    assert "90 pairs; 88 assigned, 0 unchanged, 1 kept-imported, 1 kept-annotator (--force replaces those)" in r.output
    assert "leaves have no label yet, so their pairs have no cluster_name" in r.output
    with Store.open(project) as s:
        tv = s.taxonomy_version()
        third = s.get_pair(s.filtered_pair_ids("x")[2])
        assert third.cluster_id in {n.node_id for n in tv.taxonomy.leaves}
        assert third.cluster_name == tv.taxonomy.node(third.cluster_id).label
    r = run(project, "taxonomy", "assign")
    assert "0 assigned, 88 unchanged, 1 kept-imported, 1 kept-annotator" in r.output
    with Store.open(project) as s:
        assert (s.get_pair(first).cluster_id, s.get_pair(second).cluster_id) == ("up.1", "1.1")
    r = run(project, "taxonomy", "assign", "--force")
    assert "2 assigned, 88 unchanged, 0 kept-imported, 0 kept-annotator" in r.output
    level1 = run(project, "taxonomy", "assign", "--pair", second, "--node", "1")
    assert level1.exit_code == 1 and "a pair's cluster is a leaf" in level1.output
    show = run(project, "taxonomy", "show", "--members", "1")
    assert show.exit_code == 0 and "taxonomy version 5 (delete, lineage 1)" in show.output


@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_a_seed_kmeans_cannot_take_is_a_usage_error(project, seed):
    r = CliRunner().invoke(main, ["--db", str(project), "taxonomy", "build", "--source", "pairs", "--k1", "3",
                                  "--k2", "6", "--model", "hashing", "--seed", seed])
    assert r.exit_code == 2 and "--seed" in r.output and "Traceback" not in r.output
    _build(project)
    r = CliRunner().invoke(main, ["--db", str(project), "taxonomy", "edit", "split", "1.1", "--k", "2",
                                  "--seed", seed])
    assert r.exit_code == 2 and "--seed" in r.output


def test_a_number_past_sqlite_integer_is_an_error_not_a_traceback(project):
    _build(project)
    huge = str(10**30)
    for args in (("taxonomy", "show", "--version", huge), ("taxonomy", "show", "--members", huge),
                 ("taxonomy", "assign", "--version", huge), ("issues", "list", "--limit", huge)):
        r = CliRunner().invoke(main, ["--db", str(project), *args])
        assert r.exit_code == 1 and "a number given is too large" in r.output, (args, r.output)
