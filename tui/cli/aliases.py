"""The spellings the command line had before its commands were named noun-then-verb (issue 13), kept as hidden
aliases for one release: each runs the new command after a one-line note on stderr naming the new spelling.

========================  =====================================================
old spelling              new spelling
========================  =====================================================
``import FORMAT FILE``    ``pairs import FORMAT FILE``
``import answers FILE``   ``answers import FILE``
``import release DIR``    ``releases import DIR``
``import issues FILE``    ``issues import FILE`` (the issue 17 spelling: no note)
``history PAIR``          ``pairs history PAIR``
``repo add|list``         ``repos add|list``
``checklist ...``         ``checklists ...``
``answer``                ``answers generate``
``judge JUDGE``           ``judgments run JUDGE``
``override ...``          ``judgments override ...``
``generate STEP``         ``curation run STEP`` (STEP a curation step's name; see the end of this module)
``failure-modes [OPTS]``  ``failure-modes classify [OPTS]`` (in ``failure_modes.py``)
``failure-mode set|show`` ``failure-modes set|show``
``adjudicate PAIR``       ``adjudication decide PAIR``
``release ...``           ``releases ...``
``probe ...``             ``probes ...``
========================  =====================================================
"""

from __future__ import annotations

import copy

import click

from benchwright.core.importers import FORMATS
from benchwright.core.steps import STEPS

from . import (
    adjudication,
    answers,
    checklists,
    curation,
    failure_modes,
    generate,
    issues,
    judgments,
    pairs,
    probes,
    releases,
    repos,
)
from .common import friendly, note_deprecated


def _alias(command: click.Command, old: str, new: str) -> click.Command:
    """A hidden copy of ``command`` named ``old`` that notes the new spelling ``new`` before it parses its
    arguments (a group's note names the subcommand too: ``repo add`` -> ``repos add``)."""
    alias = copy.copy(command)
    alias.name, alias.hidden = old, True
    parse = command.parse_args

    def parse_args(ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            sub = next((a for a in args if not a.startswith("-")), None) if isinstance(command, click.Group) else None
            note_deprecated(f"{old} {sub}" if sub else old, f"{new} {sub}" if sub else new)
        return parse(ctx, args)

    alias.parse_args = parse_args
    return alias


_failure_mode = click.Group(
    "failure-mode", commands={"set": failure_modes.failure_modes_set, "show": failure_modes.failure_modes_show},
    help="Old spelling of: benchwright failure-modes set|show.",
)


def _import_params() -> list[click.Parameter]:
    """The old ``import``'s parameters: ``pairs import``'s (FORMAT taking ``answers`` and ``release`` too), then
    the options ``answers import`` has beyond them."""
    fmt = click.Argument(["fmt"], metavar="FORMAT", type=click.Choice([*FORMATS, "release", "answers", "issues"]))
    own = [p for p in pairs.pairs_import.params if p.name != "fmt"]
    names = {p.name for p in own}
    return [fmt, *own, *(p for p in answers.answers_import.params if p.name not in names)]


@click.command("import", hidden=True, params=_import_params())
@click.pass_context
@friendly
def import_alias(ctx, fmt, file, repository, mapping, skip_invalid, model, condition, scale, judge_model,
                 answer_format, verbose, annotator, update, categories=None) -> None:
    """Old spelling of: benchwright pairs import FORMAT FILE, answers import FILE, releases import DIR; and
    ``import issues FILE --repo R``, another spelling of: benchwright issues import FILE --repo R."""
    if fmt == "issues":
        if mapping or skip_invalid or update or categories is not None or model or condition or scale \
                or judge_model or answer_format != "auto" or verbose:
            raise click.UsageError("benchwright import issues takes FILE, --repo and --as only "
                                   "(benchwright issues import --help)")
        if not repository:
            raise click.UsageError("Missing option '--repo': the registered repository the issues are about")
        ctx.invoke(issues.issues_import, file=file, repository=repository, annotator=annotator)
        return
    if fmt == "answers":
        note_deprecated("import answers", "answers import")
    elif fmt == "release":
        note_deprecated("import release", "releases import")
    else:
        note_deprecated(f"import {fmt}", f"pairs import {fmt}")
    if update and fmt in ("answers", "release"):
        raise click.UsageError("--update is for Q&A pair formats, not for: benchwright import " + fmt)
    if categories is not None and fmt in ("answers", "release"):
        raise click.UsageError("--categories is for the github-discussions format, not for: benchwright import "
                               + fmt)
    if fmt == "answers":
        if repository or mapping:
            raise click.UsageError("--repo and --map are for Q&A pair formats; answers are matched to the "
                                   "project's pairs by id or question")
        ctx.invoke(answers.answers_import, file=file, model=model, condition=condition, scale=scale,
                   judge_model=judge_model, answer_format=answer_format, skip_invalid=skip_invalid,
                   verbose=verbose, annotator=annotator)
        return
    if model or condition or scale or judge_model or answer_format != "auto" or verbose:
        raise click.UsageError("--model, --condition, --scale, --judge-model, --answer-format and --verbose are "
                               "for: benchwright answers import FILE (was: benchwright import answers FILE)")
    if fmt == "release":
        ctx.invoke(releases.releases_import, folder=file, annotator=annotator)
        return
    ctx.invoke(pairs.pairs_import, fmt=fmt, file=file, repository=repository, mapping=mapping,
               categories=categories, skip_invalid=skip_invalid, update=update, annotator=annotator)


ALIASES: tuple[click.Command, ...] = (
    import_alias,
    _alias(pairs.pairs_history, "history", "pairs history"),
    _alias(repos.repos, "repo", "repos"),
    _alias(checklists.checklists, "checklist", "checklists"),
    _alias(answers.answers_generate, "answer", "answers generate"),
    _alias(judgments.judgments_run, "judge", "judgments run"),
    _alias(judgments.judgments_override, "override", "judgments override"),
    _alias(_failure_mode, "failure-mode", "failure-modes"),
    _alias(adjudication.adjudication_decide, "adjudicate", "adjudication decide"),
    _alias(releases.releases, "release", "releases"),
    _alias(probes.probes, "probe", "probes"),
)
"""Every old spelling, as a hidden command the root adds next to the new ones."""

# ``generate`` is a group again (answer-first generation, issue 18); its old meaning, ``generate STEP`` for
# ``curation run STEP``, still works when STEP names a curation step (the group hands those to this alias).
generate.generate.fallback = _alias(curation.curation_run, "generate", "curation run")
generate.generate.fallback_names = tuple(STEPS)

