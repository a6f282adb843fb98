"""Leakage checks after a rewrite (issue 17 item 8; beyond SWE-QA-Pro, whose §2.2 rewrites questions to hide
identifiers, and RepoProbe §3.2, whose enrich and refine steps rewrite them): which terms of the reference answer or
of the checklist a new question gives away that the original question did not.

A *leaked span* is a stretch of the new question that is one of:

- ``identifier``: a code name. Found by its shape: CamelCase (``DefaultJSONProvider``), snake_case or SCREAMING_CASE
  or dunder (``ensure_ascii``, ``SERVER_NAME``, ``__init__``), a dotted name (``flask.app.Flask``), a call
  (``dumps()``), the content of backticks (`` `app.run(debug=True)` ``); and a capitalised word that the reference
  answer or a key point writes as code in backticks (``Blueprint``), unless it starts a sentence. A bare lower-case
  word is never an identifier by itself (``request`` is an English word as often as a name); it leaks only in
  backticks, as a call, or inside a key-point phrase. An identifier is found in a text when it is one of its tokens
  (case-sensitive; a dotted name also by a dotted suffix of two names or more, ``json.dumps`` of
  ``flask.json.dumps``); it is in the original when the original has it, a dotted suffix or its last name, ignoring
  case.
- ``path``: a file path with a directory and an extension (``src/flask/app.py``), or a file name with a known
  extension (``app.py``), either with an optional line suffix (``app.py:120``, ``:120-130``). The line suffix is
  not compared: a path is found in a text when the text has the path or its file name at a path boundary.
- ``key-point``: a run of at least :attr:`LeakageRules.min_words` content words (stop words skipped,
  case-insensitive, a trailing possessive ``'s`` or plural ``s`` removed) within one phrase (punctuation other than
  commas, hyphens and apostrophes ends a phrase, and so does code: a key point is prose) every window of which
  occurs as consecutive content words of the reference answer or of a key point, does not occur so in the original
  question,
  and holds at least :attr:`LeakageRules.min_new_words` words the original does not have at all (a reordering of
  the original's own words, or one new word among them, is not a leak).

Each span has ``text``, ``start`` / ``end`` (character offsets into the new question, ``end`` exclusive), ``kind``
and ``source`` (``reference answer`` when the term is there, else ``checklist``). A span inside a leaked identifier
or path is dropped (the pieces of a dotted name); identifiers inside a key-point phrase are kept. Spans are sorted
by offset, so the same inputs always give the same spans. Nothing here reads a file or the store.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .errors import BenchwrightError
from .vocabulary import LEAKAGE_KINDS, LEAKAGE_SOURCES

IDENTIFIER, PATH, KEY_POINT = LEAKAGE_KINDS
REFERENCE_ANSWER, CHECKLIST = LEAKAGE_SOURCES

DEFAULT_MIN_WORDS = 3
"""Content words a key-point phrase has at least (shorter runs such as "application context" are too common in
questions about one repository to mean anything)."""

DEFAULT_MIN_NEW_WORDS = 2
"""Words of each window of a key-point phrase that the original question lacks: one new word next to the original's
own ("the registration tracking flag" for "the flag ... registered once") is a paraphrase more often than a leak."""

_STOP_WORDS = """
a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each either else etc even ever every for from further get gets
got had has have having he her here hers him his how however i if in into is it its itself just let lets like may
me might more most much must my neither no nor not now of off on once one only or other others otherwise our ours
out over own per rather same shall she should so some such than that the their theirs them then there these they
this those though through thus to too under until up upon us use used uses using very via was we were what when
whenever where whereas wherever whether which while who whom whose why will with within without would yet you your
yours
"""
DEFAULT_STOP_WORDS = frozenset(_STOP_WORDS.split())
"""English function words, question words and a few verbs of asking that never make a key-point phrase."""

_EXTENSIONS = """
py pyi pyx pxd ipynb js mjs cjs ts tsx jsx go rs java kt kts scala swift c h cc cpp cxx hpp hh m mm cs fs rb php pl
lua r jl dart ex exs erl hs ml sh bash zsh ps1 bat sql html htm css scss less vue svelte md rst txt toml yaml yml
json jsonl cfg ini conf xml gradle cmake mk lock proto graphql tf env
"""
PATH_EXTENSIONS = frozenset(_EXTENSIONS.split())
"""File-name extensions that make a bare ``name.ext`` a path (with a directory, any extension does)."""


@dataclass(frozen=True)
class LeakageRules:
    """How a leakage check reads texts.

    Attributes:
        min_words: content words a key-point phrase has at least (>= 1; default :data:`DEFAULT_MIN_WORDS`).
        stop_words: lower-case words skipped when key-point phrases are formed (default :data:`DEFAULT_STOP_WORDS`).
        ignore: terms never reported, compared without regard to case (the pair's repository name: naming the
            project a question is about gives nothing away); they count as stop words too.
        min_new_words: words of each window of a key-point phrase that the original question does not have at all
            (>= 1; default :data:`DEFAULT_MIN_NEW_WORDS`).
    """

    min_words: int = DEFAULT_MIN_WORDS
    stop_words: frozenset[str] = DEFAULT_STOP_WORDS
    ignore: frozenset[str] = field(default_factory=frozenset)
    min_new_words: int = DEFAULT_MIN_NEW_WORDS

    def __post_init__(self) -> None:
        if not isinstance(self.min_words, int) or self.min_words < 1:
            raise BenchwrightError(f"a key-point phrase needs at least one word (min_words={self.min_words!r})")
        if not isinstance(self.min_new_words, int) or self.min_new_words < 1:
            raise BenchwrightError(f"a key-point phrase needs at least one new word (min_new_words="
                                   f"{self.min_new_words!r})")
        object.__setattr__(self, "stop_words", frozenset(w.lower() for w in self.stop_words))
        object.__setattr__(self, "ignore", frozenset(w.lower() for w in self.ignore if w))

    def ignoring(self, terms: Iterable[str | None]) -> LeakageRules:
        """These rules with ``terms`` (None and empty ones skipped) ignored as well."""
        return LeakageRules(self.min_words, self.stop_words, self.ignore | {t.lower() for t in terms if t},
                            self.min_new_words)


@dataclass(frozen=True)
class LeakedSpan:
    """One leaked term of a new question: ``text`` (as written there), ``start`` / ``end`` (character offsets,
    ``end`` exclusive), ``kind`` (one of :data:`~benchwright.core.vocabulary.LEAKAGE_KINDS`) and ``source`` (one of
    :data:`~benchwright.core.vocabulary.LEAKAGE_SOURCES`)."""

    text: str
    start: int
    end: int
    kind: str
    source: str

    def to_json(self) -> dict:
        """The stored form (an element of ``leakage_checks.spans_json``)."""
        return {"text": self.text, "start": self.start, "end": self.end, "kind": self.kind, "source": self.source}

    @classmethod
    def from_json(cls, data: dict) -> LeakedSpan:
        """The span stored as ``data`` (:meth:`to_json`)."""
        return cls(str(data["text"]), int(data["start"]), int(data["end"]), str(data["kind"]), str(data["source"]))


# ------------------------------------------------------------------------------------------------ tokens
_LINE = r"(?::\d+(?:-\d+)?)?"
_EXT = "|".join(sorted(PATH_EXTENSIONS, key=len, reverse=True))
_PATH_RE = re.compile(
    rf"(?<![\w/.\-])(?:(?:[\w.\-]+/)+[\w\-]+(?:\.[\w\-]+)*\.[A-Za-z0-9]{{1,10}}|[\w\-]+(?:\.[\w\-]+)*\.(?:{_EXT})){_LINE}"
    r"(?![\w/])")
_LINE_SUFFIX_RE = re.compile(r":\d+(?:-\d+)?$")
_DOTTED_RE = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w])")
_CALL_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")
_WORD_RE = re.compile(r"\w+")
_BACKTICK_RE = re.compile(r"`([^`\n]{1,300})`")
_CONTENT_WORD_RE = re.compile(r"\w+(?:['’]\w+)*")
_SENTENCE_END = (".", "?", "!", ":", "\n")
_PHRASE_JOINERS = frozenset(" \t,-'’_")
_CAPITALISED_RE = re.compile(r"(?<!\w)[A-Z]\w{2,}")
_CAMEL_RE = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_SHAPED_RE = re.compile(r"(?<!\w)(?=\w*(?:_|[a-z][A-Z]|[A-Z]{2}[a-z]))\w+")
"""The word tokens that may be shaped (:func:`_is_shaped` decides), found in one pass."""


def _is_shaped(token: str) -> bool:
    """True for a token whose shape says it is code: an underscore between letters or digits (snake_case,
    SCREAMING_CASE, dunder) or CamelCase (a lower-case letter then a capital, or two capitals then a lower-case
    letter)."""
    if "_" in token:
        return any(c.isalpha() for c in token)
    return _CAMEL_RE.search(token) is not None


def _code_tokens(text: str) -> set[str]:
    """Every word token of ``text`` and every dotted name with each dotted suffix of two names or more."""
    out = set(_WORD_RE.findall(text))
    for m in _DOTTED_RE.finditer(text):
        parts = m.group().split(".")
        out.update(".".join(parts[i:]) for i in range(len(parts) - 1))
    return out


def _backticked_names(text: str) -> set[str]:
    """The word tokens and dotted names written in backticks in ``text``."""
    out: set[str] = set()
    for m in _BACKTICK_RE.finditer(text):
        out |= _code_tokens(m.group(1))
    return out


def _paths(text: str) -> set[str]:
    """Every path of ``text`` (line suffixes dropped) with each of its tails after a ``/`` (``flask/app.py``,
    ``app.py`` of ``src/flask/app.py``)."""
    out: set[str] = set()
    for m in _PATH_RE.finditer(text):
        parts = _LINE_SUFFIX_RE.sub("", m.group()).split("/")
        out.update("/".join(parts[i:]) for i in range(len(parts)))
    return out


def _path_found(paths: set[str], path: str) -> bool:
    """True when ``paths`` (:func:`_paths` of a text) has ``path`` (its line suffix dropped) or its file name."""
    bare = _LINE_SUFFIX_RE.sub("", path)
    return bare in paths or bare.rsplit("/", 1)[-1] in paths


def _starts_sentence(text: str, at: int) -> bool:
    """True when the word at offset ``at`` of ``text`` starts the text or a sentence (or a line)."""
    before = text[max(0, at - 200):at].rstrip(" \t")
    return not before.strip() or before.endswith(_SENTENCE_END)


@functools.lru_cache(maxsize=65536)
def _norm(word: str) -> str:
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w


def _code_regions(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` stretches of ``text`` that are code (backticks, paths, dotted names, shaped tokens),
    sorted by start."""
    regions = [m.span() for r in (_BACKTICK_RE, _PATH_RE, _DOTTED_RE) for m in r.finditer(text)]
    regions += [m.span() for m in _SHAPED_RE.finditer(text) if _is_shaped(m.group())]
    return sorted(regions)


