"""Source-analysis rules on crafted files, and applying variants (patches, overlays) safely."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchwright.core.probes import (
    SourceAnalysisModule,
    SourceRule,
    Variant,
    VariantApplyError,
    apply_variant_to,
    preview_matches,
    read_probe_folder,
    sample_probe_dirs,
    scan_sources,
)
from benchwright.core.probes.importer import unified_diff
from benchwright.core.probes.rules import check_patch, source_files

needs_patch_tool = pytest.mark.skipif(
    shutil.which("git") is None and shutil.which("patch") is None, reason="neither git nor patch is installed"
)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _module(*rules: SourceRule, **fields) -> SourceAnalysisModule:
    return SourceAnalysisModule(name="structure", rules=list(rules), **fields)


STOI = SourceRule(id="no-stoi", any_patterns=[r"std::stoi", r"std::isdigit"], message="{relative_path}:{line} parses by hand ({rule_id})")


@pytest.fixture
def repo(tmp_path) -> Path:
    return _tree(tmp_path / "case", {
        "src/filter.cpp": "#include <string>\nint parse(const std::string& s) {\n  return std::stoi(s);\n}\n",
        "src/inline.cpp": "// ok\nbool digit(char c) { return std::isdigit(c) && std::stoi(\"1\"); }\nint x = std::stoi(\"2\");\n",
        "src/legacy.cpp": "int old = std::stoi(\"3\");\n",
        "src/gen/table.cpp": "int t = std::stoi(\"4\");\n",
        "src/notes.txt": "std::stoi is banned\n",
        "src/validate.h": "#pragma once\nbool Validate(int);\n",
        "tools/helper.cpp": "int h = std::stoi(\"5\");\n",
    })


def test_violations_name_rule_file_line_and_text(repo):
    matches = scan_sources(_module(STOI, exclude_files=["legacy.cpp"], exclude_globs=["src/gen/*"]), repo)
    # as in NITR, one finding per rule and file, at the first location found
    assert [(m.relative_path, m.line) for m in matches] == [("src/filter.cpp", 3), ("src/inline.cpp", 2)]
    first = matches[0]
    assert first.rule_id == "no-stoi" and first.kind == "violation" and first.text == "return std::stoi(s);"
    assert first.message == "src/filter.cpp:3 parses by hand (no-stoi)"


def test_suffix_filtering_and_scan_roots(repo):
    assert {m.relative_path for m in scan_sources(_module(STOI), repo)} == {
        "src/filter.cpp", "src/inline.cpp", "src/legacy.cpp", "src/gen/table.cpp",
    }  # .txt is not a default suffix; tools/ is not a scan root
    with_txt = scan_sources(_module(STOI, suffixes=[".txt"]), repo)
    assert [m.relative_path for m in with_txt] == ["src/notes.txt"]
    every_file = scan_sources(_module(STOI, suffixes=[], scan_roots=["src", "tools"]), repo)
    assert "src/notes.txt" in {m.relative_path for m in every_file} and "tools/helper.cpp" in {m.relative_path for m in every_file}
    # a file named as a scan root is scanned whatever its suffix
    assert [m.relative_path for m in scan_sources(_module(STOI, scan_roots=["src/notes.txt"]), repo)] == ["src/notes.txt"]
    assert scan_sources(_module(STOI, scan_roots=["absent"]), repo) == []


def test_excluded_files_by_name_path_and_glob(repo):
    def scanned(**fields):
        return [p for p, _ in source_files(_module(STOI, **fields), repo)]

    assert "src/legacy.cpp" not in scanned(exclude_files=["legacy.cpp"])
    assert "src/legacy.cpp" not in scanned(exclude_files=["src/legacy.cpp"])
    assert "src/gen/table.cpp" not in scanned(exclude_globs=["*/gen/*"])
    assert "src/filter.cpp" not in scanned(exclude_globs=["filter.*"])


def test_not_rule_reports_files_missing_the_pattern(repo):
    rule = SourceRule(id="uses-validate", any_patterns=[r"Validate\("], negate=True)
    matches = scan_sources(_module(rule, scan_roots=["src"], suffixes=[".h", ".cpp"], exclude_globs=["src/gen/*"]), repo)
    assert all(m.kind == "missing" and m.line is None for m in matches)
    assert "src/validate.h" not in {m.relative_path for m in matches}
    assert {m.relative_path for m in matches} == {"src/filter.cpp", "src/inline.cpp", "src/legacy.cpp"}
    assert matches[0].message == "required pattern of rule uses-validate not found in src/filter.cpp"
    only_header = scan_sources(_module(rule, scan_roots=["src/validate.h"]), repo)
    assert only_header == []


def test_not_rule_with_nothing_to_scan_passes_as_in_nitr(repo):
    # NITR checks rules file by file: with no file there is no finding (the build and tests catch a removed file)
    rule = SourceRule(id="must-exist", any_patterns=["x"], negate=True)
    assert scan_sources(_module(rule, scan_roots=["src/removed.cpp"]), repo) == []
    assert scan_sources(_module(STOI, scan_roots=["src/removed.cpp"]), repo) == []


def test_multiline_pattern_reports_the_line_where_it_starts(tmp_path):
    root = _tree(tmp_path, {"src/a.cpp": "int f() {\n  if (x) {\n    return 1;\n  } else if (y) {\n  }\n}\n"})
    rule = SourceRule(id="if-chain", any_patterns=[r"(?s)if \(x\).*else if"])
    assert [(m.line, m.text) for m in scan_sources(_module(rule), root)] == [(2, "if (x) {")]
    flags = SourceRule(id="ci", any_patterns=[r"(?im)^\s*RETURN 1"])
    assert [m.line for m in scan_sources(_module(flags), root)] == [3]


def test_symlinks_leading_outside_are_not_scanned(tmp_path):
    outside = _tree(tmp_path / "outside", {"secret.cpp": "std::stoi\n"})
    root = _tree(tmp_path / "case", {"src/a.cpp": "int a;\n"})
    (root / "src" / "link.cpp").symlink_to(outside / "secret.cpp")
    (root / "src" / "linkdir").symlink_to(outside, target_is_directory=True)
    assert scan_sources(_module(STOI), root) == []


def test_undecodable_bytes_do_not_stop_the_scan(tmp_path):
    root = tmp_path / "case"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.cpp").write_bytes(b"\xff\xfe std::stoi(x)\n")
    assert [m.line for m in scan_sources(_module(STOI), root)] == [1]


# -------------------------------------------------------------------------------------------------------------
# applying variants


def _variant(tmp_path: Path, name: str, *, patch: str | None = None, tree: dict[str, str] | None = None) -> Variant:
    folder = tmp_path / "variants" / name
    folder.mkdir(parents=True)
    patch_path = tree_path = None
    if patch is not None:
        patch_path = folder / "patch.diff"
        patch_path.write_text(patch, encoding="utf-8")
    if tree is not None:
        tree_path = _tree(folder / "tree", tree)
    return Variant(name=name, kind="intended", expected="pass", patch=patch_path and str(patch_path),
                   tree=tree_path and str(tree_path))


@needs_patch_tool
def test_patch_applies(tmp_path, repo):
    before = (repo / "src/filter.cpp").read_text()
    after = before.replace("std::stoi(s)", "Parse(s)")
    variant = _variant(tmp_path, "fix", patch=unified_diff("src/filter.cpp", before, after) + unified_diff("src/new.h", None, "// new\n"))
    apply_variant_to(repo, variant)
    assert (repo / "src/filter.cpp").read_text() == after
    assert (repo / "src/new.h").read_text() == "// new\n"


@needs_patch_tool
def test_patch_that_does_not_apply_changes_nothing(tmp_path, repo):
    diff = unified_diff("src/filter.cpp", "something else\nentirely\n", "changed\n") + unified_diff("src/added.h", None, "x\n")
    variant = _variant(tmp_path, "stale", patch=diff)
    with pytest.raises(VariantApplyError, match="stale: the patch does not apply"):
        apply_variant_to(repo, variant)
    assert not (repo / "src/added.h").exists()


@needs_patch_tool
def test_patch_leaving_the_case_is_refused(tmp_path, repo):
    sentinel = tmp_path / "outside" / "sentinel.txt"
    escape = "../" * 40 + str(sentinel).lstrip("/")
    variant = _variant(tmp_path, "evil", patch=unified_diff(escape, None, "pwned\n"))
    with pytest.raises(VariantApplyError, match="outside the case; refused"):
        apply_variant_to(repo, variant)
    assert not sentinel.exists()
    with pytest.raises(VariantApplyError, match="refused"):
        check_patch("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(VariantApplyError, match="symbolic link"):
        check_patch("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n")
    with pytest.raises(VariantApplyError, match="refused"):
        check_patch("diff --git a/x b/y\nrename from x\nrename to ../../y\n")
    with pytest.raises(VariantApplyError, match="names no file"):
        check_patch("just text\n")


def test_overlay_adds_and_replaces_files(tmp_path, repo):
    variant = _variant(tmp_path, "overlay", tree={"src/filter.cpp": "int parse();\n", "src/extra/new.cpp": "int n;\n"})
    apply_variant_to(repo, variant)
    assert (repo / "src/filter.cpp").read_text() == "int parse();\n"
    assert (repo / "src/extra/new.cpp").exists() and (repo / "src/inline.cpp").exists()


def test_overlay_symlink_out_is_refused(tmp_path, repo):
    outside = tmp_path / "outside"
    outside.mkdir()
    variant = _variant(tmp_path, "evil-tree", tree={"src/ok.cpp": "int ok;\n"})
    (Path(variant.tree) / "src" / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(VariantApplyError, match="symlink leading outside"):
        apply_variant_to(repo, variant)
    assert not (repo / "src/ok.cpp").exists()  # checked before anything is written


def test_overlay_through_a_symlink_of_the_case_is_refused(tmp_path, repo):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "out", target_is_directory=True)
    variant = _variant(tmp_path, "through-link", tree={"out/sentinel.txt": "pwned\n"})
    with pytest.raises(VariantApplyError, match="outside the case"):
        apply_variant_to(repo, variant)
    assert not (outside / "sentinel.txt").exists()


def test_variant_without_patch_or_tree_changes_nothing(repo):
    apply_variant_to(repo, Variant(name="noop", kind="shortcut", expected="fail"))
    assert (repo / "src/filter.cpp").exists()


@needs_patch_tool
def test_preview_matches_a_variant_without_running_it():
    probe, variants = read_probe_folder(next(d for d in sample_probe_dirs() if d.name == "pricing_strategy"))
    by_name = {v.name: v for v in variants}
    module = next(m for m in probe.pipeline.source_modules() if m.name == "calculate() stays generic")
    shortcut = preview_matches(probe, module, by_name["shortcut"])
    assert [(m.rule_id, m.relative_path, m.line) for m in shortcut] == [("no-special-case-in-calculate", "src/calculator.cpp", 16)]
    assert shortcut[0].text == "if (order.quantity >= 10) {"
    assert preview_matches(probe, module, by_name["intended"]) == []
    edited = module.model_copy(update={"rules": [SourceRule(id="loops", any_patterns=[r"\bfor\s*\("])]})
    assert [m.line for m in preview_matches(probe, edited)] == [13]  # the starter code, an edited rule
