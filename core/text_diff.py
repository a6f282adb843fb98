"""The one text diff every front end shows (the CLI, the checklist diff screen, the refine diff, the release
changelog): words, runs of white space and single grapheme clusters as units, compared after Unicode NFC.

diff-match-patch computes the diff with semantic cleanup, over the units each mapped to one code point (as
its line mode does for lines). Properties a caller can rely on:

- no part starts or ends inside a grapheme cluster (UAX #29, the ``regex`` library's ``\\X``: flag pairs,
  ZWJ families, skin tones, combining marks stay whole) or inside a word;
- text equal after NFC normalization is never a change: a pair of texts that differ only so is reported as
  ``normalization_only``;
- any number of distinct units is handled: past what fits in code points (surrogates are skipped) the diff is
  computed over the units with :class:`difflib.SequenceMatcher` instead;
- a diff that ran out of time (diff-match-patch gives up after ``timeout_s`` and reports what is left as
  removed and re-added) says so: ``approximate`` is true.
"""

from __future__ import annotations

import difflib
import itertools
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import regex
from diff_match_patch import diff_match_patch

EQUAL, INSERT, DELETE = 0, 1, -1
NORMALIZATION_ONLY = "normalization only"
"""The status of texts (and checklist items) that differ only by Unicode normalization."""
APPROXIMATE = "approximate diff"
"""How every front end labels a diff that ran out of time."""
DEFAULT_TIMEOUT_S = 1.0
LONG_DIFF_CHARS = 2_000
"""Texts longer than this together (old and new, in characters) are diffed off the UI thread by the app: a
diff's cost grows with the product of the lengths (about 0.4 s at 2,000 characters of unrelated words)."""

# A word (a run of grapheme clusters each starting with a word character), a run of white-space clusters,
# or any other single grapheme cluster (punctuation, an emoji sequence, a lone combining mark).
_UNIT = regex.compile(r"(?:(?=\w)\X)+|(?:(?=\s)\X)+|\X")
# The same cut for pure ASCII text (its only multi-character cluster, CR LF, is white space), 4-5 times faster.
_ASCII_UNIT = re.compile(r"\w+|\s+|[^\w\s]", re.ASCII)
# The same cut for text in which every grapheme cluster is one code point (or CR LF), 3-4 times faster: text
# without the characters that join clusters (Extend, ZWJ, SpacingMark, Prepend, regional indicators, Hangul
# jamo), which is most text, accented letters and single emoji included.
_JOINERS = regex.compile(r"[\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}\p{GCB=Prepend}\p{GCB=Regional_Indicator}"
                         r"\p{GCB=L}\p{GCB=V}\p{GCB=T}]")
_SIMPLE_UNIT = regex.compile(r"\w+|\s+|.", regex.DOTALL)
# Code points a unit may be mapped to, private use areas first (diff-match-patch's semantic scoring sees
# them as neither letters nor space); never a surrogate, which is not a valid character on its own.
_RANGES = ((0xE000, 0xF900), (0xF0000, 0x110000), (0x0, 0xD800), (0xF900, 0xF0000))
_MAX_UNITS = sum(b - a for a, b in _RANGES)  # 1,112,064


class DiffCancelled(Exception):
    """Raised by :func:`word_diff` when its ``cancelled`` callback answers true (a closed screen)."""


class Segment(NamedTuple):
    """One part of a diff.

    Attributes:
        op: :data:`EQUAL`, :data:`INSERT` (only in the new text) or :data:`DELETE` (only in the old text).
        text: the part's text; for ``EQUAL`` as it is in the new text.
        old_text: for ``EQUAL`` parts only, the old text's form where it differs from ``text`` by Unicode
            normalization alone; None otherwise.
    """

    op: int
    text: str
    old_text: str | None = None