def _breaks(gap: str) -> bool:
    """True when the text between two content words ends a phrase: any character but letters, digits, spaces,
    commas, hyphens and apostrophes (sentence ends, brackets, quotes, markup, control characters, new lines)."""
    return gap != " " and any(not (c.isalnum() or c in _PHRASE_JOINERS) for c in gap)


def _content_words(text: str, stop: frozenset[str]) -> list[tuple[str, int, int, int]]:
    """``(normalised word, start, end, phrase)`` of each content word of ``text``, in order; ``phrase`` counts the
    breaks before the word (:func:`_breaks`, or code between: code is never part of a key-point phrase)."""
    out = []
    regions, k, phrase, last = _code_regions(text), 0, 0, 0
    for m in _CONTENT_WORD_RE.finditer(text):
        while k < len(regions) and regions[k][1] <= m.start():
            k += 1
        if k < len(regions) and regions[k][0] < m.end():  # inside code
            phrase, last = phrase + 1, m.end()
            continue
        w = _norm(m.group())
        if not w or w in stop or m.group().lower() in stop:
            continue
        if _breaks(text[last:m.start()]):
            phrase += 1
        out.append((w, m.start(), m.end(), phrase))
        last = m.end()
    return out


def _windows(words: Sequence[tuple[str, int, int, int]], n: int) -> Iterator[tuple[int, tuple[str, ...]]]:
    """``(index of the first word, normalised words)`` of each run of ``n`` content words within one phrase."""
    for i in range(len(words) - n + 1):
        if words[i][3] == words[i + n - 1][3]:
            yield i, tuple(w[0] for w in words[i:i + n])


