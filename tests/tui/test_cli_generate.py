"""``benchwright generate STEP``, ``links`` and ``calls`` through click's CliRunner, with the scripted provider
injected through ``obj={"provider_factory": ...}`` (no network, no keys)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.importers import parse
from benchwright.core.llm import ScriptedProvider
from benchwright.core.models import Repository
from benchwright.db import QueueFilter, Store
from benchwright.tui.cli import main

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
BENCHMARK = DATA / "swe-qa" / "Benchmark__flask.jsonl"
N = 6

VALID = {"items": [
    {"kind": "knowledge", "key_point": "Fact one", "weight": 9,
     "rubric": [{"score": 0, "criterion": "Missing."}, {"score": 9, "criterion": "Stated."}]},
    {"kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
     "rubric": [{"score": 0, "criterion": "Severe hallucination, or an incoherent, disorganized answer."},
                {"score": 1, "criterion": "Clear, well-organized answer without severe hallucination."}]},
]}
_Q = re.compile(r"<question>\n(.*?)\n</question>", re.S)


def answer_for(request, bad_questions=frozenset()):
    """A valid output for each step (by schema name); a rule-breaking checklist for ``bad_questions``."""
    name = request.schema_name
    if name == "classification":
        return {"rationale": "r", "code_understanding_relevant": True, "category": "Business Logic"}
    if name == "link_summary":
        return {"rationale": "r", "relevant": True, "summary": "s"}
    if name == "integrated_pair":
        return {"question": "Integrated Q?", "answer": "Integrated A."}
    if name == "refined_pair":
        return {"question": "Refined Q?", "answer": "Refined A.", "changes": "c"}
    if name == "verification":
        return {"self_contained": {"rationale": "r", "passed": True}, "answerable": {"rationale": "r", "passed": True}}
    q = _Q.search(request.messages[0].content).group(1)
    if q in bad_questions:
        return {"items": [dict(VALID["items"][0], weight=8, rubric=[{"score": 0, "criterion": "No."},
                                                                   {"score": 8, "criterion": "Yes."}]),
                          VALID["items"][1]]}
    return VALID


class Factory:
    """A provider factory that hands out one scripted provider and remembers what it was asked for."""

    def __init__(self, script=answer_for, concurrency: int = 4):
        self.provider = ScriptedProvider(script, concurrency=concurrency)
        self.roles: list = []

    def __call__(self, config, role_config):
        self.roles.append(role_config)
        return self.provider

    @property
    def calls(self) -> int:
        return len(self.provider.calls)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project with the first N SWE-QA flask pairs; no user configuration."""
    if not BENCHMARK.exists():
        pytest.skip(f"real data {BENCHMARK} is absent (the shared data folder ../shared/data is not checked out here)")
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    monkeypatch.setenv("BENCHWRIGHT_ANNOTATOR", "tester")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    src = tmp_path / "flask.jsonl"
    src.write_text("".join(BENCHMARK.read_text(encoding="utf-8").splitlines(keepends=True)[:N]), encoding="utf-8")
    db = tmp_path / "proj" / "project.db"
    db.parent.mkdir()
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="flask", version_label="3.1.1"), "setup")
        store.apply_import(parse("swe-qa", src, repository="flask"), annotator="setup", file_path=src)
    return db


def gen(db: Path, *args: str, factory: Factory | None = None):
    return CliRunner().invoke(main, ["--db", str(db), *args], obj={"provider_factory": factory},
                              catch_exceptions=False)


def ids(db: Path) -> list[str]:
    with Store.open(db) as s:
        return [r.id for r in s.queue_page("x", limit=100)]


# -------------------------------------------------------------------------------------------------- steps
@pytest.mark.parametrize("step", ["classify", "enrich", "refine", "checklist", "verify"])
def test_generate_each_step_then_rerun_does_nothing(project, step):
    f = Factory()
    r = gen(project, "curation", "run", step, "--model", "gen-1", factory=f)
    assert r.exit_code == 0, r.output
    expected_calls = 0 if step == "enrich" else N  # the flask pairs have no external links
    assert f.calls == expected_calls
    assert f"{step}: {N} ok, 0 failed, 0 flagged; {expected_calls} calls made" in r.output
    assert f.roles[0].model == "gen-1" and f.roles[0].role == ("verifier" if step == "verify" else "generator")
    with Store.open(project) as s:
        assert set(s.pairs_with_step_done(step)) == set(ids(project))
        if step == "checklist":
            assert all(s.checklist_version(i).origin == "generated" for i in ids(project))
    again = Factory()
    r2 = gen(project, "curation", "run", step, "--model", "gen-1", factory=again)
    assert r2.exit_code == 0 and "nothing to do" in r2.output and again.calls == 0 and again.roles == []
    forced = Factory()
    r3 = gen(project, "curation", "run", step, "--model", "gen-1", "--force", factory=forced)
    assert r3.exit_code == 0 and forced.calls == expected_calls
    with Store.open(project) as s:
        assert len(s.curation_history(ids(project)[0], step)) == 2


