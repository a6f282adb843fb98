"""The dataset card (README.md) of a release: Hugging Face YAML front matter, then statistics computed from
the rows and the release's agreement figures, exclusions and provenance.

Everything here is a pure function of the rows, the spec and the manifest fields: no clock, no machine
details, stable order (counts descending, then by name), so the same release gives the same bytes.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import yaml

from benchwright.core.checklist import ItemKind
from benchwright.core.vocabulary import DIFFICULTY_FILTERS, ITEM_FILTERS, UNASSIGNED_SPLIT

from .figures import PlannedFigure, axis_title, bin_names, planned_figures
from .probes import card_lines as probe_card_lines
from .rows import ReleaseRow, ReleaseSpec, extra_field_counts, rows_to_table

NONE_LABEL = "(none)"

_SIZE_CATEGORIES = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"),
)


def size_category(n: int) -> str:
    """The Hugging Face ``size_categories`` value for ``n`` rows (``n<1K``, ``1K<n<10K``, ...)."""
    for bound, label in _SIZE_CATEGORIES:
        if n < bound:
            return label
    return "n>1T" if n >= 10**12 else "1B<n<10B"


HUB_LICENSES = frozenset((
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m", "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd", "bsd-2-clause", "bsd-3-clause",
    "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
    "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0",
    "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0",
    "etalab-2.0", "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1",
    "lgpl-3.0", "isc", "lppl-1.3c", "ms-pl", "mpl-2.0", "odc-by", "odbl", "openrail++", "osl-3.0", "postgresql",
    "ofl-1.1", "ncsa", "unlicense", "zlib", "pddl", "lgpl-lr", "unknown", "other",
))
"""License ids the Hub knows (https://hf.co/docs/hub/repositories-licenses); any other ``--license`` is written as
``license: other`` with ``license_name`` (the Hub's convention for a custom license)."""


def _license_fields(license: str) -> dict:
    """``{"license": id}`` for a Hub license id (compared lower-case), else ``{"license": "other",
    "license_name": slug}`` (lower-case, runs of other characters as ``-``)."""
    lowered = license.strip().lower()
    if lowered in HUB_LICENSES:
        return {"license": lowered}
    slug = "-".join("".join(c if c.isalnum() or c == "." else " " for c in lowered).split()) or "custom"
    return {"license": "other", "license_name": slug}


def front_matter(n_rows: int, spec: ReleaseSpec, splits: Sequence[str] | None = None) -> dict:
    """The card's YAML metadata in the Hugging Face dataset-card conventions (the keys of hub-docs' datasetcard.md
    that ``datasets`` and the Hub read: ``configs``/``data_files`` for the loader, ``license`` (``other`` plus
    ``license_name`` for a license the Hub does not list, :data:`HUB_LICENSES`), ``task_categories``,
    ``size_categories``, ``pretty_name``, ``tags``). Every row is in the one ``test`` split of data/test.parquet
    (a pair's own ``split`` is a column) unless ``splits`` (the manifest's, of a release written per split) are
    given: then one ``data_files`` entry per split, ``data/<split>.parquet``, in that order. (Probes get no config of their own: the Hub reads every config of a folder
    with one builder, and ``probes/probes.jsonl`` is no Parquet file.)"""
    return {
        "pretty_name": spec.pretty_name or spec.name,
        **_license_fields(spec.license),
        "language": ["en"],
        "task_categories": ["question-answering"],
        "tags": list(spec.tags),
        "size_categories": [size_category(n_rows)],
        "configs": [{
            "config_name": "default",
            "data_files": [{"split": s, "path": f"data/{s}.parquet"} for s in splits or ("test",)],
        }],
    }


#: Markdown punctuation a card escapes with a backslash in data text (CommonMark §2.4 backslash escapes; the Hub
#: renders GFM tables, HTML, math ``$...$`` and remote images, so each of these could change what a reader sees).
_MD_PUNCT = frozenset("\\`*_[]!$|#~{}")
#: HTML special characters written as entities (CommonMark §6.6 raw HTML is rendered by the Hub).
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def _visible(s: str) -> str:
    """``s`` with control characters (Unicode Cc, e.g. ESC) written as ``\\xNN`` and format characters (Cf, e.g.
    the bidi override U+202E) as ``\\uNNNN``, so they show in the card instead of acting on the reader's terminal
    or reordering the text."""
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if cat == "Cc":
            out.append(f"\\x{ord(ch):02x}")
        elif cat == "Cf":
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out)


def _cell(v: object) -> str:
    """Data text ``v`` as one literal Markdown table cell / inline text: whitespace runs (newlines too) become one
    space, control and format characters visible escapes (:func:`_visible`), Markdown punctuation backslash-escaped
    and ``& < >`` HTML entities, so the Hub shows the text as it is (no links, images, HTML, math or emphasis)."""
    s = NONE_LABEL if v is None or v == "" else str(v)
    s = _visible(" ".join(s.split()))
    out = []
    for i, c in enumerate(s):
        # an underscore inside a word cannot open or close emphasis (CommonMark §6.2), so ``fleiss_kappa`` stays
        intraword = c == "_" and 0 < i < len(s) - 1 and s[i - 1].isalnum() and s[i + 1].isalnum()
        out.append(_HTML_ENTITIES.get(c) or (f"\\{c}" if c in _MD_PUNCT and not intraword else c))
    return "".join(out)


def _code(v: object) -> str:
    """Data text ``v`` for inside a Markdown code span (backslash escapes do not apply there, and HTML, math and
    links are not rendered): one line, control and format characters visible, backticks and pipes removed so the
    span and the table row cannot be closed early."""
    s = NONE_LABEL if v is None or v == "" else str(v)
    return _visible(" ".join(s.split())).replace("`", "").replace("|", "")


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%" if total else "-"


def _count_table(header: str, counts: Counter[str], total: int) -> list[str]:
    lines = [f"| {header} | pairs | share |", "|---|---:|---:|"]
    for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {_cell(key)} | {n} | {_pct(n, total)} |")
    return lines


def _fmt(v: object) -> str:
    if isinstance(v, bool) or v is None:
        return "n/a" if v is None else str(v).lower()
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, list | tuple):
        return ", ".join(_fmt(x) for x in v)
    return _cell(v)


