"""The rules editor on cases imported from a NITR checkout: every rule condition NITR uses is shown and edited
(one of each kind, global rules, normalize, enabled_if), the live preview matches as NITR does (re.MULTILINE,
one finding per file, normalize), and saving keeps everything: the whole pipeline is written (every other
module, rule and key as it was), it reads back as what was stored, and the checkout itself is never written
(the evaluator is copied beside the project first)."""

from __future__ import annotations

import hashlib
import json
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Checkbox, Input, Select, TextArea

from benchwright.core.probes import Probe
from benchwright.core.probes.pipeline import parse_pipeline
from benchwright.db import Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.cli import main
from benchwright.tui.screens.rules_editor import RulesEditorScreen

NITR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr"
CASE = "060.mini"
SOURCES = {
    "src/a.cc": '// a.cc\n#include "a.h"\nint parse(const char* s) { return std::stoi(s); }\n#define add(x, y) ((x) + (y))\n',
    "src/b.cc": "/* std::stoi in a comment */\nint b() { return 2; }\n",
    "src/a.h": "int parse(const char* s);\n",
}
PIPELINE = {
    "case_root": f"../../.submit-output/m/cases/{CASE}", "baseline_case_root": f"../../cases/{CASE}",
    "build_dir": "../../build", "variables": {"strict": False},
    "modules": [
        {"module_name": "source_analysis", "name": "checks", "scan_roots": ["src"],
         "rules": [{"id": "r1", "message": "stoi in {path}", "any_substrings": ["std::stoi"]},
                   {"id": "r2", "message": "no seam in {relative_path}", "not": {"any_patterns": ["Validate\\("]}}],
         "global_rules": [{"id": "g1", "any_substrings": ["int "], "max_matching_files": 1,
                           "message": "{matching_file_count} files: {matching_files}"}]},
        {"module_name": "source_analysis", "name": "hidden", "enabled_if": "strict", "scan_roots": ["src"],
         "suffixes": [".cc"], "rules": [{"id": "r3", "any_patterns": ["^#define"], "message": "{location}"}]},
    ],
}


