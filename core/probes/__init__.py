"""NITR probes: maintainability probes with hidden structural oracles (NITR, "Needle in the Repo").

A probe is a small authored repository scenario: starter code and a build file (the *case*), an
agent-visible task (``TASK.md``, or ``TASK1.md`` ... ``TASKn.md`` for a multi-step probe), a hidden spec
(``SPEC.md``: primary dimension D1-D9, secondary dimensions, intent) and a hidden *evaluator* whose
``pipeline.json`` lists the modules that decide pass or fail (build, functional tests, required paths,
source-analysis rules, customized checks). A probe passes only when every module passes (NITR, oracle
design: "A probe passes only if both succeed").

Modules:
    pipeline: the evaluator pipeline (``pipeline.json``) and its module types.
    model: :class:`Probe`, :class:`Variant`, the nine dimensions, fingerprints.
    importer: reading a probe folder and its variants, scaffolding a new probe.
    rules: source-analysis rule matching and applying a variant to a folder (no subprocess for rules).
    runner: running a probe's oracle on a variant in a throw-away workspace; oracle separation.
    counts: how many tests a ``unit_test`` command ran (CTest, GoogleTest, pytest, unittest summaries).

See ../../docs/probes.md.
"""

from .counts import TestCounts, read_test_counts
from .importer import read_probe, read_probe_folder, read_variants, sample_probe_dirs, scaffold_probe
from .model import DIMENSIONS, Probe, Variant, probe_fingerprint
from .pipeline import (
    BuildModule,
    CustomizedCheckModule,
    Pipeline,
    RequiredPathsModule,
    SourceAnalysisModule,
    SourceRule,
    UnitTestModule,
    parse_pipeline,
)
from .rules import RuleMatch, VariantApplyError, apply_variant_to, preview_matches, scan_sources
from .runner import (
    ExpectationCheck,
    ModuleResult,
    OracleRun,
    Separation,
    chain_for,
    run_all,
    run_probe,
    separation,
)

__all__ = [
    "DIMENSIONS", "BuildModule", "CustomizedCheckModule", "ExpectationCheck", "ModuleResult", "OracleRun", "Pipeline", "Probe",
    "RequiredPathsModule", "RuleMatch", "Separation", "SourceAnalysisModule", "SourceRule", "TestCounts",
    "UnitTestModule", "Variant", "VariantApplyError", "apply_variant_to", "chain_for", "parse_pipeline",
    "preview_matches", "probe_fingerprint", "read_probe", "read_probe_folder", "read_test_counts", "read_variants",
    "run_all", "run_probe", "sample_probe_dirs", "scaffold_probe", "scan_sources", "separation",
]
