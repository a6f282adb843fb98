"""Probes and variants (NITR probe construction, Steps 1-4; oracle validation).

A :class:`Probe` is a case (starter code, build file, agent-visible task files) with a hidden spec and a
hidden evaluator pipeline. A :class:`Variant` is a known solution used to validate the oracle: NITR
("Oracle validation") checks each oracle "against intended maintainable solutions, representative shortcut
solutions, and near-miss variants" until it "stably separated the intended solution family from targeted
shortcuts".
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .pipeline import Pipeline

DIMENSIONS: dict[str, str] = {
    "D1": "Change Locality",
    "D2": "Reuse and Repo Awareness",
    "D3": "Responsibility Decomposition",
    "D4": "Extension Structure",
    "D5": "Interface and Substitutability Discipline",
    "D6": "Dependency Control",
    "D7": "Testability and Determinism",
    "D8": "State Ownership and Lifecycle",
    "D9": "Side-Effect Isolation",
}
"""The nine NITR maintainability dimensions (NITR, "The nine dimensions include: (D1) Change Locality ...")."""

VariantKind = Literal["intended", "shortcut", "near-miss"]
Expectation = Literal["pass", "fail"]
Granularity = Literal["micro", "multi-step"]

CHECKOUT_FINGERPRINTED = ("CMakeLists.txt", "cases/CMakeLists.txt", "evaluator/CMakeLists.txt", "evaluator/cmake",
                          "evaluator/shared", "evaluator/run_evaluation_pipeline.py")
"""The run-time files of a NITR checkout that a probe imported from it also hashes (``third_party/``, vendored
googletest and json, is left out: 17 MB read for every fingerprint)."""

FINGERPRINT_SKIPPED = ("__pycache__", ".git", ".DS_Store")
"""Names left out of :func:`probe_fingerprint` (with ``*.pyc``): caches that change without an edit."""


def _check_dimension(value: str) -> str:
    code = value.strip().upper()
    if code not in DIMENSIONS:
        raise ValueError(f"unknown dimension {value!r}; expected one of D1 ... D9")
    return code


DIMENSION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "D1": ("locality", "configuration", "api"),
    "D2": ("reuse", "awareness"),
    "D3": ("responsibility", "responsibilities", "decomposition", "separation", "srp"),
    "D4": ("extension", "extensibility", "extensible", "ocp"),
    "D5": ("interface", "substitutability", "substitutable", "lsp", "isp"),
    "D6": ("dependency", "dependencies", "decoupling", "dip"),
    "D7": ("testability", "determinism", "deterministic"),
    "D8": ("state", "lifecycle", "ownership"),
    "D9": ("side", "effect", "effects"),
}
"""Words that name a dimension in NITR's SPEC files, which write dimensions as slugs (``testability``,
``state_lifecycle``, ``side_effect_containment``), phrases and codes. The words of each dimension's name,
plus: ``configuration`` and ``api`` for D1 (NITR's design matrix gives "signature churn" and "unnecessary
public API expansion" as D1 failures; its config-sprawl cases are D1), ``decoupling`` for D6, and the SOLID
principles NITR's older cases are named after (``srp`` D3, ``ocp`` D4, ``lsp`` and ``isp`` D5, ``dip`` D6, as
its design matrix files 004-cv-srp, 005-pricing-ocp, 006-gs-isp, 007-ml-lsp and 008-map-dip). Words shared by
no two dimensions, so a name maps to one dimension or to none."""


def dimension_code(name: str) -> str | None:
    """The D-code a dimension name means, or ``None`` when it means none or several.

    Accepted: a code (``D3``, ``d3``, ``D4.``), a code followed by text (``D2 Reuse and Repo Awareness``: the
    code wins), or a name whose words (split at spaces, ``_``, ``-`` and punctuation) point at one dimension
    only (:data:`DIMENSION_KEYWORDS`): ``testability``, ``interface_and_substitutability_discipline``,
    ``state_lifecycle``, ``Change Locality``.
    """
    text = name.strip().strip("`*_ ").strip()
    code = re.match(r"^D\s*(\d+)\b", text, re.IGNORECASE)
    if code:
        found = f"D{int(code.group(1))}"
        return found if found in DIMENSIONS else None
    words = {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w}
    hits = {c for c, keys in DIMENSION_KEYWORDS.items() if words & set(keys)}
    return hits.pop() if len(hits) == 1 else None


def dimension_names() -> str:
    """The accepted dimension names, for error messages: ``D1 (Change Locality, change_locality)`` ..."""
    return "; ".join(f"{code} ({name}, {re.sub(r'[^a-z0-9]+', '_', name.lower())})" for code, name in DIMENSIONS.items())


class Probe(BaseModel):
    """A NITR probe.

    Attributes:
        id: a short identifier (``pricing-strategy``); names the probe in runs and sign-offs.
        title: one line for lists.
        primary_dimension: ``D1`` ... ``D9`` (NITR: "Each case declares exactly one primary_dimension").
        secondary_dimensions: further ``D`` codes, in order, without the primary one.
        intent: what the oracle checks and why (hidden from the agent).
        granularity: ``micro`` (one ``TASK.md``) or ``multi-step`` (``TASK1.md`` ... ``TASKn.md``; NITR Step 4:
            "each applied to the code produced at the previous step").
        steps: the task texts in order; one for a micro probe.
        case_dir: the case folder (starter code, build file, task files, by default ``SPEC.md``).
        evaluator_dir: the hidden evaluator folder (``pipeline.json``, hidden tests, helper scripts).
        pipeline: the parsed ``pipeline.json``.
        spec_file: the ``SPEC.md`` that was read, or ``None``.
        checkout_root: for a probe imported from a NITR checkout, the checkout (its run-time files:
            ``evaluator/shared``, CMake files, ``third_party``, are copied from it into each run's workspace);
            ``None`` for a probe folder.
        language, difficulty, domain: from the spec, as written (``C++``, ``easy-medium``, ``utils``), or "".
        paired_with: the id of the case this one is a port of (NITR ``paired_with``), or "".
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    title: str
    primary_dimension: str
    secondary_dimensions: list[str] = Field(default_factory=list)
    intent: str = ""
    granularity: Granularity
    steps: list[str] = Field(min_length=1)
    case_dir: str
    evaluator_dir: str
    pipeline: Pipeline
    spec_file: str | None = None
    checkout_root: str | None = None
    language: str = ""
    difficulty: str = ""
    domain: str = ""
    paired_with: str = ""

    @field_validator("primary_dimension")
    @classmethod
    def _primary(cls, value: str) -> str:
        return _check_dimension(value)

    @field_validator("secondary_dimensions")
    @classmethod
    def _secondary(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        for item in value:
            code = _check_dimension(item)
            if code not in out:
                out.append(code)
        return out

    @model_validator(mode="after")
    def _consistent(self) -> Probe:
        if self.primary_dimension in self.secondary_dimensions:
            raise ValueError(f"{self.primary_dimension} is the primary dimension; leave it out of the secondary ones")
        if self.granularity == "micro" and len(self.steps) != 1:
            raise ValueError("a micro probe has exactly one task (TASK.md)")
        return self

    @property
    def dimension_name(self) -> str:
        """The primary dimension's name, e.g. ``Extension Structure``."""
        return DIMENSIONS[self.primary_dimension]


class Variant(BaseModel):
    """A known solution of a probe, with the oracle outcome it should get.

    Attributes:
        name: the variant's folder name (unique per probe).
        kind: ``intended`` (the maintainable solution), ``shortcut`` (passes the behaviour, breaks the
            structure) or ``near-miss`` (close to one of them; shows whether the oracle is too strict or
            too loose).
        expected: ``pass`` or ``fail``.
        step: for a multi-step probe, the step (1-based) this variant is the edit of; ``None`` for a micro
            probe or for a variant covering the whole sequence.
        patch: path of a unified diff applied with ``-p1`` at the case root, or ``None``.
        tree: path of an overlay folder copied over the case root, or ``None``.
        after: names of variants applied before this one, in order; when empty, a step-``k`` variant is
            applied after the intended variant of each step ``1..k-1`` (see
            :func:`benchwright.core.probes.runner.chain_for`).
        description: free text.

    At most one of ``patch`` and ``tree`` is set; with neither the variant is the starter code unchanged.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    kind: VariantKind
    expected: Expectation
    step: int | None = Field(default=None, ge=1)
    patch: str | None = None
    tree: str | None = None
    after: list[str] = Field(default_factory=list)
    description: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> Variant:
        if self.patch is not None and self.tree is not None:
            raise ValueError("a variant has a patch or a tree overlay, not both")
        if self.name in self.after:
            raise ValueError(f"variant {self.name!r} cannot come after itself")
        return self


def _hash_tree(digest: hashlib._Hash, label: str, root: Path) -> None:
    digest.update(f"\0tree\0{label}\0".encode())
    if not root.exists():
        digest.update(b"\0absent\0")
        return
    if root.is_file():
        digest.update(b"\0file\0" + root.read_bytes())
        return
    entries: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in FINGERPRINT_SKIPPED)
        for name in filenames:
            if name in FINGERPRINT_SKIPPED or name.endswith(".pyc"):
                continue
            path = Path(dirpath) / name
            entries.append((path.relative_to(root).as_posix(), path))
        for name in dirnames:
            path = Path(dirpath) / name
            if path.is_symlink():
                entries.append((path.relative_to(root).as_posix(), path))
    for relative, path in sorted(entries):
        digest.update(relative.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link\0" + os.readlink(path).encode() + b"\0")
        else:
            content = path.read_bytes()
            digest.update(str(len(content)).encode() + b"\0" + content)


def probe_fingerprint(probe: Probe, variants: Iterable[Variant] | Sequence[Variant] = ()) -> str:
    """SHA-256 (hex) over every file of the probe's case and evaluator folders, its spec file and the
    variants (their metadata, patch files and overlay trees).

    For a probe imported from a NITR checkout, the checkout's shared run-time files (:data:`CHECKOUT_FINGERPRINTED`)
    count too. Any edit of a file, a rename, an added or removed file or variant changes it, so a sign-off recorded
    with a fingerprint is stale when the fingerprint differs. Caches (``__pycache__``, ``*.pyc``, ``.git``,
    ``.DS_Store``) are left out; symlinks count by their target text. Variants are taken in name order, so
    the order of ``variants`` does not matter. Missing folders hash as absent rather than raising.
    """
    digest = hashlib.sha256(b"benchwright-probe-v1\0")
    digest.update(probe.id.encode() + b"\0")
    _hash_tree(digest, "case", Path(probe.case_dir))
    _hash_tree(digest, "evaluator", Path(probe.evaluator_dir))
    if probe.spec_file and not Path(probe.spec_file).resolve().is_relative_to(Path(probe.case_dir).resolve()):
        _hash_tree(digest, "spec", Path(probe.spec_file))
    if probe.checkout_root:
        for relative in CHECKOUT_FINGERPRINTED:
            _hash_tree(digest, f"checkout:{relative}", Path(probe.checkout_root) / relative)
    for variant in sorted(variants, key=lambda v: v.name):
        meta = variant.model_dump(exclude={"patch", "tree"})
        digest.update(b"\0variant\0" + json.dumps(meta, sort_keys=True).encode())
        if variant.patch is not None:
            _hash_tree(digest, "patch", Path(variant.patch))
        if variant.tree is not None:
            _hash_tree(digest, "overlay", Path(variant.tree))
    return digest.hexdigest()