def run(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def _checkout(tmp_path: Path) -> Path:
    """A tiny NITR checkout (one case, source rules only)."""
    root = tmp_path / "nitr"
    files = {f"cases/{CASE}/TASK.md": "Do it.\n", f"docs/{CASE}/SPEC.md": "---\nprimary_dimension: D2\n---\n# Mini\n",
             f"evaluator/{CASE}/pipeline.json": json.dumps(PIPELINE, indent=2),
             **{f"cases/{CASE}/{k}": v for k, v in SOURCES.items()}}
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "project" / "p.db"
    db.parent.mkdir()
    assert run("--db", db, "init").exit_code == 0
    return db


@asynccontextmanager
async def _editor(db: Path, probe_id: str = CASE):
    """The rules editor on ``probe_id`` in the app; yields ``(store, app, pilot, editor)``."""
    with Store.open(db) as store:
        app = BenchwrightApp(store, "ada", resume=False)
        async with app.run_test(size=(180, 60)) as pilot:
            await app.push_screen(RulesEditorScreen(store, probe_id, "ada"))
            await pilot.pause()
            yield store, app, pilot, app.screen


def _preview(editor) -> str:
    return str(editor.query_one("#rules-preview").render())


def _starter(editor) -> str:
    return next(line for line in _preview(editor).splitlines() if line.startswith("(starter) ("))


async def _pick(editor, pilot, value: str) -> None:
    editor.query_one("#rule-pick", Select).value = value
    await pilot.pause()


# (condition, findings on the starter): one of each kind NITR uses, matched as NITR does
CONDITIONS = [
    ({"any_substrings": ["std::stoi"]}, 2),                          # a.cc and b.cc (in a comment)
    ({"all_substrings": ["std::stoi", "#define"]}, 1),               # a.cc only
    ({"any_patterns": ["^#define\\s+add\\b"]}, 1),                   # line 4 of a.cc: re.MULTILINE
    ({"all_patterns": ["^int", "parse"]}, 2),                        # a.cc (line 3) and a.h
    ({"not": {"any_substrings": ["#include"]}}, 2),                  # b.cc and a.h lack it
    ({"all_of": [{"any_substrings": ["std::stoi"]}, {"not": {"any_substrings": ["/*"]}}]}, 1),
    ({"any_of": [{"any_substrings": ["#define"]}, {"any_patterns": ["^/\\*"]}]}, 2),
    ({"substring_hit_thresholds": [{"needles": ["std::stoi", "#define", "#include"], "at_least": 3}]}, 1),
    ({"pattern_hit_thresholds": [{"patterns": ["^#define", "^int"], "at_least": 2}]}, 0),  # no flags: no MULTILINE
    ({"pattern_hit_thresholds": [{"patterns": ["^#define", "^int"], "at_least": 2, "flags": ["MULTILINE"]}]}, 1),
]


async def test_every_condition_kind_is_edited_previewed_and_saved_whole(project, tmp_path):
    checkout = _checkout(tmp_path)
    assert run("--db", project, "probes", "import", checkout).exit_code == 0
    before = _digest(checkout)
    original = json.loads((checkout / "evaluator" / CASE / "pipeline.json").read_text())
    copy = project.parent / "evaluators" / CASE / "pipeline.json"
    async with _editor(project) as (store, _app, pilot, editor):
        await _pick(editor, pilot, "0:rules:0")
        condition = editor.query_one("#rule-condition", TextArea)
        assert json.loads(condition.text) == {"any_substrings": ["std::stoi"]}  # shown as in pipeline.json
        for number, (wanted, findings) in enumerate(CONDITIONS):
            condition.text = json.dumps(wanted, indent=2)
            await pilot.pause()
            assert "not valid" not in _preview(editor), (wanted, _preview(editor))
            assert (f"{findings} finding" if findings else "no finding") in _starter(editor), (wanted, _starter(editor))
            await pilot.press("ctrl+s")
            await pilot.pause()
            saved = json.loads(copy.read_text())
            expected = json.loads(json.dumps(original))
            expected["modules"][0]["rules"][0] = {"id": "r1", **wanted, "message": "stoi in {path}"}
            assert saved == expected, f"condition {number}: only the edited rule changed"
            stored = Probe.model_validate(store.probe_record(CASE)["probe"])
            assert parse_pipeline(copy).to_json() == stored.pipeline.to_json(), "reads back as stored"
            assert Path(stored.evaluator_dir) == copy.parent
    assert _digest(checkout) == before, "the checkout is never written"


async def test_preview_shows_nitr_matching_normalize_global_rules_and_enabled_if(project, tmp_path):
    checkout = _checkout(tmp_path)
    assert run("--db", project, "probes", "import", checkout).exit_code == 0
    async with _editor(project) as (_store, _app, pilot, editor):
        await _pick(editor, pilot, "0:rules:0")
        preview = _preview(editor)
        assert "one of the substrings is in the file [any_substrings]:" in preview and "  std::stoi" in preview
        assert "3 files scanned; 2 findings" in _starter(editor)
        assert "src/a.cc:3" in preview and "src/b.cc:1" in preview  # one finding per file, at its first line
        editor.query_one("#module-normalize", Select).value = "strip_comments"
        await pilot.pause()
        assert "1 finding" in _starter(editor) and "src/b.cc:1" not in _preview(editor)
        # a not rule reports the file as missing, without a line
        await _pick(editor, pilot, "0:rules:1")
        assert "this does NOT hold" in _preview(editor) or "does NOT hold" in _preview(editor)
        assert "3 findings" in _starter(editor)
        # a global rule counts files against its bounds
        await _pick(editor, pilot, "0:global_rules:0")
        assert editor.query_one("#rule-max", Input).value == "1"
        assert "1 finding" in _starter(editor) and "3 files: src/a.cc, src/a.h, src/b.cc" in _preview(editor)
        editor.query_one("#rule-max", Input).value = "3"
        await pilot.pause()
        assert "no finding" in _starter(editor)
        # enabled_if: the module is off while its variable is false
        await _pick(editor, pilot, "1:rules:0")
        assert editor.query_one("#module-enabled", Input).value == "strict"
        assert "enabled_if strict: False -> the module is OFF" in _preview(editor)
        assert "probes run --set strict=true" in _preview(editor)
        editor.query_one("#module-enabled", Input).value = "nope"
        await pilot.pause()
        assert "not valid yet" in _preview(editor) and "modules[1].enabled_if" in _preview(editor)
        editor.query_one("#module-enabled", Input).value = ""
        await pilot.pause()
        assert "enabled_if" not in _preview(editor).split("\n(starter)")[0].split("module hidden")[1]
        editor.query_one("#module-stop", Checkbox).value = True
        await pilot.pause()
        assert "stops at its first finding" in _preview(editor)
        # a bad regular expression is named with its JSON path; nothing is saved
        editor.query_one("#rule-condition", TextArea).text = '{"any_patterns": ["(unclosed"]}'
        await pilot.pause()
        assert "modules[1].rules[0].any_patterns" in _preview(editor) and "(unclosed" in _preview(editor)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not (project.parent / "evaluators").exists()
        # a key NITR would ignore is refused too
        editor.query_one("#rule-condition", TextArea).text = '{"any_patterns": ["x"], "any_substrings": ["y"]}'
        await pilot.pause()
        assert "would be ignored" in _preview(editor)


# slow, to keep the default run short; main path: test_every_condition_kind_is_edited_previewed_and_saved_whole
@pytest.mark.slow
async def test_new_rule_and_new_global_rule_are_appended(project, tmp_path):
    checkout = _checkout(tmp_path)
    assert run("--db", project, "probes", "import", checkout).exit_code == 0
    async with _editor(project) as (_store, _app, pilot, editor):
        await pilot.press("ctrl+n")
        await pilot.pause()
        editor.query_one("#rule-id", Input).value = "r4"
        editor.query_one("#rule-condition", TextArea).text = '{"any_patterns": ["^int b"]}'
        await pilot.pause()
        assert "1 finding" in _starter(editor)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("ctrl+g")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
    saved = json.loads((project.parent / "evaluators" / CASE / "pipeline.json").read_text())
    assert [r["id"] for r in saved["modules"][0]["rules"]] == ["r1", "r2", "r4"]
    assert [r["id"] for r in saved["modules"][0]["global_rules"]] == ["g1", "new-global-rule"]


# slow, to keep the default run short; main path: test_preview_shows_nitr_matching_normalize_global_rules_and_enabled_if
@pytest.mark.slow
async def test_preview_on_the_papers_case_021_with_variants(project, tmp_path):
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent (the shared data folder ../shared/data is not checked out here)")
    variants = tmp_path / "v021"
    for name, kind, files in (
        ("inline-stoi", "shortcut", {"src/inline_value.cc": "#include <string>\n\nint V(const std::string& t) {\n"
                                                           "  return std::stoi(t);\n}\n",
                                     "src/inline_digit.cc": "#include <cctype>\nbool D(char c) { return std::isdigit(c); }\n"}),
        ("notes", "intended", {"src/NOTES.txt": "std::stoi is only called in filter_validation.cc\n"}),
    ):
        folder = variants / name
        for relative, text in files.items():
            (folder / "tree" / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / "tree" / relative).write_text(text)
        (folder / "variant.json").write_text(json.dumps({"kind": kind}))
    before = _digest(NITR / "evaluator" / "021.inline-filter-entrypoint-reuse")
    done = run("--db", project, "probes", "import", NITR, "--case", "021", "--variants", variants)
    assert done.exit_code == 0, done.output
    pid = "021.inline-filter-entrypoint-reuse"
    async with _editor(project, pid) as (_store, _app, pilot, editor):
        options = [str(label) for label, _value in editor.query_one("#rule-pick", Select)._options if _value]
        assert "case021_no_shadow_tables: duplicate_error_classification" in options
        preview = _preview(editor)
        assert "excluding filter_validation.cc, filter_validation.h" in preview
        shortcut = next(line for line in preview.splitlines() if line.startswith("inline-stoi ("))
        assert "2 findings" in shortcut and "module fails" in shortcut  # per file, though the module stops at one
        assert "src/inline_digit.cc:2" in preview and "src/inline_value.cc:4" in preview
        assert "no finding · module passes" in next(line for line in preview.splitlines() if line.startswith("notes ("))
        await _pick(editor, pilot, "4:rules:1")
        preview = _preview(editor)
        assert "every one of these holds:" in preview
        assert "at least 2 of these distinct substrings are in the file [substring_hit_thresholds]:" in preview
        assert "  FilterErrorCode::kInvalidField" in preview
        assert "not valid" not in preview
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert (project.parent / "evaluators" / "021.inline-filter-entrypoint-reuse" / "pipeline.json").is_file()
    assert _digest(NITR / "evaluator" / "021.inline-filter-entrypoint-reuse") == before


# slow, to keep the default run short; main path: test_every_condition_kind_is_edited_previewed_and_saved_whole
@pytest.mark.slow
async def test_an_edit_is_kept_when_another_rule_is_shown_and_esc_warns_before_dropping_it(project, tmp_path):
    checkout = _checkout(tmp_path)
    assert run("--db", project, "probes", "import", checkout).exit_code == 0
    async with _editor(project) as (_store, app, pilot, editor):
        await _pick(editor, pilot, "0:rules:0")
        editor.query_one("#rule-condition", TextArea).text = '{"any_substrings": ["parse"]}'
        await pilot.pause()
        await _pick(editor, pilot, "0:rules:1")
        await _pick(editor, pilot, "0:rules:0")
        assert json.loads(editor.query_one("#rule-condition", TextArea).text) == {"any_substrings": ["parse"]}
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is editor, "the first esc warns about the unsaved edit"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not editor
    assert not (project.parent / "evaluators").exists(), "nothing was saved"
    assert json.loads((checkout / "evaluator" / CASE / "pipeline.json").read_text()) == PIPELINE


# slow, to keep the default run short; main path: test_every_condition_kind_is_edited_previewed_and_saved_whole
@pytest.mark.slow
async def test_esc_warns_before_dropping_an_edit_that_is_not_valid_json_yet(project, tmp_path):
    checkout = _checkout(tmp_path)
    assert run("--db", project, "probes", "import", checkout).exit_code == 0
    async with _editor(project) as (_store, app, pilot, editor):
        await _pick(editor, pilot, "0:rules:0")
        editor.query_one("#rule-condition", TextArea).text = '{"any_substrings": ["parse"'  # typing, unfinished
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is editor, "the first esc warns: the half-typed condition would be lost"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not editor
