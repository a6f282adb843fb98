"""Signed-off probes in a release, in NITR's layout (docs/releases.md, "Probes").

Under ``probes/`` of a release folder::

    probes.jsonl                   one JSON object per probe, sorted by id: what it is, its fingerprint, sign-off
    cases/<id>/                    the case (starter code, build file, TASK*.md), byte for byte
    evaluator/<id>/                the hidden evaluator (pipeline.json, checks, hidden tests, data)
    docs/<id>/SPEC.md              the hidden spec
    variants/<id>/<name>/          variant.json and patch.diff or tree/
    validation/<id>.json           the validation matrix: per variant expected, outcome, per-module verdicts
    CMakeLists.txt, cases/CMakeLists.txt, evaluator/{CMakeLists.txt, cmake/, shared/, run_evaluation_pipeline.py},
    docs/design_matrix.md,         for probes imported from a NITR checkout: its shared run-time files, design
    LICENSE, NOTICE, CITATION.cff  matrix, license and citation (``third_party/`` and ``tools/`` are not copied)

so ``probes/`` is itself a NITR checkout that ``benchwright probes import`` reads. Files are copied as bytes
(caches such as ``__pycache__`` and ``*.pyc`` left out, as the fingerprint leaves them out); the JSON files are
written with sorted keys, so the same probes give the same bytes. Every file is listed in manifest.json.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchwright.core.probes.model import (
    CHECKOUT_FINGERPRINTED,
    DIMENSIONS,
    FINGERPRINT_SKIPPED,
    Probe,
    Variant,
)

from .rows import ReleaseError

PROBES_DIR = "probes"
PROBES_INDEX = f"{PROBES_DIR}/probes.jsonl"
VALIDATION_DIR = "validation"
SPEC_NAME = "SPEC.md"
DESIGN_MATRIX = "docs/design_matrix.md"
"""NITR's table of every case's primary dimension, copied with the shared files: the oldest cases' specs name none."""
CHECKOUT_TERMS = ("LICENSE", "NOTICE", "CITATION.cff")
"""A NITR checkout's license, notice and citation files, released with its cases (NITR is Apache-2.0, which asks
that its license go with every copy)."""


@dataclass(frozen=True)
class ReleaseProbe:
    """A signed-off probe as a release needs it.

    Attributes:
        probe: the probe (its ``case_dir``, ``evaluator_dir``, ``spec_file`` and ``checkout_root`` are read).
        variants: its variants (their ``patch`` or ``tree`` is read).
        fingerprint: the probe's fingerprint, under which it was signed off.
        signed_off_by, signed_off_at, sign_off_reason: the sign-off (an annotator name, pseudonymized when
            written unless the release names annotators).
        runs: the oracle runs the sign-off rests on, ``{variant name or None (the starter): run dict}``
            (``OracleRun.model_dump(mode="json")``).
    """

    probe: Probe
    variants: Sequence[Variant]
    fingerprint: str
    signed_off_by: str
    signed_off_at: str
    sign_off_reason: str = ""
    runs: dict = field(default_factory=dict)


def _files(root: Path) -> list[tuple[str, Path]]:
    """``(relative POSIX path, path)`` of every file under ``root`` (or ``root`` itself), sorted; caches left out.

    Raises:
        ReleaseError: a symlink (a release holds files only).
    """
    if root.is_symlink():
        raise ReleaseError(f"{root} is a symlink; a release holds files only")
    if root.is_file():
        return [("", root)]
    out: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in FINGERPRINT_SKIPPED)
        for name in [*filenames, *dirnames]:
            path = Path(dirpath) / name
            if path.is_symlink():
                raise ReleaseError(f"{path} is a symlink; a release holds files only (replace it by the file)")
        out += [(Path(dirpath, n).relative_to(root).as_posix(), Path(dirpath) / n) for n in filenames
                if n not in FINGERPRINT_SKIPPED and not n.endswith(".pyc")]
    return sorted(out)