def _flatten(d: dict, prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for k in sorted(d, key=str):
        v = d[k]
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out += _flatten(v, name + " / ")
        else:
            out.append((name, v))
    return out


def agreement_lines(agreement: dict) -> list[str]:
    """The agreement figures as a Markdown table.

    ``{"decision": {"fleiss_kappa": 0.7, "n": 40}, ...}`` (every value a dict of plain figures) becomes a
    table with one row per measure and one column per figure; any other shape is flattened to
    ``measure / figure | value`` rows.
    """
    if not agreement:
        return ["No agreement figures were recorded for this release."]
    if all(isinstance(v, dict) and v and not any(isinstance(x, dict) for x in v.values()) for v in agreement.values()):
        cols = sorted({str(k) for v in agreement.values() for k in v})
        lines = ["| measure | " + " | ".join(_cell(c) for c in cols) + " |", "|---|" + "---:|" * len(cols)]
        for name in sorted(agreement, key=str):
            figures = {str(k): x for k, x in agreement[name].items()}
            lines.append(f"| {_cell(name)} | " + " | ".join(_fmt(figures.get(c)) if c in figures else "" for c in cols) + " |")
        return lines
    lines = ["| measure | value |", "|---|---:|"]
    lines += [f"| {_cell(k)} | {_fmt(v)} |" for k, v in _flatten(agreement)]
    return lines


@dataclass
class ReleaseStats:
    """Counts a dataset card shows, computed from the release table by :func:`release_stats`."""

    n: int
    repositories: Counter[tuple[str, str, str]]
    by: dict[str, Counter[str]]
    annotators: int
    adjudicated: int
    knowledge_per_checklist: Counter[int]
    weights: Counter[int]
    splits: Counter[tuple[int, ...]]
    binary_items: int
    multi_tier_items: int
    extra_fields: dict[str, int] = field(default_factory=dict)


def _value_counts(values: pa.Array | pa.ChunkedArray) -> list[tuple[object, int]]:
    """``(value, count)`` of each distinct value of ``values`` (nulls included), counted by Arrow."""
    counts = pc.value_counts(values)
    return list(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True))


def _group_counts(columns: dict) -> list[tuple[tuple, int]]:
    """``(values, count)`` of each distinct combination of the values of ``columns`` (name -> array of one
    length; nulls a value of their own), counted by Arrow."""
    grouped = pa.table(columns).group_by(list(columns)).aggregate([([], "count_all")])
    keys = [grouped.column(k).to_pylist() for k in columns]
    return list(zip(zip(*keys, strict=True), grouped.column("count_all").to_pylist(), strict=True))


def _counts_of(pairs) -> Counter[str]:
    out: Counter[str] = Counter()
    for v, c in pairs:
        out[NONE_LABEL if v is None or v == "" else str(v)] += c
    return out