@dataclass
class TextDiff:
    """The result of :func:`word_diff`.

    Attributes:
        segments: the parts in order; the old text is the ``EQUAL`` (their ``old_text`` where set) and
            ``DELETE`` parts, the new text the ``EQUAL`` and ``INSERT`` parts.
        approximate: the diff ran out of time, so some unchanged text may be shown as removed and added.
        normalization_only: the texts differ, but only by Unicode normalization (equal after NFC).
        timeout_s: the time limit the diff was computed under, in seconds.
    """

    segments: list[Segment] = field(default_factory=list)
    approximate: bool = False
    normalization_only: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def changed(self) -> bool:
        """True when some text was removed or added (a normalization-only difference is no change)."""
        return any(s.op != EQUAL for s in self.segments)

    def side(self, which: int) -> Iterator[tuple[int, str]]:
        """``(op, text)`` of the old (0) or new (1) text: its ``EQUAL`` parts in its own form, and its
        ``DELETE`` (old) or ``INSERT`` (new) parts."""
        for s in self.segments:
            if s.op == EQUAL:
                yield EQUAL, (s.old_text if which == 0 and s.old_text is not None else s.text)
            elif (s.op == DELETE) == (which == 0):
                yield s.op, s.text

    def old(self) -> str:
        """The old text, exactly."""
        return "".join(t for _, t in self.side(0))

    def new(self) -> str:
        """The new text, exactly."""
        return "".join(t for _, t in self.side(1))

    def note(self) -> str | None:
        """What a front end says about this diff beside its parts: :data:`APPROXIMATE`,
        :data:`NORMALIZATION_ONLY`, or None."""
        return APPROXIMATE if self.approximate else NORMALIZATION_ONLY if self.normalization_only else None


def units(text: str) -> list[str]:
    """``text`` cut into diff units (words, white-space runs, other single grapheme clusters); joined they
    give ``text`` back."""
    if text.isascii():
        return _ASCII_UNIT.findall(text)
    # concurrent: the regex library lets other threads run meanwhile (the app's UI, when a worker diffs)
    return (_UNIT if _JOINERS.search(text, concurrent=True) else _SIMPLE_UNIT).findall(text, concurrent=True)


