"""Differential check against NITR's own evaluator (issue 14, item 4).

For each case of the shared NITR checkout (``../shared/data/nitr``), NITR's ``evaluator/run_evaluation_pipeline.py``
and benchwright's runner judge the same submissions: the starter, and the variants of
``tests/data/nitr_variants/<case id>/`` (an intended solution and a shortcut written for the case, in the form
``probes import NITR_ROOT --variants DIR`` reads). The per-module verdicts must be the same, except where
:data:`EXCEPTIONS` records a difference whose reason lies in NITR.

NITR is run as its users run it on a case (README: "ask your coding system to edit files under
``cases/<case_slug>/``", then run the evaluator): in a copy of the checkout made once per session, the submission
replaces ``cases/<id>/``, a build folder is configured with the case enabled (as
``tools/run_case.py --with-evaluator`` does: ``-DNITR_BUILD_ALL_CASES=OFF -DNITR_CASE=<id>
-DNITR_BUILD_EVALUATOR=ON``) and reused across submissions and cases, and the evaluator gets every path explicitly
(``--case_root``, ``--evaluator_root`` at their places in the copy, so it does not stage a second copy;
``--baseline_case_root`` the pristine starter; ``--build_dir``). Staging (a submission outside ``cases/``, such as
``.submit-output/<config>/cases/<id>/``) builds a fresh copy without a build folder: a Python case, which has no
``build`` module, then finds no tests (``test_nitr_staged_python_case_finds_no_tests`` asserts that difference).

Which cases run: every case here is ``slow``. By default (and in CI, ``CI=true``) a fixed sample of two C++ and
two Python cases (:data:`SAMPLE`); with ``BENCHWRIGHT_NITR_DIFF=all`` every case of the checkout (the starter of
each, and the variants where there are some).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.core.probes import read_variants, run_probe
from benchwright.core.probes.nitr import nitr_case_ids, read_nitr_checkout

NITR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nitr"
VARIANTS = Path(__file__).resolve().parents[1] / "data" / "nitr_variants"

#: The cases CI runs (two C++, two Python); ``BENCHWRIGHT_NITR_DIFF=all`` runs every case.
SAMPLE = (
    "012.cache-lifecycle",
    "021.inline-filter-entrypoint-reuse",
    "028.validator-global-mutation-python",
    "035.cache-lifecycle-python",
)

#: (case id, submission, module name) -> why NITR's verdict differs from ours (the difference is asserted).
EXCEPTIONS: dict[tuple[str, str, str], str] = {}

TIMEOUT_S = 600


def _all_wanted() -> bool:
    return os.environ.get("BENCHWRIGHT_NITR_DIFF", "").strip().lower() == "all"


def _case_ids() -> list[str]:
    if not (NITR / "evaluator").is_dir():
        return list(SAMPLE)
    return nitr_case_ids(NITR)


def _needs_toolchain() -> None:
    if not (NITR / "evaluator").is_dir():
        pytest.skip(f"real data {NITR} is absent (the shared data folder ../shared/data is not checked out here)")
    missing = [tool for tool in ("cmake", "ctest", "c++", "python3") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"cannot run here: missing {', '.join(missing)}")


@pytest.fixture(scope="session")
def nitr_copy(tmp_path_factory) -> Path:
    """A writable copy of the shared checkout (NITR's evaluator runs from it; the checkout is never written)."""
    _needs_toolchain()
    root = tmp_path_factory.mktemp("nitr") / "R"
    shutil.copytree(NITR, root, ignore=shutil.ignore_patterns(".git", "__pycache__", "build"))
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
    return root


def _submission_tree(case_id: str, variant, dest: Path) -> Path:
    """The starter of ``case_id`` with ``variant`` (an overlay or a patch) applied, at ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    # Fresh modification times (shutil.copy, not copy2), as an edit gives them: the build folder is reused, and
    # files keeping the checkout's older times would look older than the objects built from the last submission.
    shutil.copytree(NITR / "cases" / case_id, dest, copy_function=shutil.copy)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    if variant is None:
        return dest
    if variant.tree:
        shutil.copytree(variant.tree, dest, dirs_exist_ok=True, copy_function=shutil.copy)
    if variant.patch:
        subprocess.run(["git", "apply", "-p1", str(Path(variant.patch).resolve())], cwd=dest, check=True,
                       capture_output=True, timeout=60)
    return dest


def _configure(copy: Path, case_id: str) -> Path:
    """NITR's build folder, configured for one case as ``tools/run_case.py --with-evaluator`` does. One folder
    serves every case (configured again for each), so googletest is compiled once."""
    build = copy.parent / "build"
    stamp = build / ".configured-case"
    if not stamp.exists() or stamp.read_text() != case_id:
        subprocess.run(["cmake", "-S", str(copy), "-B", str(build), "-DNITR_BUILD_ALL_CASES=OFF",
                        f"-DNITR_CASE={case_id}", "-DNITR_BUILD_EVALUATOR=ON"],
                       check=True, capture_output=True, text=True, timeout=TIMEOUT_S)
        stamp.write_text(case_id)
    return build


def _nitr_verdicts(copy: Path, case_id: str, variant, *, staged: bool = False) -> list[tuple[str, bool]]:
    """NITR's per-module verdicts (module name, passed) on the submission, from its own evaluator."""
    pristine = copy.parent / "pristine" / case_id
    if not pristine.exists():
        _submission_tree(case_id, None, pristine)
    if staged:
        case = _submission_tree(case_id, variant, copy / ".submit-output" / "starter" / "cases" / case_id)
        paths = ["--override", f"case_root={case}", "--override", f"build_dir={copy / 'build'}"]
    else:
        case = _submission_tree(case_id, variant, copy / "cases" / case_id)
        paths = ["--case_root", str(case), "--evaluator_root", str(copy / "evaluator" / case_id),
                 "--baseline_case_root", str(pristine), "--build_dir", str(_configure(copy, case_id))]
    done = subprocess.run([sys.executable, str(copy / "evaluator" / "run_evaluation_pipeline.py"),
                           str(copy / "evaluator" / case_id / "pipeline.json"), *paths],
                          capture_output=True, text=True, timeout=TIMEOUT_S, cwd=copy)
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"NITR's evaluator gave no JSON for {case_id} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return [(m["name"], bool(m["passed"])) for m in payload["module_results"]]


def _submissions(case_id: str) -> list:
    folder = VARIANTS / case_id
    return [None, *read_variants(folder)] if folder.is_dir() else [None]


@pytest.mark.slow
@pytest.mark.parametrize("case_id", _case_ids())
def test_module_verdicts_agree_with_nitrs_evaluator(case_id, nitr_copy):
    if case_id not in SAMPLE and not _all_wanted():
        pytest.skip("not in the CI sample; BENCHWRIGHT_NITR_DIFF=all runs every case")
    probe, = read_nitr_checkout(NITR, [case_id])
    differing, compared = [], 0
    for variant in _submissions(case_id):
        label = variant.name if variant is not None else "starter"
        theirs = _nitr_verdicts(nitr_copy, case_id, variant)
        run = run_probe(probe, variant, timeout_s=TIMEOUT_S)
        if run.error and run.error.startswith("cannot run here"):
            pytest.skip(f"{case_id}: {run.error}")  # a missing toolchain is not a verdict (issue 14, Bad input)
        assert run.error is None or run.modules, f"{case_id} {label}: {run.error} {run.apply_error}"
        ours = [(m.name, bool(m.passed)) for m in run.modules]
        assert [name for name, _ in ours] == [name for name, _ in theirs], f"{case_id} {label}: modules differ"
        for (name, mine), (_, nitr) in zip(ours, theirs, strict=True):
            compared += 1
            why = EXCEPTIONS.get((case_id, label, name))
            if why is not None:
                assert mine != nitr, f"{case_id} {label} {name}: recorded difference is gone ({why})"
            elif mine != nitr:
                reason = next(m.reason for m in run.modules if m.name == name)
                differing.append(f"{label} {name}: NITR {'pass' if nitr else 'fail'}, ours "
                                 f"{'pass' if mine else 'fail'} ({reason})")
        print(f"NITR-DIFF {case_id} {label}: {len(ours)} modules, "
              f"NITR {['pass' if p else 'fail' for _, p in theirs]}, ours {run.outcome}")
    assert differing == [], f"{case_id}: {compared} module verdicts compared; differing: {differing}"


def test_the_variants_are_an_intended_and_a_shortcut_for_a_dozen_cases_across_cpp_and_python():
    """The test data: ``tests/data/nitr_variants/<case id>/<variant>/`` as ``probes import NITR_ROOT --variants DIR``
    reads it, each folder named after a case of the checkout."""
    folders = sorted(p for p in VARIANTS.iterdir() if p.is_dir())
    python = [f.name for f in folders if f.name.endswith("-python")]
    assert len(folders) >= 12 and len(python) >= 4 and len(folders) - len(python) >= 4
    if (NITR / "cases").is_dir():
        assert {f.name for f in folders} <= set(nitr_case_ids(NITR))
    for folder in folders:
        kinds = sorted(v.kind for v in read_variants(folder))
        assert "intended" in kinds and "shortcut" in kinds, folder.name
    assert set(SAMPLE) <= {f.name for f in folders}


@pytest.mark.slow
def test_nitr_staged_python_case_finds_no_tests(nitr_copy):
    """NITR quirk, asserted: a submission outside ``cases/`` (``.submit-output/<config>/cases/<id>/``) is staged in
    a fresh copy of the checkout without a build folder; a Python case has no ``build`` module to configure one,
    so NITR's ``unit_test`` fails an intended solution (ctest: the build folder does not exist), where NITR run in
    place, and benchwright (which configures the case first), pass it."""
    case_id = "028.validator-global-mutation-python"
    intended, = (v for v in read_variants(VARIANTS / case_id) if v.name == "intended")
    staged = dict(_nitr_verdicts(nitr_copy, case_id, intended, staged=True))
    in_place = dict(_nitr_verdicts(nitr_copy, case_id, intended))
    probe, = read_nitr_checkout(NITR, [case_id])
    ours = {m.name: m.passed for m in run_probe(probe, intended, timeout_s=TIMEOUT_S).modules}
    assert staged["case028_validator_tests"] is False
    assert in_place["case028_validator_tests"] is True and ours["case028_validator_tests"] is True
    assert all(in_place.values()) and all(ours.values())