def _column_counts(column: pa.ChunkedArray) -> Counter[str]:
    """:func:`_counts` of a column's values, counted by Arrow."""
    return _counts_of(_value_counts(column))


def release_stats(table: pa.Table) -> ReleaseStats:
    """Statistics of a release table (:data:`benchwright.exports.release.PARQUET_SCHEMA`), computed with
    Arrow and numpy rather than row by row."""
    n = table.num_rows
    repo = table.column("repository").combine_chunks()
    repositories: Counter[tuple[str, str, str]] = Counter()
    for (name, commit, label), c in _group_counts({f: pc.struct_field(repo, f) for f in ("name", "commit", "version_label")}):
        repositories[(name, commit or "", label or "")] += c
    by = {name: _column_counts(table.column(name)) for name in ("language", "category", "theme", "qa_type")}
    if pc.any(pc.not_equal(table.column("qa_subtype"), "")).as_py():  # some subtype neither null nor empty
        by["qa_subtype"] = _counts_of(
            (f"{t or NONE_LABEL} / {s or NONE_LABEL}", c)
            for (t, s), c in _group_counts({k: table.column(k) for k in ("qa_type", "qa_subtype")}))
    annotators = len(pc.unique(pc.list_flatten(table.column("annotators"))))
    adjudicated = pc.sum(table.column("adjudicated")).as_py() or 0

    checklist = table.column("checklist").combine_chunks()
    items = pc.list_flatten(checklist)
    row_of_item = pc.list_parent_indices(checklist).to_numpy()
    knowledge = pc.equal(pc.struct_field(items, "kind"), ItemKind.KNOWLEDGE.value).to_numpy(zero_copy_only=False)
    weight = pc.struct_field(items, "weight").to_numpy()
    rubric = pc.struct_field(items, "rubric")
    score = pc.struct_field(pc.list_flatten(rubric), "score").to_numpy()
    item_of_tier = pc.list_parent_indices(rubric).to_numpy()
    # an item's rubric is binary when its scores are exactly {0, weight}
    n_items = len(items)
    tier_weight = weight[item_of_tier]
    is_zero, is_weight = score == 0, score == tier_weight
    other = np.bincount(item_of_tier, weights=~(is_zero | is_weight), minlength=n_items)
    has_zero = np.bincount(item_of_tier, weights=is_zero, minlength=n_items) > 0
    has_weight = np.bincount(item_of_tier, weights=is_weight, minlength=n_items) > 0
    binary = (other == 0) & has_zero & has_weight
    k_rows, k_weights = row_of_item[knowledge], weight[knowledge]
    per_row = np.bincount(k_rows, minlength=n)
    order = np.lexsort((-k_weights, k_rows))  # by row, heaviest first
    sorted_weights = k_weights[order].tolist()
    ends = np.cumsum(per_row).tolist()
    starts = [0, *ends[:-1]][:n]
    splits = Counter(tuple(sorted_weights[a:b]) for a, b in zip(starts, ends, strict=True))
    extra_fields: dict[str, int] = {}
    if "extra" in table.column_names:
        import orjson


        extra = table.column("extra")
        extra_fields = extra_field_counts(orjson.loads(x) for x in extra.filter(pc.not_equal(extra, "{}")).to_pylist())
    return ReleaseStats(
        n=n, repositories=repositories, by=by, annotators=annotators, adjudicated=int(adjudicated),
        knowledge_per_checklist=Counter(per_row.tolist()), weights=Counter(k_weights.tolist()), splits=splits,
        binary_items=int(binary[knowledge].sum()), multi_tier_items=int((~binary[knowledge]).sum()),
        extra_fields=extra_fields,
    )