def _grams(words: Sequence[tuple[str, int, int, int]], n: int) -> set[tuple[str, ...]]:
    return {gram for _, gram in _windows(words, n)}


@dataclass
class _Source:
    """A source text (the reference answer, or the checklist's key points) as the check reads it."""

    name: str
    text: str
    tokens: set[str]
    paths: set[str]
    code_names: set[str]
    grams: set[tuple[str, ...]]


def _source(name: str, text: str, rules: LeakageRules, stop: frozenset[str]) -> _Source:
    return _Source(name, text, _code_tokens(text), _paths(text), _backticked_names(text),
                   _grams(_content_words(text, stop), rules.min_words))


# ------------------------------------------------------------------------------------------------ the check
def find_leaks(original: str, new: str, reference_answer: str | None, checklist_items: Iterable[str] = (), *,
               rules: LeakageRules = LeakageRules()) -> tuple[LeakedSpan, ...]:
    """The spans of ``new`` (a question after a rewrite or an edit) that give away a term of ``reference_answer``
    or of ``checklist_items`` (the key points of the pair's checklist) that ``original`` (the question before the
    rewrite) does not have; the rules are in this module's docstring.

    Args:
        original: the question before the rewrite.
        new: the question after it; the spans' offsets are into this string.
        reference_answer: the pair's reference answer (None: none).
        checklist_items: the key points of its current checklist, in any order.
        rules: minimum phrase length, stop words and ignored terms.

    Returns:
        The leaked spans, sorted by ``(start, end, kind)``; empty when the new question is clean.
    """
    stop = rules.stop_words | rules.ignore
    sources = [_source(REFERENCE_ANSWER, reference_answer or "", rules, stop),
               _source(CHECKLIST, "\n".join(checklist_items), rules, stop)]
    orig_tokens = {t.lower() for t in _code_tokens(original)}
    orig_paths, orig_lower = _paths(original), original.lower()
    orig_words = _content_words(original, stop)
    orig_grams = _grams(orig_words, rules.min_words)
    orig_vocab = {w[0] for w in orig_words}
    spans: dict[tuple[int, int], LeakedSpan] = {}

    def add(start: int, end: int, kind: str, source: str) -> None:
        key = (start, end)
        if key not in spans or (spans[key].kind == KEY_POINT and kind != KEY_POINT):
            spans[key] = LeakedSpan(new[start:end], start, end, kind, source)

    def name_in_original(name: str) -> bool:
        parts = name.split(".")
        return any(".".join(parts[i:]).lower() in orig_tokens for i in range(len(parts)))

    def identifier(name: str, start: int, end: int, *, suffixes: bool = False) -> None:
        if name.lower() in rules.ignore or name_in_original(name):
            return
        parts = name.split(".")
        wanted = [".".join(parts[i:]) for i in range(max(1, len(parts) - 1))] if suffixes else [name]
        for s in sources:
            if any(w in s.tokens for w in wanted):
                add(start, end, IDENTIFIER, s.name)
                return

    # backticked code: its whole content, as written, in a source
    for m in _BACKTICK_RE.finditer(new):
        content = m.group(1).strip()
        if not content or content.lower() in rules.ignore or content.lower() in orig_lower:
            continue
        kind = PATH if _PATH_RE.fullmatch(content) else IDENTIFIER
        for s in sources:
            if (_path_found(s.paths, content) if kind == PATH else content in s.text):
                at = m.start(1) + m.group(1).index(content)
                add(at, at + len(content), kind, s.name)
                break
    # paths
    path_ranges = []
    for m in _PATH_RE.finditer(new):
        path_ranges.append((m.start(), m.end()))
        p = m.group()
        if p.lower() in rules.ignore or _path_found(orig_paths, p):
            continue
        for s in sources:
            if _path_found(s.paths, p):
                add(m.start(), m.end(), PATH, s.name)
                break
    path_starts = [a for a, _ in path_ranges]

    def in_path(a: int, b: int) -> bool:
        k = bisect.bisect_right(path_starts, a) - 1  # the path ranges are disjoint, sorted by start
        return k >= 0 and b <= path_ranges[k][1]

    # dotted names (not the paths), calls, shaped tokens, capitalised names the sources write as code
    for m in _DOTTED_RE.finditer(new):
        parts = m.group().split(".")
        if not in_path(m.start(), m.end()) and not all(len(p) == 1 for p in parts):
            identifier(m.group(), m.start(), m.end(), suffixes=True)
    for m in _CALL_RE.finditer(new):
        identifier(m.group(1), m.start(1), m.end(1))
    for m in _SHAPED_RE.finditer(new):
        if _is_shaped(m.group()) and not in_path(m.start(), m.end()):
            identifier(m.group(), m.start(), m.end())
    for m in _CAPITALISED_RE.finditer(new):
        tok = m.group()
        if not _is_shaped(tok) and tok.lower() not in stop and any(tok in s.code_names for s in sources) \
                and not in_path(m.start(), m.end()) and not _starts_sentence(new, m.start()) \
                and not name_in_original(tok):
            add(m.start(), m.end(), IDENTIFIER, next(s.name for s in sources if tok in s.code_names))
    # key-point phrases
    n = rules.min_words
    words = _content_words(new, stop)
    runs: dict[str, list[list[int]]] = {REFERENCE_ANSWER: [], CHECKLIST: []}
    new_words = min(rules.min_new_words, n)
    for i, gram in _windows(words, n):
        source = next((s.name for s in sources if gram in s.grams), None)
        if source is None or gram in orig_grams or sum(w not in orig_vocab for w in gram) < new_words:
            continue
        run = runs[source]
        if run and run[-1][1] >= i:  # overlaps or touches the previous window: one phrase
            run[-1][1] = i + n - 1
        else:
            run.append([i, i + n - 1])
    for source, found in runs.items():
        for first, last in found:
            add(words[first][1], words[last][2], KEY_POINT, source)
    # a span inside another leaked identifier or path is a piece of it
    code = sorted((s.start, s.end) for s in spans.values() if s.kind != KEY_POINT)
    starts, reach, widest = [a for a, _ in code], [], {}
    for a, b in code:
        reach.append(max(b, reach[-1]) if reach else b)  # the furthest end of the code spans so far
        widest[a] = max(b, widest.get(a, b))

    def inside(s: LeakedSpan) -> bool:
        k = bisect.bisect_left(starts, s.start) - 1  # code spans starting before s
        return (k >= 0 and reach[k] >= s.end) or widest.get(s.start, -1) > s.end

    kept = [s for s in spans.values() if not inside(s)]
    return tuple(sorted(kept, key=lambda s: (s.start, s.end, LEAKAGE_KINDS.index(s.kind))))


def leakage_status(spans: Sequence[LeakedSpan]) -> str:
    """``leaked`` when there is a span, else ``clean`` (:data:`~benchwright.core.vocabulary.LEAKAGE_STATUSES`)."""
    return "leaked" if spans else "clean"


def leaked_terms(spans: Iterable[LeakedSpan]) -> list[LeakedSpan]:
    """One span per distinct ``(text, kind, source)``, in the order of their first occurrence: what a banner
    lists (the same term leaked twice is named once)."""
    seen: dict[tuple[str, str, str], LeakedSpan] = {}
    for s in spans:
        seen.setdefault((s.text, s.kind, s.source), s)
    return list(seen.values())
