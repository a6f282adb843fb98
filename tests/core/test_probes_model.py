"""Probe folders: SPEC.md parsing, task files, variants, fingerprints, the scaffold."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchwright.core.errors import BenchwrightError, InputFileError
from benchwright.core.probes import (
    DIMENSIONS,
    Variant,
    probe_fingerprint,
    read_probe,
    read_probe_folder,
    read_variants,
    sample_probe_dirs,
    scaffold_probe,
)
from benchwright.core.probes.importer import parse_spec

PIPELINE = {"modules": [{"module_name": "customized_check", "name": "ok", "command": ["true"]}]}


def _folder(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _probe_dir(tmp_path: Path, spec: str = "Primary dimension: D2\n", **extra: str) -> Path:
    return _folder(tmp_path / "my-probe", {
        "case/TASK.md": "Do it.\n", "case/SPEC.md": spec, "evaluator/pipeline.json": json.dumps(PIPELINE), **extra,
    })


def test_nine_dimensions():
    assert list(DIMENSIONS) == [f"D{i}" for i in range(1, 10)]
    assert DIMENSIONS["D4"] == "Extension Structure" and DIMENSIONS["D9"] == "Side-Effect Isolation"


def test_demo_probes_read():
    probes = {read_probe_folder(d)[0].id: read_probe_folder(d)[0] for d in sample_probe_dirs()}
    assert set(probes) == {"pricing-strategy", "token-clock"}
    pricing = probes["pricing-strategy"]
    assert pricing.primary_dimension == "D4" and pricing.dimension_name == "Extension Structure"
    assert pricing.secondary_dimensions == ["D1"] and pricing.granularity == "micro"
    assert pricing.title == "Pricing: bulk discount as a new rule"
    assert pricing.steps[0].startswith("# Bulk discount") and "PricingRule" in pricing.intent
    assert probes["token-clock"].primary_dimension == "D7" and probes["token-clock"].secondary_dimensions == []


@pytest.mark.parametrize(
    ("spec", "fields"),
    [
        ("# T\nPrimary dimension: D4 (Extension Structure)\nSecondary dimensions: D1, D3\n",
         {"title": "T", "primary_dimension": "D4", "secondary_dimensions": ["D1", "D3"]}),
        ("- **Primary dimension:** d6\n- **Secondary dimensions**: none\n", {"primary_dimension": "D6", "secondary_dimensions": []}),
        ("primary_dimension: Reuse and Repo Awareness\nsecondary_dimensions: [D9]\n",
         {"primary_dimension": "D2", "secondary_dimensions": ["D9"]}),
        ("## Primary dimension\nD8 — State Ownership and Lifecycle\n\n## Intent\nKeep state owned.\nSecond line.\n\n## Notes\nx\n",
         {"primary_dimension": "D8", "intent": "Keep state owned.\nSecond line."}),
        ("Id: case-021\nDimension = D2\nIntent: reuse the pipeline\nrather than a second parser\n\nUnrelated: text\n",
         {"id": "case-021", "primary_dimension": "D2", "intent": "reuse the pipeline\nrather than a second parser"}),
        ("Primary: D5\nGranularity: Multi step\n", {"primary_dimension": "D5", "granularity": "multi-step"}),
        ("Primary dimension: D3\nSecondary dimensions: D3, D6\n", {"primary_dimension": "D3", "secondary_dimensions": ["D6"]}),
    ],
)
def test_spec_is_parsed_leniently(spec, fields):
    parsed = parse_spec(spec)
    assert {k: parsed.get(k) for k in fields} == fields


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("# Only a title\n", "Primary dimension"),
        ("Primary dimension: D10\n", "unknown dimension D10"),
        ("Primary dimension: D2 and D4\n", "exactly one primary dimension"),
        ("Primary dimension: something vague\n", "no dimension"),
        ("Primary dimension: D1\nGranularity: huge\n", "micro or multi-step"),
    ],
)
def test_spec_problems_name_the_file_and_line(spec, message):
    with pytest.raises(InputFileError, match=message) as caught:
        parse_spec(spec, "cases/x/SPEC.md")
    assert caught.value.problems[0].file == "cases/x/SPEC.md"
    if "D10" in spec:
        assert caught.value.problems[0].line == 1


def test_read_probe_defaults(tmp_path):
    root = _probe_dir(tmp_path)
    probe = read_probe(root / "case", root / "evaluator")
    assert probe.id == "my-probe" and probe.title == "my-probe" and probe.steps == ["Do it.\n"]
    assert probe.spec_file == str(root / "case" / "SPEC.md")


def test_spec_elsewhere(tmp_path):
    root = _probe_dir(tmp_path)
    (root / "case" / "SPEC.md").unlink()
    with pytest.raises(InputFileError, match="no such file"):
        read_probe(root / "case", root / "evaluator")
    hidden = _folder(tmp_path / "hidden", {"SPEC.md": "Id: elsewhere\nPrimary dimension: D1\n"}) / "SPEC.md"
    probe = read_probe(root / "case", root / "evaluator", spec=hidden)
    assert probe.id == "elsewhere"
    before = probe_fingerprint(probe)
    hidden.write_text("Id: elsewhere\nPrimary dimension: D1\nIntent: changed\n")
    assert probe_fingerprint(probe) != before
    (root / "SPEC.md").write_text("Primary dimension: D7\n")
    assert read_probe_folder(root)[0].primary_dimension == "D7"  # a probe folder may keep SPEC.md beside case/


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ({}, "no TASK.md"),
        ({"case/TASK1.md": "a", "case/TASK3.md": "c"}, "without gaps"),
        ({"case/TASK.md": "a", "case/TASK1.md": "b"}, "both TASK.md"),
    ],
)
def test_task_file_problems(tmp_path, tasks, message):
    root = _folder(tmp_path / "p", {"case/SPEC.md": "Primary dimension: D1\n", "evaluator/pipeline.json": json.dumps(PIPELINE), **tasks})
    with pytest.raises(InputFileError, match=message):
        read_probe_folder(root)


def test_multi_step_tasks_in_numeric_order_and_granularity_check(tmp_path):
    root = _folder(tmp_path / "p", {
        "case/SPEC.md": "Primary dimension: D6\n", "evaluator/pipeline.json": json.dumps(PIPELINE),
        **{f"case/TASK{i}.md": f"step {i}" for i in range(1, 12)},
    })
    probe = read_probe_folder(root)[0]
    assert probe.granularity == "multi-step" and probe.steps[9:] == ["step 10", "step 11"]
    (root / "case" / "SPEC.md").write_text("Primary dimension: D6\nGranularity: micro\n")
    with pytest.raises(InputFileError, match="says micro"):
        read_probe_folder(root)


def test_probe_needs_case_and_evaluator(tmp_path):
    with pytest.raises(InputFileError, match="case/ and evaluator/"):
        read_probe_folder(tmp_path)
    with pytest.raises(InputFileError, match="no such evaluator folder"):
        read_probe(_probe_dir(tmp_path) / "case", tmp_path / "nope")


def test_a_symlink_leading_out_of_the_case_or_evaluator_is_refused(tmp_path):
    root = _probe_dir(tmp_path)
    (tmp_path / "secret.txt").write_text("secret\n")
    (root / "case" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(InputFileError, match="symlink"):
        read_probe_folder(root)
    (root / "case" / "leak.txt").unlink()
    (root / "evaluator" / "up").symlink_to("../case")
    with pytest.raises(InputFileError, match="symlink"):
        read_probe_folder(root)
    (root / "evaluator" / "up").unlink()
    read_probe_folder(root)


def test_bad_pipeline_surfaces_from_read_probe(tmp_path):
    root = _probe_dir(tmp_path)
    (root / "evaluator" / "pipeline.json").write_text('{"modules": [{"module_name": "lint", "name": "x"}]}')
    with pytest.raises(InputFileError, match=r"modules\[0\]"):
        read_probe_folder(root)


def test_variants_read_with_defaults(tmp_path):
    root = _folder(tmp_path / "v", {
        "variants/a/variant.json": '{"kind": "intended"}', "variants/a/patch.diff": "--- a/x\n+++ b/x\n",
        "variants/b/variant.json": '{"kind": "near_miss", "expected": "pass", "step": 2, "description": "d"}',
        "variants/b/tree/src/x.cpp": "int x;\n",
        "variants/c/variant.json": '{"kind": "shortcut", "after": ["a"]}', "variants/c/patch.diff": "--- a/x\n+++ b/x\n",
    })
    variants = read_variants(root)  # the folder holding variants/ works as well as variants/ itself
    assert variants == read_variants(root / "variants")
    a, b, c = variants
    assert (a.kind, a.expected, a.patch, a.tree) == ("intended", "pass", str(root / "variants/a/patch.diff"), None)
    assert (b.kind, b.expected, b.step, b.tree) == ("near-miss", "pass", 2, str(root / "variants/b/tree"))
    assert (c.expected, c.after) == ("fail", ["a"])
    assert read_variants(tmp_path / "v" / "variants" / "b" / "tree" / "src") == []


def test_variant_problems_are_all_reported(tmp_path):
    root = _folder(tmp_path / "v", {
        "no-meta/patch.diff": "x",
        "bad-kind/variant.json": '{"kind": "clever", "expected": "pass"}', "bad-kind/patch.diff": "x",
        "no-source/variant.json": '{"kind": "intended"}',
        "both/variant.json": '{"kind": "intended"}', "both/patch.diff": "x", "both/tree/a": "x",
        "typo/variant.json": '{"kind": "shortcut", "expect": "fail"}', "typo/patch.diff": "x",
        "near/variant.json": '{"kind": "near-miss"}', "near/patch.diff": "x",
        "step/variant.json": '{"kind": "intended", "step": 0}', "step/patch.diff": "x",
        "after/variant.json": '{"kind": "intended", "after": ["ghost"]}', "after/patch.diff": "x",
        "json/variant.json": '{"kind": ', "json/patch.diff": "x",
    })
    with pytest.raises(InputFileError) as caught:
        read_variants(root)
    text = str(caught.value)
    for expected in ("no-meta/variant.json", "intended, shortcut or near-miss", "needs a patch.diff or a tree/",
                     "both patch.diff and tree/", "field 'expect'", "field 'expected'", "field 'step'",
                     "no variant named 'ghost'", "not valid JSON"):
        assert expected in text, expected
    with pytest.raises(InputFileError, match="no such variants folder"):
        read_variants(tmp_path / "absent")


def test_variant_model_rules():
    with pytest.raises(ValidationError, match="not both"):
        Variant(name="x", kind="intended", expected="pass", patch="p.diff", tree="tree")
    with pytest.raises(ValidationError):
        Variant(name="x", kind="clever", expected="pass")


def test_fingerprint_tracks_every_file_and_variant(tmp_path):
    source = next(d for d in sample_probe_dirs() if d.name == "token_clock")
    root = tmp_path / "copy"
    shutil.copytree(source, root)
    probe, variants = read_probe_folder(root)
    original_probe, original_variants = read_probe_folder(source)
    base = probe_fingerprint(probe, variants)
    assert len(base) == 64 and base == probe_fingerprint(probe, list(reversed(variants)))
    assert base == probe_fingerprint(original_probe, original_variants), "a moved probe keeps its fingerprint"
    assert base != probe_fingerprint(probe, variants[:2])

    (root / "case" / "__pycache__").mkdir()
    (root / "case" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"cache")
    assert probe_fingerprint(probe, variants) == base, "caches do not count"

    def changed(edit) -> bool:
        edit()
        fresh_probe, fresh_variants = read_probe_folder(root)
        return probe_fingerprint(fresh_probe, fresh_variants) != base

    issuer = root / "case" / "tokens" / "issuer.py"
    text = issuer.read_text()
    assert changed(lambda: issuer.write_text(text + "# edit\n"))
    issuer.write_text(text)
    assert not changed(lambda: None)
    assert changed(lambda: (root / "evaluator" / "tests" / "extra.txt").write_text("x"))
    (root / "evaluator" / "tests" / "extra.txt").unlink()
    meta = root / "variants" / "near-miss" / "variant.json"
    meta_text = meta.read_text()
    assert changed(lambda: meta.write_text(meta_text.replace('"fail"', '"pass"')))
    meta.write_text(meta_text)
    patch = root / "variants" / "intended" / "patch.diff"
    assert changed(lambda: patch.write_text(patch.read_text().replace("self.clock()", "self.clock( )")))


def test_scaffold_writes_a_readable_probe(tmp_path):
    folder = scaffold_probe(tmp_path / "new", "case-042")
    probe, variants = read_probe_folder(folder)
    assert probe.id == "case-042" and probe.primary_dimension == "D9"
    assert [(v.name, v.kind, v.expected) for v in variants] == [  # two per family: stable separation's default
        ("intended", "intended", "pass"), ("intended-ternary", "intended", "pass"), ("shortcut", "shortcut", "fail"),
        ("shortcut-puts", "shortcut", "fail")]
    assert (folder / "case" / "CMakeLists.txt").exists() and (folder / "evaluator" / "tests" / "greeting_test.cpp").exists()
    with pytest.raises(BenchwrightError, match="not empty"):
        scaffold_probe(folder, "again")
    with pytest.raises(BenchwrightError, match="not a probe id"):
        scaffold_probe(tmp_path / "other", "../escape")
    assert not (tmp_path / "other").exists()