def checklist_lines(stats: ReleaseStats) -> list[str]:
    """Statistics of the checklists: knowledge items per checklist, knowledge weights, rubric kinds."""
    n = stats.n
    n_items = sum(stats.weights.values())
    lines = ["Knowledge items per checklist (each checklist also has the clarity item, worth 1):", "",
             "| knowledge items | checklists | share |", "|---:|---:|---:|"]
    lines += [f"| {k} | {c} | {_pct(c, n)} |" for k, c in sorted(stats.knowledge_per_checklist.items())]
    mean = f"{n_items / n:.2f}" if n else "-"
    lines += ["", f"{n_items} knowledge items in all, {mean} per checklist.", "",
              "Weights of the knowledge items (they sum to 9 per checklist):", "",
              "| weight | items | share |", "|---:|---:|---:|"]
    lines += [f"| {w} | {c} | {_pct(c, n_items)} |" for w, c in sorted(stats.weights.items())]
    lines += ["", "Most common weight splits:", "", "| weights | checklists | share |", "|---|---:|---:|"]
    lines += [f"| {' + '.join(map(str, p)) or NONE_LABEL} | {c} | {_pct(c, n)} |"
              for p, c in sorted(stats.splits.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]
    lines += ["", f"Rubrics of knowledge items: {stats.binary_items} binary (scores 0 or the weight), "
              f"{stats.multi_tier_items} multi-tier."]
    return lines


FIELDS = (
    ("id", "string", "Stable id of the pair (`qa_` + 16 hex digits of a content hash)."),
    ("question", "string", "The question about the repository."),
    ("reference_answer", "string", "The reviewed reference answer."),
    ("repository", "struct", "`name`, `url`, `commit` and `version_label` of the code base the question is about."),
    ("checklist", "list of struct", "Scoring checklist: items with `kind` (knowledge or clarity), `key_point`, "
     "`weight` and `rubric` (list of `score`, `criterion`)."),
    ("category", "string", "Code-understanding category."),
    ("qa_type", "string", "What, Why, How or Where."),
    ("qa_subtype", "string", "Finer question class, when known."),
    ("cluster_id", "string", "Topic cluster id, when known."),
    ("cluster_name", "string", "Topic cluster name, when known."),
    ("language", "string", "Programming language of the repository."),
    ("theme", "string", "Theme of the repository."),
    ("task_set", "string", "Code-QA-Bench task set: `code-derivable` (the answer is recoverable from the code alone) "
     "or `doc-dependent` (it needs the documentation); release format 4, when some pair has one."),
    ("split", "string", "The pair's split (`train`, `test`, ...), apart from its task set; release format 4."),
    ("source", "struct", "Provenance: `format`, `file` (name only), `line` (or row, per `unit`), `upstream_id`."),
    ("final_decision", "string", "Final review decision (accept)."),
    ("adjudicated", "bool", "True when reviewers disagreed and an adjudicator decided."),
    ("annotators", "list of string", "Reviewers of the pair."),
    ("extra", "object (JSON text in Parquet)", "The imported record's other fields, as imported (names below); "
     "`{}` when none."),
)


def judge_separation_lines(spec: ReleaseSpec, n_pairs: int) -> list[str]:
    """The card's "Checklist generators and judges" section (RepoProbe §5.1.3: the checklist generator is kept
    out of the evaluated models): which models generated the released checklists, and which judges and judge
    models scored the released pairs' answers. Nothing for a release that recorded neither (made before)."""
    if spec.checklist_generators is None and spec.judges is None:
        return []
    out = ["", "## Checklist generators and judges", ""]
    generators = spec.checklist_generators or {}
    generated = sum(generators.values())
    if generators:
        out += ["Checklists generated by a model (the `checklist` step), by model:", "",
                "| model | pairs |", "|---|---:|"]
        out += [f"| {_cell(m)} | {c} |" for m, c in sorted(generators.items(), key=lambda kv: (-kv[1], kv[0]))]
        out += [""]
    out += [f"{n_pairs - generated} of the {n_pairs} released pairs have a checklist a person wrote, edited or "
            "imported." if generated else "No released checklist was generated by a model: people wrote, edited or "
            "imported them.", ""]
    judges = spec.judges or []
    if judges:
        out += ["Judges that scored answers to the released pairs in this project (current scored runs); "
                "`self-judged` counts answers the judge model wrote or whose checklist it generated, judged only "
                "when allowed (`--allow-self-judge`):", "",
                "| judge | model | answers | runs | self-judged |", "|---|---|---:|---:|---:|"]
        out += [f"| {_cell(j.get('judge'))} | {_cell(j.get('model'))} | {j.get('answers', 0)} | {j.get('runs', 0)} "
                f"| {j.get('self_judged', 0)} |" for j in judges]
    else:
        out += ["No answer to the released pairs was judged in this project."]
    return out


def curation_lines(spec: ReleaseSpec) -> list[str]:
    """The card's "Curation" section: RepoProbe Table 2's statistics (``spec.repository_statistics``) and the
    curation funnel (``spec.funnel``, rows of :func:`benchwright.core.funnel.stage_lines`). Nothing for a
    release that recorded neither (made before they existed)."""
    from benchwright.core.funnel import FUNNEL_COLUMNS, Stage, stage_lines

    if spec.funnel is None and spec.repository_statistics is None:
        return []
    out = ["", "## Curation", ""]
    st = spec.repository_statistics
    if st is not None:
        def avg(v: object) -> str:
            return "-" if v is None else f"{v:,.1f}"

        share = st.get("merged_context_share")
        out += ["Statistics as in RepoProbe Table 2 (files and lines of code counted from each pinned checkout: the "
                "text files git tracks, or every text file of a plain folder):", "", "| | |", "|---|---:|",
                f"| repositories | {st.get('repositories')} |", f"| pairs | {st.get('pairs')} |",
                f"| languages | {_cell(', '.join(st.get('languages') or []) or None)} |",
                f"| files per repository (mean) | {avg(st.get('files_per_repository'))} |",
                f"| lines of code per repository (mean) | {avg(st.get('lines_per_repository'))} |",
                f"| pairs with merged external context | {st.get('merged_context')} "
                f"({'-' if share is None else f'{100 * share:.1f}%'}) |"]
        if st.get("not_counted"):
            out += ["", "Not counted (the checkout could not be read when the release was made): "
                    + ", ".join(_cell(n) for n in st["not_counted"]) + "."]
        per = st.get("per_repository") or {}
        if per:
            out += ["", "| repository | pairs | files | lines |", "|---|---:|---:|---:|"]
            out += [f"| {_cell(name)} | {v.get('pairs')} | {_cell(v.get('files'))} | {_cell(v.get('lines'))} |"
                    for name, v in per.items()]
        out += [""]
    if spec.funnel is not None:
        out += ["The curation funnel (RepoProbe §3.2): pairs in, out, dropped by reason, failed and not yet run at "
                "each stage when the release was made; a pair enters a stage when it came out of the last stage "
                "that drops pairs before it.", "",
                "| " + " | ".join(FUNNEL_COLUMNS) + " |", "|---|" + "---:|" * (len(FUNNEL_COLUMNS) - 1)]
        stages = [Stage.from_dict(d) for d in spec.funnel]
        for row in stage_lines(stages):
            label = f"&nbsp;&nbsp;{_cell(row[0].strip())}" if row[0].startswith("  ") else _cell(row[0])
            out.append(f"| {label} | " + " | ".join(row[1:]) + " |")
        if getattr(spec, "include_dropped", False):
            released = next((s.out for s in stages if s.name == "released"), None)
            held = f" (the release holds {st.get('pairs')} pairs; `released` counts {released})" if (
                st is not None and st.get("pairs") is not None and released is not None) else ""
            out += ["", "Made with `--include-dropped`: the release also ships pairs a gating curation step dropped; "
                        f"the funnel counts them where they were dropped, not as released{held}."]
    return out


def figure_lines(figures: Sequence[PlannedFigure], kind: str, axis: str | None = None) -> list[str]:
    """The card's image links (relative, with alt text) to the release's figures of ``kind`` (and ``axis``),
    each after an empty line; nothing when the release has none (the card stays as it was)."""
    out: list[str] = []
    for f in figures:
        if f.kind == kind and f.axis == axis:
            out += ["", f.card_line()]
    return out


_SCORE_KEY = ("model", "condition", "judge", "judge model")


def _score_key_cells(row: dict) -> str:
    return " | ".join(_cell(row.get(k)) for k in ("model", "condition", "judge", "judge_model"))


def scores_lines(spec: ReleaseSpec, figures: Sequence[PlannedFigure] = ()) -> list[str]:
    """The card's "Scores" section (``spec.scores``, :func:`benchwright.core.release_scores.release_scores`): per
    model, condition, judge and judge model the answers, runs and mean score rate (RepoProbe §5.1.3 Overall %),
    the score distribution (answers per score-rate bin), and the mean per stratum (RepoProbe §5.2.2 Table 4), with
    links to the score figures. Nothing without scores (a release made before them, or with no judged answer)."""
    sc = spec.scores
    if not sc or not sc.get("groups"):
        return []
    groups = sc["groups"]
    bins = int(sc.get("bins") or len(groups[0].get("histogram") or []) or 1)
    head = " | ".join(_SCORE_KEY)
    out = ["", "## Scores", "",
           "Scores of the answers to the released pairs judged in this project, as `benchwright report` computes "
           "them: the current judgment of each run with human overrides applied; an answer's score rate is the mean "
           "over its scored runs, a model's the mean over its answers.", "",
           f"| {head} | answers | runs | mean score |", "|---|---|---|---|---:|---:|---:|"]
    out += [f"| {_score_key_cells(g)} | {g.get('answers')} | {g.get('runs')} | {g.get('overall_pct'):.1f}% |"
            for g in groups]
    names = bin_names(bins)
    out += ["", "Score distribution: answers per score-rate bin (a bin holds its lower bound; the last also "
            "100%).", "", f"| {head} | " + " | ".join(names) + " |", "|---|---|---|---|" + "---:|" * bins]
    out += [f"| {_score_key_cells(g)} | " + " | ".join(str(c) for c in g.get("histogram") or []) + " |"
            for g in groups]
    out += figure_lines(figures, "scores")
    from benchwright.core.metrics import AXIS_TITLES

    for entry in sc.get("strata") or []:
        rows, axis = entry.get("rows") or [], str(entry.get("axis"))
        if not rows:
            continue
        title = AXIS_TITLES.get(axis, axis)
        out += ["", f"### Scores by {axis_title(axis)}", "",
                f"| {_cell(title)} | {head} | answers | mean score |", "|---|---|---|---|---|---:|---:|"]
        out += [f"| {_cell(r.get('stratum'))} | {_score_key_cells(r)} | {r.get('answers')} | "
                f"{r.get('overall_pct'):.1f}% |" for r in rows]
        out += figure_lines(figures, "strata", axis)
    return out


def selection_lines(spec: ReleaseSpec) -> list[str]:
    """The card's ``### Selection`` paragraph of a release restricted to a selection (``releases create
    --selection``): its name, version, sampling parameters and how many of its pairs were released. Empty
    without a selection (the card stays as it was)."""
    sel = spec.selection
    if sel is None:
        return []
    lo_hi = sel.get("per_cluster") or ["?", "?"]
    total = "" if sel.get("total") is None else f", total {sel.get('total')}"
    out = ["", "### Selection", "",
           f"Released from the selection `{_code(sel.get('name'))}` version {sel.get('version')}, a balanced sample "
           f"over clusters and QA types (SWE-QA-Pro §2.4; {lo_hi[0]} to {lo_hi[1]} pairs per cluster, balance "
           f"`{_code(sel.get('balance'))}`{total}, seed {sel.get('seed')}): {sel.get('size')} pairs drawn, "
           f"{sel.get('released')} released. The exclusions above count its pairs only; the project's pairs outside "
           "it are not part of this release."]
    if sel.get("shortfalls"):
        out += ["", "Where the sample fell short of its rule when it was drawn:", ""]
        out += [f"- {_cell(line)}" for line in sel["shortfalls"]]
    return out


def _ordered_counts(counts: dict, order: Sequence[str]) -> list[str]:
    """``| name | count |`` rows in the vocabulary's ``order`` (other names after, sorted): a manifest read back
    has its keys sorted, so the order must not come from the dict."""
    names = [k for k in order if k in counts] + sorted(k for k in counts if k not in order)
    return [f"| {_cell(k)} | {counts[k]} |" for k in names]


def difficulty_lines(spec: ReleaseSpec) -> list[str]:
    """The card's ``### Difficulty`` paragraph: the released pairs by their latest difficulty calibration (SWE-QA-Pro
    §2.3) and by their item-statistics flags across a model panel (``spec.difficulty``). Empty when the project
    had neither run (the card stays as it was)."""
    d = spec.difficulty
    if not d:
        return []
    out = ["", "### Difficulty", ""]
    cal = d.get("calibration")
    if cal:
        models = ", ".join(_cell(m) for m in cal.get("models") or [])
        out += [f"Difficulty calibration (SWE-QA-Pro §2.3) from direct answers of {models or 'no model'} judged by "
                f"{_cell(cal.get('judge'))} / {_cell(cal.get('judge_model'))}, latest run rule "
                f"`{_code(cal.get('rule'))}` at threshold {_fmt(cal.get('threshold'))}: the released pairs by "
                "their latest decision (`too-easy`: answered well without the repository).", "",
                "| decision | pairs |", "|---|---:|"]
        out += _ordered_counts(cal.get("counts") or {}, DIFFICULTY_FILTERS)
        out += [""]
    items = d.get("items")
    if items:
        models = ", ".join(_cell(m) for m in items.get("models") or [])
        bars = items.get("thresholds") or {}
        out += [f"Item statistics across the models {models or '-'} ({_cell(items.get('condition'))} answers judged "
                f"by {_cell(items.get('judge'))} / {_cell(items.get('judge_model'))}; bars: high "
                f"{_fmt(bars.get('high'))}, low {_fmt(bars.get('low'))}, discrimination "
                f"{_fmt(bars.get('min_discrimination'))}): the released pairs per flag (a pair may have several; "
                "`unrated`: in no run).", "", "| flag | pairs |", "|---|---:|"]
        out += _ordered_counts(items.get("counts") or {}, ITEM_FILTERS)
    while out and out[-1] == "":
        out.pop()
    return out


def shipped_text_lines(table: pa.Table) -> list[str]:
    """The card's ``### Shipped text`` section: how many pairs ship a text version other than the imported one,
    by origin (RepoProbe §3.2: the refined text is the item), and where the original is. Empty when none does
    (a release format 2 card stays as it was)."""
    source = table.column("source").combine_chunks() if table.num_rows else None
    if source is None or source.type.get_field_index("text") < 0:
        return []
    origins = [t["origin"] for t in source.field("text").to_pylist() if t is not None]
    if not origins:
        return []
    by = ", ".join(f"{o} {c}" for o, c in sorted(Counter(origins).items()))
    return ["", "### Shipped text", "",
            f"{len(origins)} of {table.num_rows} pairs ship a text other than the one imported ({by}): the "
            "question and reference answer are the current text version; `source.text` gives its version, origin "
            "and model, and the original question and reference answer."]


def _loading_lines(splits: Sequence[str], tail: str) -> list[str]:
    """The card's loading snippet and the sentence on the JSONL files (``tail`` appended to it): one ``test``
    split, or (a release written per split) a ``DatasetDict`` of ``splits``."""
    if not splits:
        return ["```python", "from datasets import load_dataset", "",
                'ds = load_dataset("parquet", data_files={"test": "data/test.parquet"}, split="test")  # this folder',
                '# ds = load_dataset("OWNER/NAME", split="test")  # once published on the Hugging Face Hub',
                "```", "",
                "The same rows are in `data/test.jsonl` (one JSON object per line, sorted by `id`). " + tail]
    files = ", ".join(f'"{s}": "data/{s}.parquet"' for s in splits)
    return ["```python", "from datasets import load_dataset", "",
            f"ds = load_dataset(\"parquet\", data_files={{{files}}})  # this folder: one split per pair's split",
            '# ds = load_dataset("OWNER/NAME")  # once published on the Hugging Face Hub',
            f'{splits[0]} = ds["{splits[0]}"]', "```", "",
            f"Each split has its own files, `data/<split>.parquet` and `data/<split>.jsonl` "
            f"({', '.join(f'`{s}`' for s in splits)}; pairs without a split are in `{UNASSIGNED_SPLIT}`); the JSONL "
            "files hold the same rows (one JSON object per line, sorted by `id`). " + tail]


def dataset_card(rows: Sequence[ReleaseRow] | pa.Table, spec: ReleaseSpec, manifest: dict,
                 probes_index: Sequence[dict] = ()) -> str:
    """README.md of a release: YAML front matter and Markdown statistics.

    ``rows`` are the release's rows or their Arrow table (:func:`benchwright.exports.rows_to_table`).
    ``manifest`` holds the release's manifest fields written so far (``annotators``, ``excluded``,
    ``previous_release``, ``created_by``, ``release_format``, ``probes`` when the release holds probes);
    checksums are in manifest.json, not here. ``probes_index`` are the entries of ``probes/probes.jsonl``.
    """
    if not isinstance(rows, pa.Table):

        rows = rows_to_table(list(rows))
    stats = release_stats(rows)
    n = stats.n
    probes = manifest.get("probes")
    splits = list(manifest.get("splits") or ())
    meta = yaml.safe_dump(front_matter(n, spec, splits), sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    title = spec.pretty_name or spec.name
    repos = sorted(stats.repositories)
    adjudicated = stats.adjudicated
    out = ["---", meta.rstrip("\n"), "---", "", f"# {title}", ""]
    if spec.description:
        out += [spec.description.strip(), ""]
    n_probes = probes["n_probes"] if probes else 0
    probe_text = f"{n_probes} signed-off NITR probe{'' if n_probes == 1 else 's'} (see Probes)"
    if probes and not n:
        what = f"{probe_text}, and no question-answer pairs"
    else:
        what = (f"{n} question-answer pairs about {len(repos)} pinned repositor{'y' if len(repos) == 1 else 'ies'}, "
                "each with a reference answer and a weighted scoring checklist, reviewed and accepted by annotators"
                + (f", and {probe_text}" if probes else ""))
    out += [
        f"Release **{spec.version}** of `{spec.name}`, created {spec.created_at}: {what}. Built with benchwright "
        f"{spec.benchwright_version}.",
        "",
        "## Loading",
        "",
        *_loading_lines(splits, "`manifest.json` lists the sha256 and size of every file; "
                                "`benchwright release verify DIR` checks them."),
        "",
        "## Fields",
        "",
        "| field | type | meaning |",
        "|---|---|---|",
    ]
    out += [f"| `{name}` | {typ} | {text} |" for name, typ, text in FIELDS
            if name not in ("task_set", "split") or name in rows.column_names]
    out += ["", "### Extra fields", ""]
    if stats.extra_fields:
        out += ["Fields of the imported records that have no column of their own, kept in `extra` (an object in "
                "`data/test.jsonl`; JSON text in `data/test.parquet`, e.g. `json.loads(row[\"extra\"])`):", "",
                "| extra field | pairs |", "|---|---:|"]
        out += [f"| `{_code(name)}` | {c} |" for name, c in stats.extra_fields.items()]
    else:
        out += ["No pair carries extra fields (`extra` is `{}` in every row)."]
    out += shipped_text_lines(rows)
    out += ["", "## Statistics", "", "| | |", "|---|---:|", f"| pairs | {n} |", f"| repositories | {len(repos)} |",
            f"| annotators | {stats.annotators} |", f"| adjudicated pairs | {adjudicated} ({_pct(adjudicated, n)}) |", ""]
    out += ["### Repositories", "", "| repository | commit | version | pairs |", "|---|---|---|---:|"]
    out += [f"| {_cell(name)} | {_cell(commit[:12] or None)} | {_cell(label or None)} | {stats.repositories[(name, commit, label)]} |"
            for name, commit, label in repos]
    for heading, header, key in (
        ("By language", "language", "language"), ("By category", "category", "category"),
        ("By theme", "theme", "theme"), ("By QA type", "QA type", "qa_type"),
    ):
        out += ["", f"### {heading}", "", *_count_table(header, stats.by[key], n)]
    if "qa_subtype" in stats.by:
        out += ["", "### By QA type and subtype", "", *_count_table("QA type / subtype", stats.by["qa_subtype"], n)]
    for name, heading in (("task_set", "task set"), ("split", "split")):
        if name in rows.column_names:  # release format 4 (Code-QA-Bench's dual task set)
            out += ["", f"### By {heading}", "", *_count_table(heading, _column_counts(rows.column(name)), n)]
    out += ["", "### Checklists", "", *checklist_lines(stats)]
    figures = planned_figures(spec)
    out += curation_lines(spec)
    out += figure_lines(figures, "funnel")
    if probes:
        out += ["", *probe_card_lines(probes, probes_index)]
    out += ["", "## Review agreement", ""]
    if spec.agreement_scope and spec.agreement:
        out += [spec.agreement_scope.strip(), ""]
    out += agreement_lines(spec.agreement)
    out += figure_lines(figures, "agreement")
    excluded = manifest.get("excluded") or {}
    out += ["", "## Exclusions", ""]
    if excluded:
        total = sum(excluded.values())
        out += [f"{total} pairs of the project were not released:", "", "| reason | pairs |", "|---|---:|"]
        out += [f"| {_cell(reason)} | {c} |" for reason, c in sorted(excluded.items(), key=lambda kv: (-kv[1], kv[0]))]
    else:
        out += ["No pair of the project was left out."]
    out += selection_lines(spec)
    out += difficulty_lines(spec)
    out += judge_separation_lines(spec, n)
    out += scores_lines(spec, figures)
    out += ["", "## Annotators", ""]
    if manifest.get("annotators") == "named":
        out += ["The `annotators` field holds the annotators' names, published with their consent."]
    else:
        out += ["The `annotators` field holds pseudonymous ids (`annotator-` + 8 hex digits): the same person has "
                "the same id throughout this release."]
    out += ["", "## Provenance", "", "| | |", "|---|---|",
            f"| benchwright | {_cell(spec.benchwright_version)} |",
            f"| project schema version | {spec.schema_version} |",
            f"| release format | {manifest.get('release_format')} |",
            f"| created at | {_cell(spec.created_at)} |",
            f"| created by | {_cell(manifest.get('created_by'))} |"]
    prev = manifest.get("previous_release")
    if prev:
        out.append(f"| previous release | {_cell(prev.get('name'))} {_cell(prev.get('version'))} |")
    for label, hashes in (("prompt template", spec.prompt_hashes), ("judge", spec.judge_hashes)):
        for key in sorted(hashes):
            out.append(f"| {label} `{_code(key)}` | `{_code(hashes[key])}` |")
    out += ["", "Changes against the previous release are in `CHANGELOG.md`.", "", "## License", "",
            f"`{spec.license}`", ""]
    return "\n".join(out)
