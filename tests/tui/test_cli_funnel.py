"""The funnel end to end over the scripted fake (no network, no keys): 12 pairs with fixed drops (2 rely on an
image, 3 not code-understanding relevant, 2 fail the verifier), records filtered at import, reviews accepting
some and rejecting one with its reason; ``benchwright funnel`` and ``curation run`` gating, ``--all``, the
``curation=passed|dropped:STEP`` filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from llm_server import VALID_CHECKLIST

from benchwright.core.checklist import Checklist
from benchwright.core.importers import parse
from benchwright.core.llm import ScriptedProvider
from benchwright.core.models import Repository
from benchwright.db import QueueFilter, Store
from benchwright.tui.cli import main

QUESTIONS = [
    "Q1 [bold]where[/] is it? ![screenshot](https://example.org/shot.png)",  # images: question
    "Q2 how does the router work?",  # images: the answer has an <img>
    "Q3 NOTREL which laptop should I buy?",
    "Q4 NOTREL how do I install python?",
    "Q5 NOTREL what is the licence?",
    "Q6 NOTCONTAINED what does it do in that file?",
    "Q7 NOTCONTAINED NOTANSWERABLE what did the maintainer mean?",
    "Q8 where are blueprints registered?",
    "Q9 how is the config loaded?",
    "Q10 why does the app context exist?",
    "Q11 what does url_for build?",
    "Q12 how are errors handled?",
]


def _text(request) -> str:
    return "\n".join(m.content for m in request.messages)


def answer(request):
    text = _text(request)
    if request.schema_name == "classification":
        return {"rationale": "r", "code_understanding_relevant": "NOTREL" not in text,
                "category": "Project Architecture"}
    if request.schema_name == "verification":
        return {"self_contained": {"rationale": "r", "passed": "NOTCONTAINED" not in text},
                "answerable": {"rationale": "r", "passed": "NOTANSWERABLE" not in text}}
    raise AssertionError(request.schema_name)


class Factory:
    def __init__(self):
        self.provider = ScriptedProvider(answer)

    def __call__(self, config, role_config):
        return self.provider


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    monkeypatch.setenv("BENCHWRIGHT_ANNOTATOR", "tester")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    src = tmp_path / "pairs.jsonl"
    rows = [{"id": f"u{i}", "question": q,
             "answer": "See <img src='x.png'> there" if i == 2 else f"answer {i} in src/app.py"}
            for i, q in enumerate(QUESTIONS, 1)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "proj" / "project.db"
    db.parent.mkdir()
    code = tmp_path / "demo-code"  # a plain folder: 2 text files (3 and 2 lines), a binary file, a .git folder
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "app.py").write_text("import os\n\nprint(os.sep)\n")
    (code / "README.md").write_bytes(b"# demo\n\xff\xfe not UTF-8, still text")
    (code / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (code / ".git").mkdir()
    (code / ".git" / "config").write_text("ignored\n")
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="demo", version_label="1.0", local_path=str(code), language="Python"),
                             "setup")
        batch = store.apply_import(parse("jsonl", src, repository="demo", mapping=["id=id"]), annotator="setup",
                                   file_path=src).batch_id
        # what a Discussions import records of the threads it left out: u9 was filtered once and imported
        # since (counted once, as a pair); u100 twice (counted once)
        filtered = [{"where": "x", "upstream_id": "u100", "url": None, "reason": "unanswered"},
                    {"where": "x", "upstream_id": "u101", "url": None,
                     "reason": "question relies on an image: markdown image: ![a](b)"},
                    {"where": "x", "upstream_id": "u102", "url": None, "reason": "category Ideas not in Q&A, Help"},
                    {"where": "x", "upstream_id": "u9", "url": None, "reason": "no accepted answer"},
                    {"where": "x", "upstream_id": "u100", "url": None, "reason": "unanswered"}]
        with store.write() as w:
            w.conn.execute("UPDATE import_batches SET filtered_count = ?, filtered_json = ? WHERE id = ?",
                           [len(filtered), json.dumps(filtered), batch])
    return db


def cli(db: Path, *args: str, factory=None):
    return CliRunner().invoke(main, ["--db", str(db), *args], obj={"provider_factory": factory},
                              catch_exceptions=False)


def by_question(store: Store) -> dict[str, str]:
    return {r.question.split()[0]: r.id for r in store.queue_page("x", limit=100)}


def stages_of(db: Path, tmp_path: Path, *args: str) -> dict[str, dict]:
    out = tmp_path / "funnel.json"
    r = cli(db, "funnel", "--json", str(out), *args)
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text(encoding="utf-8"))
    return data, {s["stage"]: s for s in data["stages"]}


def test_the_funnel_counts_every_stage_exactly(project, tmp_path):
    f = Factory()
    r = cli(project, "curation", "run", "images")
    assert r.exit_code == 0 and "images: 12 ok, 0 failed, 2 flagged; 0 calls made" in r.output, r.output
    r = cli(project, "curation", "run", "classify", "--model", "gen-1", factory=f)
    assert r.exit_code == 0 and "classify: left 2 pairs dropped by images alone (--all runs them too)" in r.output
    assert len(f.provider.calls) == 10
    r = cli(project, "curation", "run", "verify", "--model", "ver-1", factory=f)
    assert "verify: left 3 pairs dropped by classify, 2 by images alone (--all runs them too)" in r.output, r.output
    assert len(f.provider.calls) == 17
    with Store.open(project) as store:
        q = by_question(store)
        for n in ("Q8", "Q9", "Q10"):
            store.record_decision(q[n], "ada", "accept")
        store.record_decision(q["Q11"], "ada", "reject", reason="task_validity")
        store.record_decision(q["Q3"], "ada", "accept")  # classify dropped it: not in human QA's count
    data, st = stages_of(project, tmp_path)
    assert data["release"] is None
    got = {k: (s["in"], s["out"], s["dropped"], s["failed"], s["not_run"]) for k, s in st.items()}
    assert got == {
        "harvested": (15, 15, {}, 0, 0),
        "imported": (15, 12, {"category not imported": 1, "relies on an image": 1, "unanswered": 1}, 0, 0),
        "images": (12, 10, {"relies on an image": 2}, 0, 0),
        "classify": (10, 7, {"not code-understanding relevant": 3}, 0, 0),
        "enrich": (7, 0, {}, 0, 7),
        "refine": (7, 0, {}, 0, 7),
        "checklist": (7, 0, {}, 0, 7),
        "verify": (7, 5, {"not self-contained": 1, "not self-contained + not answerable": 1}, 0, 0),
        "human QA": (5, 3, {"task validity": 1}, 0, 1),
        "released": (3, 0, {}, 0, 3),
    }
    for s in st.values():  # every pair that entered is exactly one of these
        assert s["in"] == s["out"] + sum(s["dropped"].values()) + s["failed"] + s["not_run"]
    r = cli(project, "funnel")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert any(line.split("│")[0].strip() == "verify" and [c.strip() for c in line.split("│")[1:]] == ["7", "5", "2", "0", "0"]
               for line in lines), r.output
    assert "not self-contained + not answerable" in r.output and "no release made yet" in r.output


def test_all_runs_dropped_pairs_and_filters_select_them(project):
    f = Factory()
    cli(project, "curation", "run", "images")
    cli(project, "curation", "run", "classify", "--model", "gen-1", factory=f)
    with Store.open(project) as store:
        q = by_question(store)
        assert set(store.filtered_pair_ids("x", QueueFilter(curation="dropped:images"))) == {q["Q1"], q["Q2"]}
        assert set(store.filtered_pair_ids("x", QueueFilter(curation="dropped:classify"))) == {q["Q3"], q["Q4"], q["Q5"]}
        assert store.filtered_pair_ids("x", QueueFilter(curation="dropped:verify")) == []
        passed = set(store.filtered_pair_ids("x", QueueFilter(curation="passed")))
        assert passed == {q[f"Q{i}"] for i in range(6, 13)}
        assert store.dropped_pairs() == {q["Q1"]: "images", q["Q2"]: "images", q["Q3"]: "classify",
                                         q["Q4"]: "classify", q["Q5"]: "classify"}
    r = cli(project, "curation", "run", "verify", "--model", "ver-1", "--where", "curation=dropped:classify",
            factory=f)
    assert r.exit_code == 0 and "nothing to do; every matching pair was dropped by an earlier gating step" in r.output
    before = len(f.provider.calls)
    r = cli(project, "curation", "run", "verify", "--model", "ver-1", "--where", "curation=dropped:classify",
            "--all", factory=f)
    assert r.exit_code == 0 and "verify: 3 ok" in r.output, r.output
    assert len(f.provider.calls) == before + 3
    with Store.open(project) as store:
        q = by_question(store)
        # a pair classify dropped and verify passed is not "passed"; one that verify failed is dropped by it too
        assert q["Q3"] not in store.filtered_pair_ids("x", QueueFilter(curation="passed"))
    r = cli(project, "curation", "run", "classify", "--where", "curation=dropped:nope")
    assert r.exit_code == 1 and "unknown curation filter 'dropped:nope'" in r.output



def test_releases_refuse_dropped_pairs_and_the_card_carries_the_funnel(project, tmp_path):
    f = Factory()
    cli(project, "curation", "run", "images")
    cli(project, "curation", "run", "classify", "--model", "gen-1", factory=f)
    cli(project, "curation", "run", "verify", "--model", "ver-1", factory=f)
    with Store.open(project) as store:
        q = by_question(store)
        for n in ("Q3", "Q8", "Q9", "Q10"):  # Q3: classify dropped it
            store.save_checklist(q[n], Checklist.model_validate(VALID_CHECKLIST), author="ada")
            store.record_decision(q[n], "ada", "accept")
        store.save_curation_result(q["Q8"], "enrich", status="ok", by="t",
                                   output={"links": [], "integrated": True, "question": "x", "answer": "y"})
    r = cli(project, "releases", "preflight", "--list")
    assert r.exit_code == 0 and "included: 3 pairs" in r.output, r.output
    assert "excluded: 3 pairs: dropped by classify (not code-understanding relevant)" in r.output
    assert "excluded: 2 pairs: dropped by images (relies on an image)" in r.output
    r = cli(project, "releases", "preflight", "--include-dropped")
    assert "included: 4 pairs" in r.output, r.output
    out = tmp_path / "rel"
    r = cli(project, "releases", "create", "demo-qa", "--version", "1.0.0", "--out", str(out))
    assert r.exit_code == 0, r.output
    folder = out / "demo-qa-1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert "include_dropped" not in manifest
    stages = {s["stage"]: s for s in manifest["funnel"]}
    assert (stages["released"]["in"], stages["released"]["out"]) == (3, 3)
    assert stages["classify"]["dropped"] == {"not code-understanding relevant": 3}
    stats = manifest["repository_statistics"]
    assert stats["per_repository"] == {"demo": {"pairs": 3, "files": 2, "lines": 5}}
    assert (stats["files_per_repository"], stats["lines_per_repository"], stats["languages"]) == (2.0, 5.0, ["Python"])
    assert (stats["merged_context"], stats["merged_context_share"]) == (1, 0.3333)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| released | 3 | 3 | - | 0 | 0 |" in card
    assert "| &nbsp;&nbsp;not self-contained + not answerable |  |  | 1 |  |  |" in card
    assert "| lines of code per repository (mean) | 5.0 |" in card
    assert "| pairs with merged external context | 1 (33.3%) |" in card
    # the checkout and the project change; the rebuild uses the figures recorded with the release
    (Path(stats_root := str(tmp_path / "demo-code")) / "more.py").write_text("a\nb\n")
    with Store.open(project) as store:  # enrich runs on a pair verify dropped: the funnel's counts change
        store.save_curation_result(by_question(store)["Q6"], "enrich", status="ok", by="t",
                                   output={"links": [], "integrated": False, "question": "x", "answer": "y"})
    assert stages_of(project, tmp_path)[1]["enrich"]["out"] == 2
    r = cli(project, "releases", "rebuild", "demo-qa", "--version", "1.0.0", "--out", str(tmp_path / "again"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "again" / "demo-qa-1.0.0" / "README.md").read_bytes() == (folder / "README.md").read_bytes()
    assert stats_root  # (named for the reader: the folder counted at release time)
    # the funnel command counts the latest release's pairs
    data, st = stages_of(project, tmp_path)
    assert data["release"] == {"name": "demo-qa", "version": "1.0.0"} and st["released"]["out"] == 3
    r = cli(project, "releases", "create", "demo-qa", "--version", "1.1.0", "--out", str(out), "--include-dropped")
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "demo-qa-1.1.0" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["include_dropped"] is True and manifest["n_pairs"] == 4
    card = (out / "demo-qa-1.1.0" / "README.md").read_text(encoding="utf-8")
    assert "| released | 3 | 3 | - | 0 | 0 |" in card  # the dropped pair shipped is not counted as released...
    assert "Made with `--include-dropped`" in card and "(the release holds 4 pairs; `released` counts 3)" in card
    r = cli(project, "releases", "rebuild", "demo-qa", "--version", "1.1.0", "--out", str(tmp_path / "again2"))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "again2" / "demo-qa-1.1.0" / "README.md").read_text(encoding="utf-8") == card


def test_an_unresolved_link_fails_the_verifiers_link_check(project, tmp_path):
    f = Factory()
    cli(project, "curation", "run", "images")
    cli(project, "curation", "run", "classify", "--model", "gen-1", factory=f)
    with Store.open(project) as store:
        q = by_question(store)
        store.save_curation_result(q["Q9"], "enrich", status="ok", flagged=True, by="t", output={
            "links": [{"url": "https://example.org/[bold]gone[/]", "status": "unresolved", "rationale": "r",
                       "summary": ""}], "integrated": False, "question": "x", "answer": "y"})
    r = cli(project, "curation", "run", "verify", "--model", "ver-1", "--pair", q["Q9"], "--pair", q["Q8"], factory=f)
    assert r.exit_code == 0 and "verify: 2 ok, 0 failed, 1 flagged" in r.output, r.output
    with Store.open(project) as store:
        res = store.curation_current(q["Q9"])["verify"]
        assert res.flagged and res.output["links"] == {
            "rationale": "unresolved external links: https://example.org/[bold]gone[/]", "passed": False}
        assert not store.curation_current(q["Q8"])["verify"].flagged
    assert stages_of(project, tmp_path)[1]["verify"]["dropped"] == {"unresolved link": 1}


def test_reasons_from_data_are_printed_literally(project, tmp_path):
    with Store.open(project) as store, store.write() as w:
        w.conn.execute("UPDATE import_batches SET filtered_count = 1, filtered_json = ?", [json.dumps(
            [{"where": "x", "upstream_id": "[@click=quit]", "url": None, "reason": "[bold]odd[/] \x1b[31mred"}])])
    r = cli(project, "funnel", "--by", "repository")
    assert r.exit_code == 0, r.output
    assert "[bold]odd[/] ␛[31mred" in r.output and "\x1b" not in r.output
    assert "Repository demo" in r.output
    assert stages_of(project, tmp_path)[1]["imported"]["dropped"] == {"[bold]odd[/] \x1b[31mred": 1}