def _json_bytes(data) -> bytes:
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _module_verdict(module: dict) -> dict:
    tests = module.get("tests")
    return {
        "name": module.get("name"), "module": module.get("module_name"),
        "verdict": "pass" if module.get("passed") else "fail", "reason": module.get("reason", ""),
        "findings": len(module.get("matches") or []),
        "tests": None if not tests else {k: tests.get(k) for k in ("tool", "run", "passed", "failed", "skipped")},
        "missing": module.get("missing"),
    }


def validation_matrix(item: ReleaseProbe, signed_off_by: str) -> dict:
    """The validation matrix of a probe (``probes/validation/<id>.json``): the fingerprint and sign-off, then
    per variant (sorted by name; the starter first, ``variant: null``) its kind, expected and actual outcome
    and the per-module verdicts of the run the sign-off rests on (no logs, no durations)."""
    kinds = {v.name: v for v in item.variants}
    rows = []
    for name in sorted(item.runs, key=lambda n: (n is not None, n or "")):
        run = item.runs[name]
        variant = kinds.get(name)
        rows.append({
            "variant": name, "kind": variant.kind if variant else "starter",
            "expected": variant.expected if variant else None, "outcome": run.get("outcome"),
            "as_expected": None if variant is None else run.get("outcome") == variant.expected,
            "chain": list(run.get("chain") or []), "started_at": run.get("started_at", ""),
            "modules": [_module_verdict(m) for m in run.get("modules") or []],
        })
    return {"probe": item.probe.id, "fingerprint": item.fingerprint,
            "signed_off": {"by": signed_off_by, "at": item.signed_off_at, "reason": item.sign_off_reason},
            "variants": rows}


def _variant_meta(v: Variant) -> dict:
    return {"kind": v.kind, "expected": v.expected, "step": v.step, "after": list(v.after),
            "description": v.description}


def _index_entry(item: ReleaseProbe, signed_off_by: str) -> dict:
    p = item.probe
    return {
        "id": p.id, "title": p.title, "primary_dimension": p.primary_dimension,
        "primary_dimension_name": DIMENSIONS[p.primary_dimension], "secondary_dimensions": list(p.secondary_dimensions),
        "granularity": p.granularity, "steps": len(p.steps), "language": p.language, "difficulty": p.difficulty,
        "domain": p.domain, "paired_with": p.paired_with, "intent": p.intent, "layout": p.pipeline.layout,
        "fingerprint": item.fingerprint, "signed_off_by": signed_off_by, "signed_off_at": item.signed_off_at,
        "variants": sorted(v.name for v in item.variants),
        "case": f"cases/{p.id}", "evaluator": f"evaluator/{p.id}",
        "spec": f"docs/{p.id}/{SPEC_NAME}" if p.spec_file else None, "from_checkout": bool(p.checkout_root),
        "validation": f"{VALIDATION_DIR}/{p.id}.json",
    }


