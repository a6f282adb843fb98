"""``benchwright releases preflight|create|rebuild|verify|push|import``: frozen, versioned, checksummed releases."""

from __future__ import annotations

from pathlib import Path

import click

from benchwright.core.config import resolve_annotator
from benchwright.core.errors import BenchwrightError

from .common import annotator_option, friendly, open_store, plural


@click.group()
def releases() -> None:
    """Frozen, versioned, checksummed benchmark releases."""


def _preflight_lines(pre, probes=None, split_files: bool = True) -> list[str]:
    lines = [] if pre.selection is None else [
        f"selection {pre.selection.label}: {plural(pre.selection.size, 'pair')}; only they are considered"]
    lines.append(f"included: {plural(len(pre.included), 'pair')}")
    for reason, n in pre.reasons().items():
        lines.append(f"excluded: {plural(n, 'pair')}: {reason}")
    if probes is not None and (probes.included or probes.excluded):
        lines.append(f"included: {plural(len(probes.included), 'probe')} (signed off)")
        lines += [f"  probe {c.probe.id}" for c in probes.included]
        lines += [f"excluded: probe {pid}: {reason}" for pid, reason in probes.excluded]
    from ..services.releases import release_split_plan

    plan, problem = release_split_plan(pre, split_files=split_files)
    if plan:
        lines.append("data files per split: " + ", ".join(f"data/{s}.* ({plural(n, 'pair')})" for s, n in plan.items()))
    if problem:
        lines.append(f"problem: {problem}")
    return lines


INCLUDE_DROPPED_HELP = "Also release pairs a gating curation step (images, classify, verify) dropped."
SELECTION_HELP = ("Release only the pairs of this selection (benchwright sample; its latest version); the "
                  "preflight still applies to them.")


def _selection(store, name):
    """The latest version of the selection ``name`` (None for None); NotFoundError lists the names."""
    return None if name is None else store.selection(name)


@releases.command("preflight")
@click.option("--list", "list_all", is_flag=True, help="List every excluded pair with its reason.")
@click.option("--include-dropped", is_flag=True, help=INCLUDE_DROPPED_HELP)
@click.option("--selection", "selection", metavar="NAME", help=SELECTION_HELP)
@click.pass_context
@friendly
def release_preflight(ctx, list_all, include_dropped, selection) -> None:
    """Show what a release would include and exclude, and why (a pair a gating curation step dropped is
    excluded unless --include-dropped)."""
    with open_store(ctx) as store:
        pre = store.release_preflight(include_dropped=include_dropped, selection=_selection(store, selection))
        for line in _preflight_lines(pre, store.probe_release_preflight()):
            click.echo(line)
        if list_all:
            for pid, reason in pre.excluded:
                click.echo(f"  #{store.ordinal_of(pid)}\t{pid}\t{reason}")


@releases.command("create")
@click.argument("name")
@click.option("--version", "version", required=True, help="Semantic version X.Y.Z.")
@click.option("--out", "out", type=click.Path(file_okay=False), default="releases", show_default=True,
              help="Folder that receives NAME-VERSION/.")
@click.option("--with-annotators", is_flag=True, help="Write annotator names instead of pseudonymous ids.")
@click.option("--license", "license_", default="cc-by-4.0", show_default=True)
@click.option("--previous", "previous", type=click.Path(file_okay=False),
              help="The previous release folder (default: where it was written), for the changelog.")
@click.option("--without-probes", is_flag=True,
              help="Leave the signed-off probes out (by default they go in, under probes/ in NITR's layout).")
@click.option("--include-dropped", is_flag=True, help=INCLUDE_DROPPED_HELP)
@click.option("--selection", "selection", metavar="NAME", help=SELECTION_HELP)
@click.option("--figures", "figures", default="all", show_default=True, metavar="KINDS",
              help="PNG figures under figures/, linked from the card: all, none, or a comma-separated list of "
                   "scores, strata, agreement, funnel (each drawn only where its data is in the release).")
@click.option("--one-data-file", is_flag=True,
              help="Write every row to data/test.* even when the pairs have splits (by default each split gets "
                   "data/<split>.jsonl and data/<split>.parquet and its own split on the Hub).")
@click.option("--as", "annotator", help="Who releases.")
@click.pass_context
@friendly
def release_create(ctx, name, version, out, with_annotators, license_, previous, without_probes, include_dropped,
                   selection, figures, one_data_file, annotator) -> None:
    """Preflight, then write NAME-VERSION (JSONL, Parquet, dataset card with the curation funnel and the scores,
    PNG figures the card links (--figures), manifest, changelog, signed-off probes). A pair a gating curation step dropped is excluded unless --include-dropped
    (recorded in the manifest, so a rebuild does the same). With --selection only that selection's pairs are
    considered (its name and version are recorded in the manifest and named on the dataset card)."""
    from ..services.releases import create_release

    with open_store(ctx) as store:
        pre = store.release_preflight(include_dropped=include_dropped, selection=_selection(store, selection))
        probes = None if without_probes else store.probe_release_preflight()
        for line in _preflight_lines(pre, probes, split_files=not one_data_file):
            click.echo(line)
        notes: list[str] = []
        path = create_release(store, pre, name, version, Path(out), by=resolve_annotator(annotator),
                              with_annotators=with_annotators, license=license_,
                              previous_path=Path(previous) if previous else None, notes=notes,
                              with_probes=not without_probes, probe_preflight=probes, figures=figures,
                              split_files=not one_data_file)
    for note in notes:
        click.echo(note)
    if not notes:  # an adopted folder was written from the state of its own time: its card lists its fields
        click.echo(f"wrote {path}")
        click.echo(_extra_fields_line(pre))