def test_rerun_after_a_lost_result_reuses_the_ledger(project):
    """Calls finished but results not saved (a crash between the two): the rerun makes 0 calls."""
    f = Factory()
    assert gen(project, "curation", "run", "classify", "--model", "gen-1", factory=f).exit_code == 0
    with Store.open(project) as s, s.write() as db:
        db.conn.execute("DELETE FROM curation_current")
    f2 = Factory()
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", factory=f2)
    assert r.exit_code == 0 and f2.calls == 0 and f"0 calls made, {N} cached" in r.output


def test_where_limit_and_pair_choose_the_pairs(project):
    all_ids = ids(project)
    f = Factory()
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--limit", "2", factory=f)
    assert r.exit_code == 0 and f.calls == 2 and "2 ok" in r.output
    with Store.open(project) as s:
        assert set(s.pairs_with_step_done("classify")) == set(all_ids[:2])
        q3 = s.get_pair(all_ids[3]).question
    f = Factory()
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--pair", "#4", "--pair", all_ids[5], factory=f)
    assert r.exit_code == 0 and f.calls == 2
    sent = {_Q.search(c.messages[0].content).group(1) for c in f.provider.calls}
    assert q3 in sent
    with Store.open(project) as s:
        assert set(s.pairs_with_step_done("classify")) == {*all_ids[:2], all_ids[3], all_ids[5]}
    # --where on the curation state: the pairs not classified yet
    f = Factory()
    r = gen(project, "curation", "run", "refine", "--model", "gen-1", "--where", "curation=not-classified", factory=f)
    assert r.exit_code == 0 and f.calls == 2
    with Store.open(project) as s:
        assert set(s.pairs_with_step_done("refine")) == {all_ids[2], all_ids[4]}
    f = Factory()
    r = gen(project, "curation", "run", "verify", "--model", "gen-1", "--where", "text=no such text anywhere", factory=f)
    assert r.exit_code == 0 and "no pair matches the filter" in r.output and f.calls == 0


@pytest.mark.parametrize("where, message", [
    ("color=red", "unknown key 'color'"),
    ("curation", "write KEY=VALUE"),
    ("curation=bogus", "unknown curation filter 'bogus'"),
    ("status=maybe", "unknown status 'maybe'"),
])
def test_bad_where_exits_1_with_a_message(project, where, message):
    f = Factory()
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--where", where, factory=f)
    assert r.exit_code == 1 and "error:" in r.output and message in r.output and f.calls == 0
    assert "Traceback" not in r.output


def test_where_key_twice_is_an_error(project):
    r = gen(project, "curation", "run", "classify", "--model", "m", "--where", "text=a", "--where", "text=b",
            factory=Factory())
    assert r.exit_code == 1 and "given twice" in r.output


def test_failed_pairs_exit_1_and_are_listed(project):
    all_ids = ids(project)
    with Store.open(project) as s:
        bad = {s.get_pair(all_ids[1]).question, s.get_pair(all_ids[4]).question}
    f = Factory(lambda r: answer_for(r, bad))
    r = gen(project, "curation", "run", "checklist", "--model", "gen-1", factory=f)
    assert r.exit_code == 1
    assert f"checklist: {N - 2} ok, 2 failed" in r.output
    assert f"failed #2 {all_ids[1]}: checklist: invalid output after one repair attempt" in r.output
    assert f"failed #5 {all_ids[4][:12]}" in r.output
    assert "knowledge weights sum to 8" in r.output
    assert f.calls == N + 2  # one repair turn each for the two bad pairs
    with Store.open(project) as s:
        assert s.checklist_version(all_ids[1]) is None
        failed = [x.id for x in s.queue_page("x", QueueFilter(curation="step-failed"))]
        assert failed == [all_ids[1], all_ids[4]]
    # the rerun takes only the failed pairs; the cached failures are not reused, so they are asked again
    f2 = Factory()
    r = gen(project, "curation", "run", "checklist", "--model", "gen-1", factory=f2)
    assert r.exit_code == 0 and "2 ok, 0 failed" in r.output and f2.calls == 2