def _nfc(text: str) -> str:
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def equal_after_normalization(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` are the same text after Unicode NFC normalization."""
    return a == b or _nfc(a) == _nfc(b)


def unit_overlap(a: str, b: str) -> float:
    """The share of ``a`` and ``b`` (in characters, after NFC) in units both have, regardless of order, in
    [0, 1]: an upper bound of the share a diff finds unchanged, in linear time."""
    a, b = _nfc(a), _nfc(b)
    if not a and not b:
        return 1.0
    common = Counter(units(a)) & Counter(units(b))
    return min(1.0, 2 * sum(len(u) * n for u, n in common.items()) / (len(a) + len(b)))


class _Deadline:
    """The deadline diff-match-patch is given: it only tests ``deadline == None`` and ``time.time() >
    deadline`` (once per step of its bisection), so this stands in for the float and, at each test, polls
    ``cancelled`` and lets other threads run (a diff in a worker thread must not hold the GIL from the UI).
    ``at``: the time limit (``time.time()`` seconds; infinite for none)."""

    def __init__(self, at: float, cancelled: Callable[[], bool] | None) -> None:
        self.at = at
        self.cancelled = cancelled
        self._yield_at = 0.0

    def _passed(self, now: float) -> bool:
        if self.cancelled is not None:
            if self.cancelled():
                raise DiffCancelled
            if now >= self._yield_at:  # only worth it when something may be waiting for the GIL
                time.sleep(0)
                self._yield_at = now + 0.001
        return now > self.at

    def __lt__(self, now: float) -> bool:  # time.time() > deadline
        return self._passed(now)

    def __gt__(self, now: float) -> bool:  # deadline < time.time()
        return self._passed(now)

    def __eq__(self, other: object) -> bool:
        return other is self

    __hash__ = object.__hash__


class _Matcher(diff_match_patch):
    """diff-match-patch that notes when it gave up at the deadline and can be cancelled while it runs."""

    def __init__(self, cancelled: Callable[[], bool] | None) -> None:
        super().__init__()
        self.cancelled = cancelled
        self.timed_out = False

    def diff_main(self, text1, text2, checklines=True, deadline=None):
        if deadline is None:
            limit = time.time() + self.Diff_Timeout if self.Diff_Timeout > 0 else float("inf")
            deadline = _Deadline(limit, self.cancelled)
        return super().diff_main(text1, text2, checklines, deadline)

    def diff_bisect(self, text1, text2, deadline):
        if self.cancelled is not None and self.cancelled():
            raise DiffCancelled
        diffs = super().diff_bisect(text1, text2, deadline)
        # diff-match-patch's bail-out at the deadline: everything left as removed and added
        if time.time() > deadline and diffs == [(DELETE, text1), (INSERT, text2)]:
            self.timed_out = True
        return diffs


def _ops_by_code_points(a: list[str], b: list[str], timeout_s: float,
                        cancelled: Callable[[], bool] | None) -> tuple[list[tuple[int, int]], bool]:
    """``[(op, unit count)]`` by diff-match-patch over units mapped to code points, and whether it timed out."""
    free = itertools.chain.from_iterable(range(lo, hi) for lo, hi in _RANGES)
    codes = {k: chr(cp) for k, cp in zip(dict.fromkeys(itertools.chain(a, b)), free, strict=False)}
    ea, eb = "".join(map(codes.__getitem__, a)), "".join(map(codes.__getitem__, b))
    matcher = _Matcher(cancelled)
    matcher.Diff_Timeout = timeout_s
    diffs = matcher.diff_main(ea, eb, False)
    if cancelled is not None and cancelled():
        raise DiffCancelled
    matcher.diff_cleanupSemantic(diffs)
    return [(op, len(t)) for op, t in diffs if t], matcher.timed_out


def _ops_by_sequence_matcher(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """``[(op, unit count)]`` by :class:`difflib.SequenceMatcher` (any number of distinct units)."""
    out: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            out.append((EQUAL, i2 - i1))
        else:
            if i2 > i1:
                out.append((DELETE, i2 - i1))
            if j2 > j1:
                out.append((INSERT, j2 - j1))
    return out


def word_diff(old: str, new: str, *, timeout_s: float | None = None,
              cancelled: Callable[[], bool] | None = None) -> TextDiff:
    """Word-level diff of ``old`` → ``new`` (see the module docstring for the units and guarantees).

    Args:
        timeout_s: diff-match-patch's time limit in seconds (None: :data:`DEFAULT_TIMEOUT_S`, 1 s, its own
            default); past it the result is ``approximate``. 0 means no limit.
        cancelled: polled while the diff runs; when it answers true, :class:`DiffCancelled` is raised.

    Returns:
        a :class:`TextDiff`; ``old()`` and ``new()`` of it give ``old`` and ``new`` back exactly.

    Raises:
        DiffCancelled: only when ``cancelled`` answered true.
    """
    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    result = TextDiff(timeout_s=timeout_s)
    if old == new:
        result.segments = [Segment(EQUAL, new)] if new else []
        return result
    if equal_after_normalization(old, new):
        result.normalization_only = True
        result.segments = [Segment(EQUAL, new, old)]
        return result
    ua, ub = units(old), units(new)
    ka = ua if unicodedata.is_normalized("NFC", old) else [_nfc(u) for u in ua]
    kb = ub if unicodedata.is_normalized("NFC", new) else [_nfc(u) for u in ub]
    distinct = len(set(ka).union(kb))
    if distinct <= _MAX_UNITS:
        ops, result.approximate = _ops_by_code_points(ka, kb, timeout_s, cancelled)
    else:
        ops = _ops_by_sequence_matcher(ka, kb)
    i = j = 0
    segments: list[Segment] = []
    for op, n in ops:
        if op == EQUAL:
            text, old_text = "".join(ub[j:j + n]), "".join(ua[i:i + n])
            segments.append(Segment(EQUAL, text, None if old_text == text else old_text))
            i, j = i + n, j + n
        elif op == DELETE:
            segments.append(Segment(DELETE, "".join(ua[i:i + n])))
            i += n
        else:
            segments.append(Segment(INSERT, "".join(ub[j:j + n])))
            j += n
    result.segments = segments
    return result
