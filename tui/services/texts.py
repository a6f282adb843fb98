"""The pair's text versions as the front ends show and change them (issue 16 item 1; RepoProbe §3.2: the enriched
and refined text is the item): the version list with who accepted each, the word diff of the current text against
the original, editing (compare-and-set), reverting and accepting. No Textual here: ``pairs text`` / ``edit`` /
``revert`` / ``accept-text`` and the review screen's text screen share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchwright.core.errors import InputFileError, NotFoundError
from benchwright.core.models import PairText, TextOrigin, stale_checklist_note
from benchwright.core.text_diff import TextDiff, word_diff
from benchwright.db import Store

from .evidence_moves import recheck_after_edit
from .leakage import check_leakage


def text_label(t: PairText) -> str:
    """How the front ends name a text version: ``original text`` for version 1, else ``text v3 refined by MODEL``
    (a rewrite names its model; an edit or a re-import who made it; a revert adds ``restoring v1``)."""
    if t.version == 1 and t.origin == TextOrigin.ORIGINAL:
        return "original text"
    who = t.model if t.is_rewrite and t.model else t.created_by
    out = f"text v{t.version} {t.origin}" + (f" by {who}" if who else "")
    return out + (f", restoring v{t.restored_from}" if t.restored_from is not None else "")


@dataclass(frozen=True)
class TextView:
    """A pair's text versions, for the text screen and ``pairs text``.

    Attributes:
        pair_id, ordinal: the pair and its position (``#N``).
        versions: every version, oldest first (the last is the current text).
        accepted_by: version -> the annotators who accepted it (sorted).
        stale_checklist: ``(made from, current)`` text versions when the current checklist is stale, else None.
    """

    pair_id: str
    ordinal: int
    versions: tuple[PairText, ...]
    accepted_by: dict[int, list[str]]
    stale_checklist: tuple[int, int] | None

    @property
    def current(self) -> PairText:
        """The current text (the latest version)."""
        return self.versions[-1]

    @property
    def original(self) -> PairText:
        """Version 1: the text as first imported."""
        return self.versions[0]

    def version(self, number: int | None) -> PairText:
        """Version ``number`` (None: the current one).

        Raises:
            NotFoundError: the pair has no such version.
        """
        if number is None:
            return self.current
        for t in self.versions:
            if t.version == number:
                return t
        raise NotFoundError(f"pair {self.pair_id} has no text version {number} (it has versions 1 to "
                            f"{self.current.version})")

    def stale_note(self) -> str | None:
        """``made from text version 2; the text is now version 3`` when the checklist is stale, else None."""
        return stale_checklist_note(*self.stale_checklist) if self.stale_checklist else None


def text_view(store: Store, pair_id: str) -> TextView:
    """The text versions of ``pair_id``.

    Raises:
        NotFoundError: no such pair.
    """
    return TextView(pair_id, store.ordinal_of(pair_id), tuple(store.text_versions(pair_id)),
                    store.text_acceptances(pair_id), store.stale_checklist(pair_id))


def text_diffs(old: PairText, new: PairText, *, cancelled=None) -> tuple[TextDiff, TextDiff]:
    """Word diffs (:func:`benchwright.core.text_diff.word_diff`) of the question and of the reference answer,
    ``old`` -> ``new``. ``cancelled`` as for ``word_diff`` (a worker of a closed screen).

    Raises:
        DiffCancelled: only when ``cancelled`` answered true.
    """
    return (word_diff(old.question, new.question, cancelled=cancelled),
            word_diff(old.reference_answer or "", new.reference_answer or "", cancelled=cancelled))


def read_text_file(path: str | Path, what: str) -> str:
    """The UTF-8 text of ``path`` (``--question-file`` / ``--answer-file``), exactly as written.

    Raises:
        InputFileError: no such file, a folder, or not UTF-8 (naming the file, ``what`` and the byte offset).
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise InputFileError.single(p, f"is a folder, not a file of the {what}") from None
    except OSError as e:
        raise InputFileError.single(p, f"cannot read the {what}: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFileError.single(p, f"the {what} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None


def edit_text(store: Store, pair_id: str, question: str, reference_answer: str | None, *, by: str,
              expected_version: int | None) -> PairText | None:
    """An annotator's edit of the pair's text: a new ``edited`` version (it becomes the current text and sends
    the pair back to review); None when the text is the current text already. When the pair's evidence was stale,
    the new text's citations are checked again at the current pin (:func:`recheck_after_edit`). The new text is
    checked for leaked terms (:func:`~benchwright.tui.services.leakage.check_leakage`).

    Raises:
        TextConflictError: the text is no longer at ``expected_version`` (nothing was written).
        BenchwrightError: an empty question.
    """
    saved = store.save_text_version(pair_id, question, reference_answer if reference_answer else None,
                                    origin=TextOrigin.EDITED, by=by, expected_version=expected_version)
    if saved is not None:
        recheck_after_edit(store, pair_id, by)
        check_leakage(store, pair_id, by=by)
    return saved


def revert_text(store: Store, pair_id: str, *, by: str, to_version: int = 1,
                expected_version: int | None = None) -> PairText | None:
    """Make text version ``to_version`` current again (:meth:`~benchwright.db.Store.revert_text`); None when it is
    the current text already. Like an edit, a revert re-checks stale evidence against the text it restores, and
    checks it for leaked terms.

    Raises:
        NotFoundError: no such pair or version.
        TextConflictError: the text is no longer at ``expected_version`` (nothing was written).
    """
    saved = store.revert_text(pair_id, by=by, to_version=to_version, expected_version=expected_version)
    if saved is not None:
        recheck_after_edit(store, pair_id, by)
        check_leakage(store, pair_id, by=by)
    return saved