def test_missing_model_is_a_clear_error(project):
    r = gen(project, "curation", "run", "classify", factory=Factory())
    assert r.exit_code == 1 and "no model configured for the generator role" in r.output
    assert "--model" in r.output and "Traceback" not in r.output


def test_model_comes_from_benchwright_toml(project):
    (project.parent / "benchwright.toml").write_text(
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n\n'
        '[roles.verifier]\nprovider = "local"\nmodel = "checker-7b"\ntemperature = 0.0\n', encoding="utf-8")
    f = Factory()
    r = gen(project, "curation", "run", "verify", "--limit", "1", factory=f)
    assert r.exit_code == 0, r.output
    role = f.roles[0]
    assert (role.provider, role.model, role.params) == ("local", "checker-7b", {"temperature": 0.0})
    assert f.provider.calls[0].model == "checker-7b" and f.provider.calls[0].params == {"temperature": 0.0}


def test_unknown_step_is_rejected(project):
    r = gen(project, "curation", "run", "judge", "--model", "m", factory=Factory())
    assert r.exit_code == 2 and "judge" in r.output


# -------------------------------------------------------------------------------------------------- links
def test_links_add_and_list(project, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Flask API docs.\n", encoding="utf-8")
    r = gen(project, "links", "list")
    assert r.exit_code == 0 and "no links saved" in r.output
    r = gen(project, "links", "add", "https://flask.palletsprojects.com/api/", str(page))
    assert r.exit_code == 0 and "saved https://flask.palletsprojects.com/api/ (16 characters" in r.output
    r = gen(project, "links", "list")
    assert "https://flask.palletsprojects.com/api/\t16 chars" in r.output
    with Store.open(project) as s:
        assert s.get_link("https://flask.palletsprojects.com/api/").content == "Flask API docs.\n"


@pytest.mark.parametrize("url, file, message", [
    ("https://example.org/a", "missing.md", "no such file"),
    ("https://example.org/a", "binary.bin", "not UTF-8 text"),
    ("https://example.org/a", "empty.md", "the file is empty"),
    ("http://localhost:5000/docs", "page.md", "not an external http(s) URL"),
    ("http://192.168.1.4/docs", "page.md", "not an external http(s) URL"),
])
def test_links_add_errors(project, tmp_path, url, file, message):
    (tmp_path / "page.md").write_text("text", encoding="utf-8")
    (tmp_path / "binary.bin").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "empty.md").write_text("  \n", encoding="utf-8")
    r = gen(project, "links", "add", url, str(tmp_path / file))
    assert r.exit_code == 1 and "error: " in r.output and message in r.output
    with Store.open(project) as s:
        assert s.links() == []


def test_enrich_uses_a_saved_link(project, tmp_path):
    """A pair whose answer cites a saved page: enrich summarizes and integrates it."""
    url = "https://flask.palletsprojects.com/en/stable/api/"
    src = tmp_path / "linked.jsonl"
    src.write_text(json.dumps({"question": "How is ensure_ascii documented?", "answer": f"See {url} for it."}) + "\n")
    with Store.open(project) as s:
        s.apply_import(parse("swe-qa", src, repository="flask"), annotator="setup", file_path=src)
    page = tmp_path / "api.md"
    page.write_text("ensure_ascii escapes non-ASCII.", encoding="utf-8")
    assert gen(project, "links", "add", url, str(page)).exit_code == 0
    f = Factory()
    r = gen(project, "curation", "run", "enrich", "--model", "gen-1", factory=f)
    assert r.exit_code == 0 and f.calls == 2 and f"{N + 1} ok" in r.output
    with Store.open(project) as s:
        res = s.curation_current(ids(project)[-1])["enrich"]
    assert res.output["integrated"] and res.output["question"] == "Integrated Q?"


# -------------------------------------------------------------------------------------------------- calls
def test_calls_list_and_summary(project):
    all_ids = ids(project)
    with Store.open(project) as s:
        bad = {s.get_pair(all_ids[0]).question}
    gen(project, "curation", "run", "checklist", "--model", "gen-1", factory=Factory(lambda r: answer_for(r, bad)))
    r = gen(project, "calls", "--summary", "--json")
    assert r.exit_code == 0
    rows = [json.loads(line) for line in r.output.splitlines()]
    by_status = {(x["purpose"], x["model"], x["status"]): x["calls"] for x in rows}
    assert by_status == {("checklist", "gen-1", "invalid"): 2, ("checklist", "gen-1", "ok"): N - 1}
    r = gen(project, "calls", "--summary")
    assert r.exit_code == 0 and "checklist" in r.output and "invalid" in r.output and "gen-1" in r.output
    r = gen(project, "calls", "--status", "invalid", "--json")
    lines = [json.loads(x) for x in r.output.splitlines()]
    assert [x["attempt"] for x in lines] == [1, 2] and all(x["status"] == "invalid" for x in lines)
    r = gen(project, "calls", "--pair", "#1")
    assert r.exit_code == 0 and "invalid" in r.output
    r = gen(project, "calls", "--pair", "#99")
    assert r.exit_code == 1 and "error:" in r.output


