"""pipeline.json: module types, validation errors naming the file and the module, round trip."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from benchwright.core.errors import InputFileError
from benchwright.core.probes import (
    BuildModule,
    CustomizedCheckModule,
    Pipeline,
    RequiredPathsModule,
    SourceAnalysisModule,
    SourceRule,
    UnitTestModule,
    parse_pipeline,
    sample_probe_dirs,
)
from benchwright.core.probes.pipeline import check_placeholders, pipeline_from_dict


def _write(tmp_path, data) -> str:
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return str(path)


def _modules(*modules) -> dict:
    return {"case_root": "case", "build_dir": "build", "modules": list(modules)}


BUILD = {"module_name": "build", "name": "compile", "command": ["cmake", "--build", "{build_dir}"]}
RULES = {
    "module_name": "source_analysis", "name": "structure", "scan_roots": ["src"],
    "rules": [{"id": "no-stoi", "any_patterns": ["std::stoi"]}],
}


def test_demo_pipelines_parse_with_every_module_type():
    kinds = set()
    for folder in sample_probe_dirs():
        pipeline = parse_pipeline(folder / "evaluator" / "pipeline.json")
        kinds |= {type(m) for m in pipeline.modules}
        assert pipeline.case_root == "case" and pipeline.build_dir == "build"
    assert {BuildModule, UnitTestModule, RequiredPathsModule, SourceAnalysisModule} <= kinds


def test_module_fields_and_defaults(tmp_path):
    pipeline = parse_pipeline(_write(tmp_path, _modules(
        BUILD,
        {"module_name": "unit_test", "name": "tests", "command": "ctest --test-dir {build_dir} -R '^t 1$'"},
        {"module_name": "required_paths", "name": "layout", "paths": ["src/a.cpp"]},
        RULES,
        {"module_name": "customized_check", "name": "custom", "command": ["{python}", "{evaluator_root}/c.py"],
         "env": {"MODE": "{case_root}"}, "cwd": "{case_root}", "timeout_s": 5},
    )))
    build, unit, paths, source, custom = pipeline.modules
    assert isinstance(build, BuildModule) and build.cwd is None and build.env == {}
    assert unit.command == ["ctest", "--test-dir", "{build_dir}", "-R", "^t 1$"]  # a string is split like a shell
    assert paths.root == "case_root"
    assert source.suffixes == [".h", ".hpp", ".cc", ".cpp"] and source.rules[0].negate is False
    assert isinstance(custom, CustomizedCheckModule) and custom.timeout_s == 5 and custom.env == {"MODE": "{case_root}"}


def test_not_rule_is_negated_and_round_trips(tmp_path):
    data = _modules({
        "module_name": "source_analysis", "name": "seam", "root": "case_root", "scan_roots": ["src/a.cpp"],
        "suffixes": [".cpp"], "exclude_files": ["legacy.cpp"],
        "rules": [{"id": "uses-seam", "not": {"any_patterns": ["Validate\\("]}, "message": "{relative_path} skips it"}],
    })
    pipeline = parse_pipeline(_write(tmp_path, data))
    rule = pipeline.modules[0].rules[0]
    assert rule.negate and rule.any_patterns == ["Validate\\("]
    written = pipeline.to_json()
    assert written["modules"][0]["rules"] == data["modules"][0]["rules"]
    assert {k: v for k, v in written["modules"][0].items() if k != "exclude_globs"} == data["modules"][0]
    assert pipeline_from_dict(pipeline.to_json()) == pipeline


def test_unknown_module_type_names_file_index_and_name(tmp_path):
    path = _write(tmp_path, _modules(BUILD, {"module_name": "lint", "name": "style", "command": ["x"]}))
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(path)
    text = str(caught.value)
    assert path in text and "modules[1]" in text and "'style'" in text and "unknown module type 'lint'" in text
    assert "source_analysis" in text  # the known types are listed


def test_missing_field_names_the_module(tmp_path):
    path = _write(tmp_path, _modules(BUILD, {"module_name": "unit_test", "name": "functional"}))
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(path)
    problem = caught.value.problems[0]
    assert problem.file == path and problem.field == "modules[1].command"
    assert "'functional' (unit_test)" in problem.message and "missing field" in problem.message


def test_missing_module_name_and_name(tmp_path):
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(_write(tmp_path, _modules({"name": "x", "command": ["a"]}, {"module_name": "build", "command": ["a"]})))
    fields = [p.field for p in caught.value.problems]
    assert fields == ["modules[0].module_name", "modules[1].name"]


def test_bad_regex_names_module_rule_and_pattern(tmp_path):
    bad = dict(RULES, rules=[{"id": "ok", "any_patterns": ["fine"]}, {"id": "broken", "any_patterns": ["x", "foo("]}])
    path = _write(tmp_path, _modules(BUILD, bad))
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(path)
    problem = caught.value.problems[0]
    assert problem.field == "modules[1].rules[1].any_patterns"
    assert "'structure' (source_analysis)" in problem.message
    assert "bad regular expression 'foo('" in problem.message and "missing )" in problem.message


def test_unknown_placeholder_is_refused(tmp_path):
    path = _write(tmp_path, _modules({"module_name": "build", "name": "b", "command": ["make", "-C", "{build_root}"]}))
    with pytest.raises(InputFileError, match=r"unknown placeholder \{build_root\}"):
        parse_pipeline(path)
    with pytest.raises(InputFileError, match="unknown placeholder"):
        parse_pipeline(_write(tmp_path, _modules(dict(BUILD, env={"X": "{home}"}))))
    with pytest.raises(InputFileError, match="unknown placeholder"):
        parse_pipeline(_write(tmp_path, _modules(dict(RULES, rules=[{"id": "r", "any_patterns": ["x"], "message": "{file}"}]))))
    assert check_placeholders("{{literal}} {case_root}") == "{{literal}} {case_root}"
    with pytest.raises(ValueError, match="malformed"):
        check_placeholders("{case_root")


def test_every_problem_is_reported_at_once(tmp_path):
    path = _write(tmp_path, _modules(
        {"module_name": "lint", "name": "a"},
        {"module_name": "build", "name": "b"},
        dict(RULES, rules=[{"id": "r", "any_patterns": ["("]}]),
    ))
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(path)
    assert [p.field.split(".")[0] for p in caught.value.problems] == ["modules[0]", "modules[1]", "modules[2]"]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"id": "r", "any_patterns": ["a"], "any_substrings": ["b"]}, "'any_patterns' next to 'any_substrings' would be ignored"),
        ({"id": "r", "all_of": [{"any_patterns": ["a"]}], "any_patterns": ["b"]}, "'any_patterns' next to 'all_of'"),
        ({"id": "r", "any_patterns": ["a"], "substring_hit_thresholds": [{"needles": ["x"]}]}, "would be ignored"),
        ({"id": "r", "not": {"any_patterns": ["a"], "extra": 1}}, r"rules\[0\]\.extra.*unknown field"),
        ({"id": "r", "all_of": [{"any_pattern": ["a"]}]}, r"rules\[0\]\.all_of\[0\]\.any_pattern.*unknown field"),
        ({"id": "r", "any_patterns": []}, "any_patterns is empty"),
        ({"id": "r", "message": "m"}, "needs a condition"),
        ({"id": "r", "pattern_hit_thresholds": [{"patterns": ["a"], "flags": ["MULTILNE"]}]}, "unknown regex flag 'MULTILNE'"),
        ({"id": "r", "substring_hit_thresholds": [{"needles": ["a"], "at_most": 2}]}, "at_most.*unknown field"),
        ({"id": "r", "any_patterns": [""]}, "empty"),
        ({"id": "r", "any_pattern": ["a"]}, "unknown field"),
        ({"any_patterns": ["a"]}, "missing field"),
    ],
)
def test_malformed_rules(tmp_path, rule, message):
    with pytest.raises(InputFileError, match=message):
        parse_pipeline(_write(tmp_path, _modules(dict(RULES, rules=[rule]))))


def test_duplicate_rule_ids(tmp_path):
    rules = [{"id": "r", "any_patterns": ["a"]}, {"id": "r", "any_patterns": ["b"]}]
    with pytest.raises(InputFileError, match="used twice"):
        parse_pipeline(_write(tmp_path, _modules(dict(RULES, rules=rules))))


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"case_root": "x", "build_dir": "x", "modules": [BUILD]}, None),
        ({"case_root": "x", "build_dir": ".", "modules": [BUILD]}, "build_dir"),
        ({"modules": [{"module_name": "required_paths", "name": "p", "paths": ["../etc/passwd"]}]}, "modules[0].paths"),
        ({"modules": [dict(RULES, scan_roots=["/etc"])]}, "modules[0].scan_roots"),
        ({"modules": [dict(RULES, root="../up")]}, "modules[0].root"),
        ({"modules": []}, "modules"),
        ({"build_dir": 3, "modules": [BUILD]}, "build_dir"),
    ],
)
def test_unsafe_or_missing_paths(tmp_path, data, field):
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(_write(tmp_path, data))
    assert caught.value.problems[0].field == field


def test_not_json_and_missing_file(tmp_path):
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(_write(tmp_path, '{\n  "modules": [\n  oops\n]}'))
    assert caught.value.problems[0].line == 3
    with pytest.raises(InputFileError, match="no such file"):
        parse_pipeline(tmp_path / "absent" / "pipeline.json")
    with pytest.raises(InputFileError, match="JSON object"):
        parse_pipeline(_write(tmp_path, "[1, 2]"))


def test_unknown_top_level_keys_are_refused_by_name(tmp_path):
    with pytest.raises(InputFileError) as caught:
        parse_pipeline(_write(tmp_path, dict(_modules(BUILD), case_id="021", description="NITR metadata")))
    assert [p.field for p in caught.value.problems] == ["case_id", "description"]
    assert "unknown top-level key" in str(caught.value)


def test_paths_outside_the_evaluator_folder_are_read_as_a_nitr_layout(tmp_path):
    data = {"case_root": "../../.submit-output/x/cases/021.f", "baseline_case_root": "../../cases/021.f",
            "build_dir": "../../build", "modules": [BUILD]}
    pipeline = parse_pipeline(_write(tmp_path, data))
    assert pipeline.layout == "nitr" and pipeline.nitr_paths == {k: v for k, v in data.items() if k != "modules"}
    assert pipeline_from_dict(pipeline.to_json()) == pipeline
    own = parse_pipeline(_write(tmp_path, _modules(BUILD)))
    assert own.layout == "benchwright" and own.nitr_paths == {}


def test_models_validate_when_built_directly():
    rule = SourceRule(id="r", any_patterns=["a"], negate=True)
    assert rule.to_json() == {"id": "r", "not": {"any_patterns": ["a"]}}
    with pytest.raises(ValidationError, match="bad regular expression"):
        SourceRule(id="r", any_patterns=["[unclosed"])
    pipeline = Pipeline(modules=[BuildModule(name="b", command=["true"]), SourceAnalysisModule(name="s", rules=[rule])])
    assert [m.module_name for m in pipeline.modules] == ["build", "source_analysis"]
    assert pipeline.source_modules()[0].name == "s"
    with pytest.raises(ValidationError):
        BuildModule(name="b", command=[])


def test_nitr_rule_shapes_round_trip():
    rules = [
        {"id": "a", "any_substrings": ["a.b(", "[z]"]},
        {"id": "b", "not": {"any_substrings": ["self.clock()"]}},
        {"id": "c", "all_of": [{"any_substrings": ["P"]}, {"substring_hit_thresholds": [{"needles": ["x", "y"], "at_least": 2}]}]},
        {"id": "d", "not": {"any_patterns": ["q"]}, "any_substrings": ["r"]},
        {"id": "e", "pattern_hit_thresholds": [{"patterns": ["^x"], "at_least": 1, "flags": ["MULTILINE"]}]},
        {"id": "f", "any_of": [{"all_patterns": ["a", "b"]}, {"all_substrings": ["c"]}], "message": "{location} {"},
    ]
    module = SourceAnalysisModule.model_validate({"module_name": "source_analysis", "name": "s", "rules": rules})
    assert [r.to_json() for r in module.rules] == rules
    assert module.rules[1].negate and module.rules[1].any_substrings == ["self.clock()"]
    assert not module.rules[3].negate and module.rules[3].not_.any_patterns == ["q"]


def test_a_variant_cannot_come_after_itself():
    import pydantic

    from benchwright.core.probes import Variant

    with pytest.raises(pydantic.ValidationError, match="after itself"):
        Variant(name="cyc", kind="intended", expected="pass", after=["cyc"])