def probe_files(items: Sequence[ReleaseProbe], rename: Callable[[str], str]) -> dict[str, bytes | Path]:
    """Every file of ``probes/`` (release-relative path -> bytes to write, or the source file to copy), for
    the probes ``items``; ``rename`` gives the name written for an annotator (pseudonyms).

    Raises:
        ReleaseError: a probe id repeats, a symlink is found, two probes of different NITR checkouts have
            different shared run-time files, or a probe's files are missing.
    """
    out: dict[str, bytes | Path] = {}
    index = []
    ids = [i.probe.id for i in items]
    if len(set(ids)) != len(ids):
        raise ReleaseError(f"probe ids repeat in the release: {', '.join(sorted({i for i in ids if ids.count(i) > 1}))}")

    def add(prefix: str, root: Path, skip_top: set[str] = frozenset()) -> None:
        if not root.exists():
            raise ReleaseError(f"{root}: missing (the probe's files were moved or deleted; import it again)")
        for rel, path in _files(root):
            if rel in skip_top:
                continue
            name = f"{prefix}/{rel}" if rel else prefix
            if name in out and (not isinstance(out[name], Path) or out[name].read_bytes() != path.read_bytes()):
                raise ReleaseError(f"{PROBES_DIR}/{name}: two released probes come from NITR checkouts whose shared "
                                   "files differ; release them separately")
            out[name] = path

    for item in sorted(items, key=lambda i: i.probe.id):
        p = item.probe
        case = Path(p.case_dir)
        spec = Path(p.spec_file) if p.spec_file else None
        in_case = spec is not None and spec.resolve().parent == case.resolve()
        add(f"cases/{p.id}", case, {SPEC_NAME} if in_case else set())
        add(f"evaluator/{p.id}", Path(p.evaluator_dir))
        if spec is not None:
            add(f"docs/{p.id}/{SPEC_NAME}", spec)
        for v in item.variants:
            base = f"variants/{p.id}/{v.name}"
            out[f"{base}/variant.json"] = _json_bytes(_variant_meta(v))
            if v.patch is not None:
                add(f"{base}/patch.diff", Path(v.patch))
            if v.tree is not None:
                add(f"{base}/tree", Path(v.tree))
        if p.checkout_root:
            for relative in (*CHECKOUT_FINGERPRINTED, DESIGN_MATRIX, *CHECKOUT_TERMS):
                if (Path(p.checkout_root) / relative).exists():
                    add(relative, Path(p.checkout_root) / relative)
        by = rename(item.signed_off_by)
        out[f"{VALIDATION_DIR}/{p.id}.json"] = _json_bytes(validation_matrix(item, by))
        index.append(_index_entry(item, by))
    out["probes.jsonl"] = b"".join(
        (json.dumps(e, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8") for e in index)
    return {f"{PROBES_DIR}/{k}": v for k, v in sorted(out.items())}


def probes_summary(items: Sequence[ReleaseProbe], excluded: Sequence[tuple[str, str]]) -> dict:
    """The manifest's ``probes`` field: how many probes, their ids, the index file and the exclusions by reason."""
    reasons: dict[str, int] = {}
    for _, why in excluded:
        reasons[str(why)] = reasons.get(str(why), 0) + 1
    return {"n_probes": len(items), "ids": sorted(i.probe.id for i in items), "index": PROBES_INDEX,
            "excluded": dict(sorted(reasons.items()))}


def check_probes(root: Path, summary: object) -> list[str]:
    """What :func:`benchwright.exports.verify_release` finds wrong with a release's probes (checksums are checked
    with every other file): the manifest's ``probes`` field, the index (one valid object per probe, sorted, the
    ids the manifest names), each probe's case, evaluator and validation matrix present and readable."""
    if not isinstance(summary, dict):
        return ["manifest.json: 'probes' is not an object"]
    problems: list[str] = []
    index_path = root / PROBES_INDEX
    if not index_path.is_file():
        return [f"{PROBES_INDEX} is missing"]
    entries = []
    for n, line in enumerate(index_path.read_bytes().splitlines(), start=1):
        try:
            entry = json.loads(line)
        except ValueError as e:
            problems.append(f"{PROBES_INDEX}, line {n}: not valid JSON ({e})")
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            problems.append(f"{PROBES_INDEX}, line {n}: not an object with an 'id'")
            continue
        entries.append((n, entry))
    ids = [e["id"] for _, e in entries]
    if ids != sorted(set(ids)):
        problems.append(f"{PROBES_INDEX}: probe ids are not sorted and unique")
    if summary.get("ids") != ids:
        problems.append(f"{PROBES_INDEX}: probes {ids}, the manifest says {summary.get('ids')}")
    if summary.get("n_probes") != len(ids):
        problems.append(f"{PROBES_INDEX}: {len(ids)} probes, the manifest says {summary.get('n_probes')}")
    for n, entry in entries:
        pid = entry["id"]
        for folder in (f"cases/{pid}", f"evaluator/{pid}"):
            if not (root / PROBES_DIR / folder).is_dir():
                problems.append(f"{PROBES_DIR}/{folder}: missing ({PROBES_INDEX}, line {n})")
        if not (root / PROBES_DIR / "evaluator" / pid / "pipeline.json").is_file():
            problems.append(f"{PROBES_DIR}/evaluator/{pid}/pipeline.json: missing")
        matrix = root / PROBES_DIR / VALIDATION_DIR / f"{pid}.json"
        try:
            data = json.loads(matrix.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            problems.append(f"{PROBES_DIR}/{VALIDATION_DIR}/{pid}.json: cannot be read ({e})")
            continue
        if not isinstance(data, dict) or data.get("fingerprint") != entry.get("fingerprint"):
            problems.append(f"{PROBES_DIR}/{VALIDATION_DIR}/{pid}.json: its fingerprint differs from {PROBES_INDEX}")
    return problems


def card_lines(summary: dict | None, index: Sequence[dict]) -> list[str]:
    """The dataset card's "Probes" section: the released probes (id, dimension, granularity, language, variants)
    and the probes left out by reason."""
    out = ["## Probes", ""]
    if not summary:
        return [*out, "This release holds no probes."]
    n = summary["n_probes"]
    out += [f"{n} signed-off NITR probe{'' if n == 1 else 's'} in NITR's layout under `probes/` (`cases/<id>/`, "
            "`evaluator/<id>/`, `docs/<id>/SPEC.md`, `variants/<id>/`), each with its validation matrix in "
            "`probes/validation/<id>.json` and listed in `probes/probes.jsonl` with its fingerprint. "
            "`benchwright probes import DIR/probes` reads them as a NITR checkout (its `third_party/` is not "
            "included); `load_dataset(\"json\", data_files=\"probes/probes.jsonl\")` loads the list.", "",
            "| probe | dimension | granularity | language | variants |", "|---|---|---|---|---:|"]
    for e in index:
        cells = [e.get("id"), f"{e.get('primary_dimension')} {e.get('primary_dimension_name')}", e.get("granularity"),
                 e.get("language") or "(none)", len(e.get("variants") or [])]
        out.append("| " + " | ".join(" ".join(str(c).split()).replace("|", "\\|") for c in cells) + " |")
    if any(e.get("from_checkout") for e in index):
        out += ["", "Probes taken from a NITR checkout keep that checkout's license, released beside them "
                "(`probes/LICENSE`, with `probes/CITATION.cff` when it has one); the license above covers the rest."]
    excluded = summary.get("excluded") or {}
    if excluded:
        out += ["", f"{sum(excluded.values())} probes of the project were not released:", "",
                "| reason | probes |", "|---|---:|"]
        out += [f"| {reason} | {n} |" for reason, n in sorted(excluded.items(), key=lambda kv: (-kv[1], kv[0]))]
    return out


def read_index(root: Path) -> list[dict]:
    """The entries of a release's ``probes/probes.jsonl`` (``[]`` when it has none)."""
    path = Path(root) / PROBES_INDEX
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def probes_changelog(previous: Sequence[dict] | None, index: Sequence[dict]) -> str:
    """The changelog's "Probes" section: probes added, removed, and changed (another fingerprint: a file of its
    case, evaluator, spec or variants differs, or it was signed off again on other files) against ``previous``
    (the previous release's index entries; None for a first release)."""
    new = {e["id"]: e for e in index}
    out = ["", "## Probes", ""]
    if previous is None:
        return "\n".join([*out, f"First release: {len(new)} probe{'' if len(new) == 1 else 's'}.", ""])
    old = {e["id"]: e for e in previous}
    added, removed = sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())
    changed = sorted(i for i in new.keys() & old.keys() if new[i].get("fingerprint") != old[i].get("fingerprint"))
    out += ["| | probes |", "|---|---:|", f"| previous release | {len(old)} |", f"| this release | {len(new)} |",
            f"| added | {len(added)} |", f"| removed | {len(removed)} |", f"| changed | {len(changed)} |", ""]
    for title, ids in (("Added", added), ("Removed", removed), ("Changed", changed)):
        if ids:
            out += [f"### {title} probes ({len(ids)})", "", *[f"- `{i}`" for i in ids], ""]
    if not (added or removed or changed):
        out += ["No probe changed.", ""]
    return "\n".join(out)
