"""NITR as its users have it: the shared checkout imports whole, SPEC.md layouts and dimension names, and each
pipeline.json feature with NITR's semantics (conditions, thresholds, normalize, global rules, baseline diffs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchwright.core.errors import InputFileError
from benchwright.core.probes import Probe
from benchwright.core.probes.model import dimension_code
from benchwright.core.probes.nitr import design_matrix, parse_nitr_spec, read_nitr_checkout
from benchwright.core.probes.pipeline import (
    BaselineDiffModule,
    FrozenPathsModule,
    Pipeline,
    SourceAnalysisModule,
    pipeline_from_dict,
)
from benchwright.core.probes.rules import baseline_findings, condition_match, normalize_source, scan_sources

NITR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr"


def _needs_nitr() -> Path:
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent (the shared data folder ../shared/data is not checked out here)")
    return NITR


# ---------------------------------------------------------------------------------------------------------
# The whole shared checkout


def _tree_digest(root: Path) -> list[tuple[str, int, float]]:
    return sorted((p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime)
                  for p in root.rglob("*") if p.is_file())


def test_every_case_of_the_shared_checkout_imports_and_nothing_is_written_there():
    root = _needs_nitr()
    evaluators = sorted(root.glob("evaluator/*/pipeline.json"))
    specs = sorted(root.glob("docs/*/SPEC.md"))
    assert len(evaluators) == 41 and len(specs) == 41  # the issue measured 0 and 3 of them parsing
    before = _tree_digest(root / "docs")
    probes = read_nitr_checkout(root)
    assert [p.id for p in probes] == sorted(p.parent.name for p in evaluators)
    by_id = {p.id: p for p in probes}
    matrix = design_matrix(root)
    for probe in probes:  # every primary dimension agrees with the checkout's own design matrix
        assert probe.primary_dimension == matrix[probe.id[:3]][0], probe.id
        assert probe.granularity == matrix[probe.id[:3]][1], probe.id
        assert probe.checkout_root == str(root.resolve())
    case = by_id["021.inline-filter-entrypoint-reuse"]  # the paper's Listing 6
    assert (case.primary_dimension, case.secondary_dimensions, case.language) == ("D2", ["D1"], "C++")
    assert case.pipeline.layout == "nitr" and case.pipeline.nitr_paths["baseline_case_root"].startswith("../../cases/")
    assert by_id["027.active-snapshot-lifecycle-python"].paired_with == "017.active-snapshot-lifecycle"
    assert by_id["010.logging-side-effects"].secondary_dimensions == ["D3", "D1"]  # Markdown bullets
    assert by_id["025.session-alert-responsibilities"].primary_dimension == "D3"  # "primary_dimension: D3"
    assert by_id["001.add-no-callsite-spread"].primary_dimension == "D1"  # no dimension in SPEC: the matrix
    for probe in probes:  # a stored probe reads back equal (rules in pipeline.json shape)
        assert Probe.model_validate(json.loads(json.dumps(probe.model_dump(mode="json")))) == probe
    assert _tree_digest(root / "docs") == before


def test_named_cases_and_an_unknown_one(tmp_path):
    root = _needs_nitr()
    assert [p.id for p in read_nitr_checkout(root, ["021", "028.validator-global-mutation-python"])] == [
        "021.inline-filter-entrypoint-reuse", "028.validator-global-mutation-python"]
    with pytest.raises(InputFileError, match=r"no case '999'.*021\.inline-filter-entrypoint-reuse"):
        read_nitr_checkout(root, ["999"])
    with pytest.raises(InputFileError, match="not a NITR checkout"):
        read_nitr_checkout(tmp_path)


def _small_checkout(tmp_path: Path, spec: str, pipeline: dict | None = None) -> Path:
    root = tmp_path / "nitr"
    for relative, text in {
        "cases/050.x/TASK.md": "Do it.\n", "cases/050.x/src/a.cc": "int a;\n",
        "evaluator/050.x/pipeline.json": json.dumps(pipeline or {
            "case_root": "../../.submit-output/m/cases/050.x", "baseline_case_root": "../../cases/050.x",
            "build_dir": "../../build",
            "modules": [{"module_name": "required_paths", "name": "layout", "paths": ["src/a.cc"]}]}),
        "docs/050.x/SPEC.md": spec,
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def test_a_bad_case_refuses_the_whole_import_naming_file_line_and_value(tmp_path):
    root = _small_checkout(tmp_path, "---\ncase_id: x\nprimary_dimension: maintainability\n---\n# X\n")
    with pytest.raises(InputFileError) as caught:
        read_nitr_checkout(root)
    problem = caught.value.problems[0]
    assert problem.file.endswith("docs/050.x/SPEC.md") and problem.line == 3 and problem.field == "primary_dimension"
    assert "'maintainability' is not a dimension name" in problem.message and "D7 (Testability and Determinism" in problem.message


def test_a_symlink_leading_out_of_the_checkout_refuses_the_case(tmp_path):
    # A run copies the case and evaluator with their symlinks: one leading out would reach outside the
    # workspace (a check writing through it, a starter handed to an agent).
    root = _small_checkout(tmp_path, "Primary dimension: D2\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "cases/050.x/src/leak.cc").symlink_to(outside / "secret.txt")
    (root / "evaluator/050.x/out").symlink_to("../../../outside")
    (root / "evaluator/050.x/inside").symlink_to("pipeline.json")
    with pytest.raises(InputFileError) as caught:
        read_nitr_checkout(root)
    files = sorted(Path(p.file).name for p in caught.value.problems)
    assert files == ["leak.cc", "out"] and all("symlink" in p.message for p in caught.value.problems)
    (root / "cases/050.x/src/leak.cc").unlink()
    (root / "evaluator/050.x/out").unlink()
    assert [p.id for p in read_nitr_checkout(root)] == ["050.x"]


def test_a_spec_that_is_not_utf8_is_refused_naming_the_line(tmp_path):
    root = _small_checkout(tmp_path, "---\nprimary_dimension: D2\n---\n# X\n")
    (root / "docs/050.x/SPEC.md").write_bytes(b"---\nprimary_dimension: D2\nti\xfftle: X\n---\n# X\n")
    with pytest.raises(InputFileError) as caught:
        read_nitr_checkout(root)
    problem = caught.value.problems[0]
    assert problem.file.endswith("docs/050.x/SPEC.md") and problem.line == 3 and "not UTF-8" in problem.message


def test_a_bad_pipeline_names_module_and_key(tmp_path):
    bad = {"case_root": "../../.submit-output/m/cases/050.x", "build_dir": "../../build", "modules": [
        {"module_name": "source_analysis", "name": "s", "rules": [{"id": "r", "any_substring": ["x"]}]},
        {"module_name": "baseline_diff", "name": "b", "allow_renamed": ["x"]},
    ]}
    root = _small_checkout(tmp_path, "primary_dimension: D3\n", bad)
    with pytest.raises(InputFileError) as caught:
        read_nitr_checkout(root)
    fields = [p.field for p in caught.value.problems]
    assert fields == ["modules[0].rules[0].any_substring", "modules[1].allow_renamed"]
    assert all("unknown field" in p.message for p in caught.value.problems)
    assert "'s' (source_analysis)" in caught.value.problems[0].message


# ---------------------------------------------------------------------------------------------------------
# SPEC.md layouts and dimension names


@pytest.mark.parametrize(("name", "code"), [
    ("testability", "D7"), ("interface_and_substitutability_discipline", "D5"), ("state_lifecycle", "D8"),
    ("D3", "D3"), ("D2 Reuse and Repo Awareness", "D2"), ("side_effect_containment", "D9"),
    ("`D4. Extension Structure`", "D4"), ("Change Locality", "D1"), ("responsibility_separation", "D3"),
    ("D10", None), ("maintainability", None), ("state and interface", None),
])
def test_dimension_names_map_to_codes(name, code):
    assert dimension_code(name) == code


def test_yaml_in_a_fenced_block():
    spec = "# 024. recorder\n\n## 1. Case Metadata\n\n```yaml\ncase_id: 024-x\ntitle: Recorder\n" \
           "primary_dimension: interface_substitutability\nsecondary_dimensions:\n  - extensibility\n" \
           "  - state_lifecycle\nlanguage: C++\ndifficulty: medium\n```\n"
    fields = parse_nitr_spec(spec)
    assert fields["primary_dimension"] == "D5" and fields["secondary_dimensions"] == ["D4", "D8"]
    assert (fields["title"], fields["language"], fields["difficulty"]) == ("Recorder", "C++", "medium")


def test_yaml_front_matter_and_a_bare_header():
    front = parse_nitr_spec("---\nprimary_dimension: D3\nsecondary_dimensions: []\ndifficulty: 3\n"
                            "granularity: micro\npaired_with: 025.x\n---\n# Title\n")
    assert front == {"primary_dimension": "D3", "secondary_dimensions": [], "difficulty": "3",
                     "granularity": "micro", "paired_with": "025.x", "title": "Title"}
    bare = parse_nitr_spec("case_id: 019\nprimary_dimension: D9 Side-Effect Isolation\nsecondary_dimensions:\n"
                           "  - D3 Responsibility Decomposition\n\n# Case Overview\n")
    assert (bare["primary_dimension"], bare["secondary_dimensions"]) == ("D9", ["D3"])


def test_markdown_bullets_and_headings():
    bullets = parse_nitr_spec("# 010\n\n## Summary\n- **Primary maintainability dimension:** side_effect_containment\n"
                              "- **Secondary dimensions:** responsibility_separation, change_locality\n")
    assert (bullets["primary_dimension"], bullets["secondary_dimensions"]) == ("D9", ["D3", "D1"])
    heading = parse_nitr_spec("# 012\n\n## Primary maintainability dimension\n- **State Ownership and Lifecycle**\n\n"
                              "## Secondary dimensions\n- API stability\n- change locality\n")
    assert (heading["primary_dimension"], heading["secondary_dimensions"]) == ("D8", ["D1"])
    listed = parse_nitr_spec("# x\n\n## Primary and Secondary Dimensions\n\nPrimary Dimension:\n- D3 Responsibility "
                             "Decomposition\n\nSecondary Dimensions:\n- D9 Side-Effect Isolation\n")
    assert (listed["primary_dimension"], listed["secondary_dimensions"]) == ("D3", ["D9"])


def test_spec_problems():
    with pytest.raises(InputFileError) as caught:
        parse_nitr_spec("x: 1\n\n# T\n- **Primary dimension:** configurability maybe\n", "S.md")
    assert caught.value.problems[0].line == 4 and "'configurability maybe'" in caught.value.problems[0].message
    with pytest.raises(InputFileError, match="differs from primary_dimension"):
        parse_nitr_spec("---\nprimary_dimension: D3\n---\n- Primary dimension: `D4 Extension Structure`\n")
    with pytest.raises(InputFileError, match="missing"):
        parse_nitr_spec("# nothing here\n")
    assert parse_nitr_spec("# nothing here\n", matrix_row=("D6", "micro", 9))["primary_dimension"] == "D6"
    with pytest.raises(InputFileError) as bad_yaml:
        parse_nitr_spec("---\nprimary_dimension: [D3\n---\n", "S.md")
    assert bad_yaml.value.problems[0].line is not None and "YAML" in bad_yaml.value.problems[0].message
    with pytest.raises(InputFileError, match="'whatever' is not a dimension name"):
        parse_nitr_spec("---\nprimary_dimension: D3\nsecondary_dimensions: [whatever]\n---\n")


# ---------------------------------------------------------------------------------------------------------
# Rule conditions with NITR's semantics


def _cond(data: dict):
    module = SourceAnalysisModule.model_validate(
        {"module_name": "source_analysis", "name": "s", "rules": [{"id": "r", **data}]})
    return module.rules[0]


def test_patterns_use_multiline_so_a_define_on_a_later_line_is_caught():
    rule = _cond({"any_patterns": [r"^\s*#\s*define\s+add\b"]})
    text = "#include <x>\nint y;\n  #define add(a, b) ((a) + (b))\n"
    assert condition_match(rule, text) == 3  # without re.MULTILINE, ^ only looks at the first line


def test_substrings_are_literal_and_report_the_earliest_line():
    rule = _cond({"any_substrings": ["b.c(", "[z]"]})
    assert condition_match(rule, "x\n[z]\nb.c(1)\n") == 2
    assert condition_match(rule, "bxc(\n") is None
    every = _cond({"all_substrings": ["A", "B"]})
    assert condition_match(every, "B\nA\n") == 1 and condition_match(every, "A only\n") is None
    all_pat = _cond({"all_patterns": [r"^y", r"^x"]})
    assert condition_match(all_pat, "x\ny\n") == 1 and condition_match(all_pat, "x\n") is None


def test_not_all_of_any_of_and_thresholds():
    listing6 = _cond({"all_of": [
        {"any_substrings": ["ParseInlineFilter"]},
        {"substring_hit_thresholds": [{"needles": ['"status"', '"priority"', '"owner"'], "at_least": 1}]},
        {"substring_hit_thresholds": [{"needles": ["kInvalidField", "kInvalidOperator", "kInvalidValue"], "at_least": 2}]},
    ]})
    shortcut = 'void ParseInlineFilter() {\n if (f == "status") return kInvalidField;\n return kInvalidValue;\n}\n'
    assert condition_match(listing6, shortcut) == 1
    assert condition_match(listing6, shortcut.replace("kInvalidValue", "ok")) is None  # one error code only
    repeated = _cond({"substring_hit_thresholds": [{"needles": ["a", "a", "b"], "at_least": 2}]})
    assert condition_match(repeated, "a a a") is None  # distinct needles count, not occurrences
    either = _cond({"any_of": [{"any_substrings": ["nope"]}, {"any_patterns": ["^two"]}]})
    assert condition_match(either, "one\ntwo\n") == 2
    negated = _cond({"not": {"any_substrings": ["Validate("]}})
    assert negated.negate and condition_match(negated, "x") is None  # the inner condition, as stored
    both = _cond({"not": {"any_substrings": ["Validate("]}, "any_substrings": ["stoi"]})
    assert condition_match(both, "stoi\n") == 1 and condition_match(both, "Validate(stoi)\n") is None
    flags = _cond({"pattern_hit_thresholds": [{"patterns": ["^b"], "at_least": 1}]})
    assert condition_match(flags, "a\nb\n") is None  # thresholds take only their own flags, as in NITR
    with_m = _cond({"pattern_hit_thresholds": [{"patterns": ["^b"], "flags": ["MULTILINE"]}]})
    assert condition_match(with_m, "a\nb\n") == 0


def _files(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def test_scan_with_normalize_messages_stop_and_global_rules(tmp_path):
    root = _files(tmp_path, {"src/a.cc": "// std::stoi in a comment\nint a;\n", "src/b.cc": "int b = std::stoi(s);\n",
                             "src/c.cc": 'auto s = "std::stoi";\n'})
    raw = {"module_name": "source_analysis", "name": "s", "scan_roots": ["src"],
           "rules": [{"id": "stoi", "any_substrings": ["std::stoi"], "message": "{location} {line_no} {filename} { stray"}]}
    plain = SourceAnalysisModule.model_validate(raw)
    assert [m.message for m in scan_sources(plain, root)] == [
        "src/a.cc:1 1 a.cc { stray", "src/b.cc:1 1 b.cc { stray", "src/c.cc:1 1 c.cc { stray"]
    comments = SourceAnalysisModule.model_validate({**raw, "normalize": "strip_comments"})
    assert [m.relative_path for m in scan_sources(comments, root)] == ["src/b.cc", "src/c.cc"]
    strings = SourceAnalysisModule.model_validate({**raw, "normalize": "strip_comments_and_strings"})
    assert [m.relative_path for m in scan_sources(strings, root)] == ["src/b.cc"]
    first = SourceAnalysisModule.model_validate({**raw, "stop_on_first_match": True})
    assert len(scan_sources(first, root)) == 1
    glob = SourceAnalysisModule.model_validate({**raw, "rules": [], "global_rules": [
        {"id": "one-owner", "any_substrings": ["std::stoi"], "max_matching_files": 1,
         "message": "{matching_file_count} files: {matching_files}"},
        {"id": "used", "any_substrings": ["int "], "min_matching_files": 3}]})
    found = scan_sources(glob, root)
    assert [(m.rule_id, m.message) for m in found] == [("one-owner", "3 files: src/a.cc, src/b.cc, src/c.cc"),
                                                       ("used", "global rule used: 2 matching files, at least 3 expected (src/a.cc, src/b.cc)")]
    assert normalize_source('x = "a//b"; // c\n', "strip_comments") == 'x = "a\n'  # textual, as NITR


def test_enabled_if_and_variables():
    data = {"case_root": "../../x/cases/c", "build_dir": "../../build", "variables": {"hidden": False},
            "modules": [
                {"module_name": "build", "name": "b", "command": ["cmake", "--build", "{build_dir}"],
                 "configure_args": ["-DNITR_BUILD_EVALUATOR=ON", "-DHIDDEN={hidden}"]},
                {"module_name": "source_analysis", "name": "hidden", "enabled_if": "hidden",
                 "rules": [{"id": "r", "any_substrings": ["x"]}]}]}
    pipeline = pipeline_from_dict(data)
    assert [m.name for m in pipeline.enabled_modules()] == ["b"]
    on = pipeline.model_copy(update={"variables": {"hidden": "yes"}})
    assert [m.name for m in on.enabled_modules()] == ["b", "hidden"]
    with pytest.raises(InputFileError, match=r"unknown placeholder \{hiden\}"):
        pipeline_from_dict({**data, "modules": [dict(data["modules"][0], configure_args=["-DX={hiden}"])]})
    with pytest.raises(InputFileError, match="enabled_if names 'other'"):
        pipeline_from_dict({**data, "modules": [dict(data["modules"][1], enabled_if="other")]})
    assert isinstance(pipeline, Pipeline) and pipeline_from_dict(pipeline.to_json()) == pipeline


def test_baseline_diff_and_frozen_paths(tmp_path):
    base = _files(tmp_path / "base", {"src/a.cc": "a\n", "src/b.cc": "b\n", "app/main.cc": "m\n"})
    case = tmp_path / "case"
    shutil.copytree(base, case)
    (case / "src/a.cc").write_bytes(b"a\r\n")  # CRLF reads as the same text, as NITR reads it
    frozen = FrozenPathsModule(name="f", paths=["src/a.cc", "app/main.cc"])
    assert baseline_findings(frozen, case, base) == []
    (case / "app/main.cc").write_text("changed\n")
    (case / "src/new.cc").write_text("n\n")
    (case / "src/b.cc").unlink()
    assert [m.message for m in baseline_findings(frozen, case, base)] == ["frozen path app/main.cc: modified"]
    diff = BaselineDiffModule(name="d", allow_modified=["app/main.cc"])
    assert sorted(m.message for m in baseline_findings(diff, case, base)) == [
        "unexpected deletion of src/b.cc", "unexpected new file src/new.cc"]
    lenient = BaselineDiffModule(name="d", allow_modified=["app/main.cc"], allow_deleted=["src/b.cc"],
                                 allowed_created_top_levels=["src"])
    assert baseline_findings(lenient, case, base) == []
    named = BaselineDiffModule(name="d", paths=["src/gone.cc"])
    assert [m.message for m in baseline_findings(named, case, base)] == [
        "src/gone.cc is missing from the submission", "src/gone.cc is missing from the starter"]


# ---------------------------------------------------------------------------------------------------------
# A run in NITR's layout


def test_a_nitr_case_runs_with_the_checkouts_shared_files_and_nothing_is_written_there(tmp_path):
    from benchwright.core.probes import Variant, run_probe

    pipeline = {
        "case_root": "../../.submit-output/m/cases/050.x", "baseline_case_root": "../../cases/050.x",
        "build_dir": "../../build", "modules": [
            {"module_name": "customized_check", "name": "check",
             "command": ["{python}", "{evaluator_root}/checks/check.py", "--case_root", "{case_root}"],
             "env": {"PYTHONPATH": "{repo_root}"}},
            {"module_name": "frozen_paths", "name": "frozen", "paths": ["src/a.cc"]},
        ]}
    root = _small_checkout(tmp_path, "primary_dimension: D3\n", pipeline)
    _files(root, {
        "evaluator/shared/__init__.py": "", "evaluator/shared/helper.py": "def ok(text):\n    return 'int' in text\n",
        "evaluator/050.x/checks/check.py": (
            "import sys, pathlib\nfrom evaluator.shared.helper import ok\n"
            "case = pathlib.Path(sys.argv[2])\nassert case.name == '050.x' and case.parent.name == 'cases'\n"
            "sys.exit(0 if ok((case / 'src/a.cc').read_text()) else 3)\n"),
        "third_party/json/x.h": "// vendored\n", "docs/design_matrix.md": "| 050 x | D3 Responsibility Decomposition | micro |\n",
    })
    before = _tree_digest(root)
    probe, = read_nitr_checkout(root)
    starter = run_probe(probe, None, keep_workspace=True)
    assert starter.outcome == "pass", starter.summary()
    workspace = Path(starter.workspace)
    assert (workspace / "repo/third_party/json/x.h").is_file() and (workspace / "repo/evaluator/shared/helper.py").is_file()
    assert not (workspace / "repo/docs").exists() and (workspace / "baseline/050.x/src/a.cc").is_file()
    shutil.rmtree(workspace)
    tree = _files(tmp_path / "v", {"src/a.cc": "float a;\n"})
    variant = Variant(name="edit", kind="shortcut", expected="fail", tree=str(tree))
    run = run_probe(probe, variant)
    assert [(m.name, m.passed) for m in run.modules] == [("check", False), ("frozen", False)]
    assert run.modules[1].reason == "frozen path src/a.cc: modified"
    assert _tree_digest(root) == before


@pytest.mark.parametrize(("command", "script", "outcome", "said"), [
    (["no-such-tool-f1", "--build"], None, "error", "cannot run here: missing no-such-tool-f1"),
    (["{python}", "{evaluator_root}/checks/c.py"], "import benchwright_absent_module_zz\n", "error",
     "cannot run here: missing python module benchwright_absent_module_zz"),
    # a module the submission should have written is the submission's failure, not a missing toolchain
    (["{python}", "{evaluator_root}/checks/c.py"], "import sys; sys.path.insert(0, sys.argv[1])\nimport src.absent\n",
     "fail", None),
])
def test_a_missing_toolchain_is_cannot_run_here_not_a_failing_oracle(tmp_path, command, script, outcome, said):
    from benchwright.core.probes import run_probe

    pipeline = {"case_root": "../../.submit-output/m/cases/050.x", "build_dir": "../../build", "modules": [
        {"module_name": "customized_check", "name": "check", "command": [*command, "{case_root}"]}]}
    root = _small_checkout(tmp_path, "primary_dimension: D3\n", pipeline)
    if script:
        _files(root, {"evaluator/050.x/checks/c.py": script, "cases/050.x/src/__init__.py": ""})
    probe, = read_nitr_checkout(root)
    run = run_probe(probe, None)
    assert run.outcome == outcome, run.summary()
    assert run.error == said and run.modules[0].missing == (said.removeprefix("cannot run here: missing ") if said else None)


def test_a_submission_takes_the_case_roots_place_and_the_starter_stays_the_baseline(tmp_path):
    from benchwright.core.probes import run_probe

    pipeline = {"case_root": "../../.submit-output/m/cases/050.x", "baseline_case_root": "../../cases/050.x",
                "build_dir": "../../build", "modules": [
                    {"module_name": "required_paths", "name": "layout", "paths": ["src/b.cc"]},
                    {"module_name": "baseline_diff", "name": "diff", "allowed_created_top_levels": ["src"]}]}
    root = _small_checkout(tmp_path, "primary_dimension: D3\n", pipeline)
    probe, = read_nitr_checkout(root)
    submission = _files(tmp_path / "sub", {"src/b.cc": "int b;\n"})  # src/a.cc deleted by the submission
    run = run_probe(probe, None, submission=submission)
    assert run.submission == str(submission) and run.variant is None
    assert [(m.name, m.passed, m.reason) for m in run.modules] == [
        ("layout", True, "all 1 required paths exist"), ("diff", False, "unexpected deletion of src/a.cc")]
    (submission / "src/a.cc").write_text("int a;\n")
    assert run_probe(probe, None, submission=submission).outcome == "pass"
    (submission / "out").symlink_to("/etc")
    refused = run_probe(probe, None, submission=submission)
    assert refused.outcome == "error" and "symlink leading outside" in refused.apply_error


def test_the_fingerprint_of_a_nitr_case_covers_the_checkouts_shared_files(tmp_path):
    from benchwright.core.probes import probe_fingerprint

    root = _small_checkout(tmp_path, "primary_dimension: D3\n")
    _files(root, {"evaluator/shared/helper.py": "x = 1\n", "third_party/big.h": "// vendored\n"})
    probe, = read_nitr_checkout(root)
    first = probe_fingerprint(probe)
    (root / "third_party/big.h").write_text("// other\n")
    assert probe_fingerprint(probe) == first  # vendored code is not read for every fingerprint
    (root / "evaluator/shared/helper.py").write_text("x = 2\n")
    assert probe_fingerprint(probe) != first


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ctest") is None, reason="cmake is not installed")
def test_the_workspace_is_configured_with_one_case_enabled_before_the_modules(tmp_path):
    from benchwright.core.probes import run_probe

    pipeline = {"case_root": "../../.submit-output/m/cases/050.x", "build_dir": "../../build", "modules": [
        {"module_name": "unit_test", "name": "tests", "command": ["ctest", "--test-dir", "{build_dir}", "-R", "^case_only$"]}]}
    root = _small_checkout(tmp_path, "primary_dimension: D3\n", pipeline)
    _files(root, {"CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.16)\nproject(N LANGUAGES NONE)\nenable_testing()\n"
        "if(NOT NITR_BUILD_ALL_CASES AND NITR_CASE STREQUAL \"050.x\" AND NITR_BUILD_EVALUATOR)\n"
        "  add_test(NAME case_only COMMAND ${CMAKE_COMMAND} -E echo ok)\nendif()\n")})
    probe, = read_nitr_checkout(root)
    run = run_probe(probe, None)
    assert run.outcome == "pass", run.summary()  # no build module: without the configure, no test is registered
    assert "-DNITR_BUILD_ALL_CASES=OFF -DNITR_CASE=050.x -DNITR_BUILD_EVALUATOR=ON" in run.prepare_log


def test_a_bad_value_is_named_with_its_json_path_and_the_value():
    with pytest.raises(InputFileError) as caught:
        pipeline_from_dict({"modules": [{"module_name": "source_analysis", "name": "s", "normalize": "bogus",
                                          "rules": [{"id": "r", "any_substrings": "std::stoi"}]}]}, "p.json")
    shown = [(p.field, p.message) for p in caught.value.problems]
    assert shown[0][0] == "modules[0].normalize" and "(got 'bogus')" in shown[0][1]
    assert shown[1][0] == "modules[0].rules[0].any_substrings" and "(got 'std::stoi')" in shown[1][1]


# ---------------------------------------------------------------------------------------------------------
# Side by side with NITR's own modules (read from the shared checkout, run in this process)


def _needles(condition, out: list[str]) -> list[str]:
    if isinstance(condition, dict):
        for key, value in condition.items():
            if key in ("any_substrings", "all_substrings", "needles"):
                out.extend(value)
            elif key not in ("any_patterns", "all_patterns", "patterns"):
                _needles(value, out)
    elif isinstance(condition, list):
        for item in condition:
            _needles(item, out)
    return out


def test_file_modules_give_nitrs_verdicts_on_every_case(tmp_path, monkeypatch):
    """source_analysis, baseline_diff, frozen_paths and required_paths against NITR's evaluator/shared modules, on
    each case's starter, on the starter with every needle of its pipeline written into three source files (rules
    firing), and on the starter with a file deleted and one added."""
    from benchwright.core.probes.pipeline import RequiredPathsModule

    root = _needs_nitr()
    monkeypatch.syspath_prepend(str(root))
    from evaluator.shared.context import DefaultEvaluationContext
    from evaluator.shared.module import module_from_config

    compared, differing = 0, []
    for probe in read_nitr_checkout(root):
        raw = json.loads((root / "evaluator" / probe.id / "pipeline.json").read_text(encoding="utf-8"))
        starter = root / "cases" / probe.id
        for label in ("starter", "needles", "deleted"):
            case = tmp_path / label / "cases" / probe.id
            shutil.copytree(starter, case)
            sources = sorted(p for p in case.rglob("*") if p.is_file() and p.suffix in (".h", ".hpp", ".cc", ".cpp", ".py"))
            if label == "needles":
                for path in sources[:3]:
                    path.write_text(path.read_text(encoding="utf-8") + "\n" + "\n".join(_needles(raw["modules"], [])) + "\n")
            elif label == "deleted" and sources:
                sources[-1].unlink()
                (case / "src").mkdir(exist_ok=True)
                (case / "src" / "new_file.cc").write_text("int z;\n")
            context = DefaultEvaluationContext(repo_root=case.parents[1], case_root=case, baseline_case_root=starter,
                                               evaluator_root=root / "evaluator" / probe.id, build_dir=tmp_path / "b")
            for config, module in zip(raw["modules"], probe.pipeline.modules, strict=True):
                if isinstance(module, SourceAnalysisModule):
                    ours = not scan_sources(module, case)
                elif isinstance(module, RequiredPathsModule):
                    ours = all((case / p).exists() for p in module.paths)
                elif isinstance(module, BaselineDiffModule | FrozenPathsModule):
                    ours = not baseline_findings(module, case, starter)
                else:
                    continue
                compared += 1
                if module_from_config(config).run(context).passed != ours:
                    differing.append(f"{probe.id} {label} {module.name}: ours {'pass' if ours else 'fail'}")
            shutil.rmtree(tmp_path / label)
    assert compared > 250 and differing == []


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_a_nitr_build_module_configures_first_when_the_build_folder_has_no_cache(tmp_path):
    from benchwright.core.probes._workspace import Workspace
    from benchwright.core.probes.runner import _command_module

    pipeline = {"case_root": "../../.submit-output/m/cases/050.x", "build_dir": "../../build",
                "variables": {"hidden": False}, "modules": [
                    {"module_name": "build", "name": "b", "command": ["cmake", "--build", "{build_dir}"],
                     "configure_args": ["-DHIDDEN={hidden}"]}]}
    root = _small_checkout(tmp_path, "primary_dimension: D3\n", pipeline)
    _files(root, {"CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(N LANGUAGES NONE)\n"
                                    "message(STATUS \"hidden is ${HIDDEN}\")\n"})
    probe, = read_nitr_checkout(root)
    workspace = Workspace.create(probe.case_dir, probe.evaluator_dir, probe.pipeline, checkout=probe.checkout_root)
    try:
        build = probe.pipeline.modules[0]
        first = _command_module(build, workspace, 60, None, nitr=True)
        assert first.passed, first.log
        assert f"$ cmake -S {workspace.repo_root} -B {workspace.build_dir} -DHIDDEN=False" in first.log
        assert "hidden is False" in first.log  # a variable reads as NITR writes it: str(False)
        again = _command_module(build, workspace, 60, None, nitr=True)
        assert again.passed and "-DHIDDEN" not in again.log  # the cache exists: no second configure
    finally:
        workspace.remove()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ctest") is None, reason="cmake is not installed")
def test_a_shared_python_case_runs_as_in_nitr():
    """Case 028 on its starter: configured with one case, its CTest-registered Python tests really run (the
    starter does not do the task, so one fails), and its check script imports evaluator.shared from the checkout."""
    from benchwright.core.probes import run_probe

    probe, = read_nitr_checkout(_needs_nitr(), ["028"])
    run = run_probe(probe, None, timeout_s=300)
    assert [(m.module_name, m.passed) for m in run.modules] == [
        ("required_paths", True), ("baseline_diff", True), ("unit_test", False), ("customized_check", True)]
    tests = run.modules[2].tests
    assert tests is not None and tests.run >= 1 and tests.failed >= 1, run.modules[2].reason
    assert "-DNITR_CASE=028.validator-global-mutation-python" in run.prepare_log


def test_prose_opening_lines_are_not_taken_for_yaml_and_solid_names_map():
    fields = parse_nitr_spec("Note: this case: is about reuse\n\n# T\n- **Primary:** LSP\n")
    assert fields["primary_dimension"] == "D5"
    assert [dimension_code(n) for n in ("SRP", "OCP", "ISP", "DIP")] == ["D3", "D4", "D5", "D6"]
    with pytest.raises(InputFileError) as caught:  # declared front matter that does not read is an error
        parse_nitr_spec("---\nnote: a: b\n---\n")
    assert caught.value.problems[0].line == 2