def _extra_fields_line(pre) -> str:
    """Which imported extra fields the release carries in each row's ``extra`` (none are dropped)."""
    from benchwright.core.text import printable
    from benchwright.exports import extra_field_counts

    counts = extra_field_counts(c.pair.extra for c in pre.included)
    if not counts:
        return "extra fields: none (no included pair has fields beyond the release columns)"
    return "extra fields kept in `extra`: " + ", ".join(f"{printable(k)} ({plural(n, 'pair')})" for k, n in counts.items())


@releases.command("rebuild")
@click.argument("name")
@click.option("--version", "version", required=True)
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Folder to write into.")
@click.option("--with-annotators", is_flag=True)
@click.pass_context
@friendly
def release_rebuild(ctx, name, version, out, with_annotators) -> None:
    """Write a recorded release again from the current state with its recorded time (same state, same bytes)."""
    from ..services.releases import rebuild_release

    with open_store(ctx) as store:
        path = rebuild_release(store, name, version, Path(out), by="", with_annotators=with_annotators)
    click.echo(f"wrote {path}")


@releases.command("verify")
@click.argument("folder", type=click.Path(file_okay=False))
@friendly
def release_verify(folder) -> None:
    """Check every checksum and the schema of a release folder."""
    from benchwright.exports import verify_release

    report = verify_release(Path(folder))
    for problem in report.problems:
        click.echo(f"  {problem}")
    if not report.ok:
        raise BenchwrightError(
            f"{folder}: the release differs from its manifest ({plural(len(report.problems), 'problem')})")
    click.echo(f"{folder}: every checksum and the schema match")


@releases.command("push")
@click.argument("folder", metavar="RELEASE", type=click.Path(file_okay=False))
@click.option("--repo-id", "repo_id", required=True, metavar="ORG/NAME", help="The Hub dataset repository.")
@click.option("--private", is_flag=True, help="Create the repository private (an existing repository keeps its "
              "visibility: a warning says so, and the visibility the Hub reports is recorded).")
@click.option("--revision", "revision", metavar="BRANCH", help="Commit to this branch (created from main when "
              "missing; default main).")
@click.option("--endpoint", "endpoint", metavar="URL", help="The Hub's address (default: HF_ENDPOINT, else "
              "https://huggingface.co).")
@annotator_option("Who pushes (recorded; default: configuration, then the OS user).")
@click.pass_context
@friendly
def releases_push(ctx, folder, repo_id, private, revision, endpoint, annotator) -> None:
    """Upload a verified release folder to a Hugging Face Hub dataset repository in one commit and record the push.
    The folder is verified first (as releases verify does) and refused when it differs from its manifest. The token
    comes from HF_TOKEN or the Hub's own login (hf auth login); it is never stored or printed. A commit that fails
    on the way (HTTP 5xx, a dropped connection) is sent again, up to 4 times."""
    from huggingface_hub import constants

    from benchwright.core.text import printable

    from ..services.hub import (
        check_endpoint,
        check_repo_id,
        check_revision,
        hub_token,
        push_release,
        verified_release,
    )

    check_repo_id(repo_id)
    check_revision(revision or "main")
    check_endpoint(endpoint or constants.ENDPOINT)
    verified_release(Path(folder))  # before the project is opened: a bad folder or id costs nothing
    token = hub_token()
    with open_store(ctx) as store:
        result = push_release(store, folder, repo_id, by=resolve_annotator(annotator), private=private,
                              revision=revision, endpoint=endpoint, token=token,
                              progress=lambda line: click.echo(printable(line), err=True))
    for warning in result.warnings:
        click.echo(f"warning: {printable(warning)}", err=True)
    click.echo(printable(f"pushed {result.name} {result.version} ({plural(len(result.files), 'file')}) to "
                         f"{result.repo_id} (revision {result.revision}"
                         + (f", {plural(result.attempts, 'attempt')}" if result.attempts > 1 else "") + ")"))
    click.echo(printable(f"commit {result.commit_oid}: {result.commit_url}"))


@releases.command("pushes")
@click.argument("name", required=False)
@click.option("--version", "version", help="Only this version of NAME.")
@click.pass_context
@friendly
def releases_pushes(ctx, name, version) -> None:
    """List the recorded pushes to a Hugging Face Hub. Of release NAME (and --version) when given, oldest first:
    when, who, the release, the repository and branch, and the Hub's commit."""
    from benchwright.core.text import printable

    with open_store(ctx) as store:
        rows = store.release_pushes(name, version)
    if not rows:
        click.echo("no push recorded" + (f" for {printable(name)}" if name else ""))
    for p in rows:
        click.echo(printable(f"{p['pushed_at']}\t{p['pushed_by']}\t{p['release_name']} {p['release_version']}\t"
                             f"{p['repo_id']}@{p['revision']}{' (private)' if p['private'] else ''}\t"
                             f"{p['commit_url']}"))



@releases.command("import")
@click.argument("folder", type=click.Path())
@annotator_option("Who imports (default: configuration, then the OS user).")
@click.pass_context
@friendly
def releases_import(ctx, folder, annotator) -> None:
    """Import the pairs and checklists of a release FOLDER made by benchwright (into an empty or another project)."""
    from ..services.releases import import_release

    probes: list = []
    with open_store(ctx) as store:
        pairs, checklists = import_release(store, Path(folder), by=resolve_annotator(annotator), probes=probes)
    click.echo(f"{folder}: added {plural(pairs, 'Q&A pair')} and {plural(checklists, 'checklist')}")
    if probes:
        click.echo(f"imported {plural(len(probes), 'probe')} (run and sign them off here: their validation "
                   f"matrices are in {Path(folder) / 'probes' / 'validation'}): {', '.join(p.id for p in probes)}")