def test_pair_prefix_and_case_insensitive_where(project):
    all_ids = ids(project)
    f = Factory()
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--pair", all_ids[2][:9], factory=f)
    assert r.exit_code == 0 and f.calls == 1, r.output
    with Store.open(project) as s:
        assert set(s.pairs_with_step_done("classify")) == {all_ids[2]}
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--pair", "qa_", factory=Factory())
    assert r.exit_code == 1 and "no Q&A pair" in r.output
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--where", "repository=FLASK", factory=Factory())
    assert r.exit_code == 0, r.output
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--where", "repository=nosuch", factory=Factory())
    assert r.exit_code == 1 and "--where repository=nosuch: no pair has it; values: flask" in r.output


def test_a_finished_forced_run_starts_afresh_next_time(project):
    f = Factory()
    assert gen(project, "curation", "run", "classify", "--model", "gen-1", "--limit", "2", factory=f).exit_code == 0
    for _ in range(2):
        f = Factory()
        r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--limit", "2", "--force", factory=f)
        assert r.exit_code == 0 and f.calls == 2 and "continuing" not in r.output


def test_links_add_drops_the_fragment_and_refuses_spaces(project, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("x" * 50_001)
    r = gen(project, "links", "add", "https://example.org/docs#part", str(page))
    assert r.exit_code == 0 and "saved https://example.org/docs (" in r.output and "fragment is dropped" in r.output
    assert "only the first 40,000 characters go to the model" in r.output
    with Store.open(project) as s:
        assert [lk.url for lk in s.links()] == ["https://example.org/docs"]
    r = gen(project, "links", "add", "https://example.org/ sp", str(page))
    assert r.exit_code == 1 and "no spaces" in r.output


def test_negative_usage_is_counted_as_zero():
    from benchwright.core.llm import Usage

    assert Usage(-1, 5, -3, 2) == Usage(0, 5, 0, 2)



def test_a_different_returned_model_is_pointed_out(project):
    class OtherModel(ScriptedProvider):
        async def complete(self, request):
            response = await super().complete(request)
            response.model = self.answer_as
            return response

    def factory_for(answer_as):
        def make(config, role):
            p = OtherModel(lambda r: {"rationale": "r", "code_understanding_relevant": True,
                                      "category": "Business Logic"})
            p.answer_as = answer_as
            return p
        return make

    r = CliRunner().invoke(main, ["--db", str(project), "curation", "run", "classify", "--model", "gen-1", "--limit", "1"],
                           obj={"provider_factory": factory_for("gen-1-2026-01-01")})
    assert r.exit_code == 0 and "note: asked for model" not in r.output  # a dated variant of the same model
    r = CliRunner().invoke(main, ["--db", str(project), "curation", "run", "classify", "--model", "gen-1", "--limit", "1",
                                  "--force"], obj={"provider_factory": factory_for("something-else")})
    assert r.exit_code == 0, r.output
    assert "note: asked for model gen-1, the server answered as something-else" in r.output


def test_status_counts_curation_results(project):
    f = Factory()
    assert gen(project, "curation", "run", "classify", "--model", "gen-1", "--limit", "2", factory=f).exit_code == 0
    r = CliRunner().invoke(main, ["--db", str(project), "status"])
    assert r.exit_code == 0 and "curation classify: 2 ok, 0 failed, 0 flagged" in r.output
    assert "curation refine" not in r.output  # steps never run are not listed


def test_summary_says_cost_unknown_without_a_price_and_gives_it_with_one(project):
    """No price configured: the summary says the cost is unknown (never ``$0.0000``); with a price, dollars."""
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", factory=Factory())
    assert r.exit_code == 0, r.output
    assert "cost unknown (no price configured)" in r.output and "$0.0000" not in r.output
    (project.parent / "benchwright.toml").write_text('[prices."gen-1"]\ninput = 1000.0\noutput = 1000.0\n',
                                                     encoding="utf-8")
    r = gen(project, "curation", "run", "classify", "--model", "gen-1", "--force", factory=Factory())
    assert r.exit_code == 0, r.output
    assert "cost unknown" not in r.output
    assert re.search(r"tokens, \$\d+\.\d{4}$", r.output.strip().splitlines()[-1]), r.output
