"""Which repositories a benchmark may draw its questions from: RepoProbe §3.2 "Repository Selection".

RepoProbe keeps repositories created on or after 2024-01-01 (after the training cut-off of the models it
evaluates, so their code is unlikely to be memorized), with at least 1,000 stars (maintained and used), and at
least 10 answered GitHub Discussions (enough real questions). The thresholds are parameters of
:class:`EligibilityRule`; its defaults are the paper's.

The facts (:class:`RepositoryFacts`) come from a GitHub Discussions export (``stargazerCount``, ``createdAt``, an
answered-discussions total) or from the user (``benchwright repos add|set --stars N --created DATE --answered N``);
benchwright never fetches them from the network. A fact that is not known makes the result ``unknown``, never
eligible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

PAPER_MIN_STARS = 1000
"""RepoProbe §3.2: at least 1,000 GitHub stars."""
PAPER_CREATED_ON_OR_AFTER = date(2024, 1, 1)
"""RepoProbe §3.2: created on or after 2024-01-01."""
PAPER_MIN_ANSWERED = 10
"""RepoProbe §3.2: at least 10 answered discussions."""

ELIGIBLE = "eligible"
NOT_ELIGIBLE = "not eligible"
UNKNOWN = "unknown"
ELIGIBILITY_STATUSES = (ELIGIBLE, NOT_ELIGIBLE, UNKNOWN)
"""What :meth:`EligibilityRule.check` answers: every criterion met; one failed; none failed but one is unknown."""

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


def parse_created_on(text: str) -> str:
    """The calendar date of ``text`` as ``YYYY-MM-DD``: a date (``2024-03-01``) or a GitHub timestamp
    (``2024-03-01T12:30:00Z``; its date as written, in UTC for GitHub's ``createdAt``).

    Raises:
        ValueError: ``text`` is neither, or names no real day (``2024-02-30``).
    """
    m = _DATE.fullmatch(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"{text!r} is not a date (write YYYY-MM-DD, e.g. 2024-03-01)")
    try:
        return date.fromisoformat(m.group(1)).isoformat()
    except ValueError:
        raise ValueError(f"{text!r} is not a real day (write YYYY-MM-DD, e.g. 2024-03-01)") from None


@dataclass(frozen=True)
class RepositoryFacts:
    """The §3.2 eligibility facts of one repository; ``None`` where not known.

    Attributes:
        stars: GitHub stars (``stargazerCount``), >= 0.
        created_on: the day the repository was created, ``YYYY-MM-DD``.
        answered_discussions: discussions with an accepted answer (all categories).
    """

    stars: int | None = None
    created_on: str | None = None
    answered_discussions: int | None = None

    def any(self) -> bool:
        """True when at least one fact is known."""
        return any(v is not None for v in (self.stars, self.created_on, self.answered_discussions))

    def describe(self) -> str:
        """``1,234 stars, created 2024-03-01, 12 answered discussions``, ``unknown`` for facts not known."""
        stars = "stars unknown" if self.stars is None else f"{self.stars:,} stars"
        created = "created unknown" if self.created_on is None else f"created {self.created_on}"
        answered = ("answered discussions unknown" if self.answered_discussions is None
                    else f"{self.answered_discussions:,} answered discussions")
        return f"{stars}, {created}, {answered}"


@dataclass(frozen=True)
class Eligibility:
    """The result of :meth:`EligibilityRule.check`.

    Attributes:
        status: one of :data:`ELIGIBILITY_STATUSES`.
        met: the criteria met, as sentences (``1,234 stars (at least 1,000)``).
        failed: the criteria failed, as sentences (``800 stars (fewer than 1,000)``).
        unknown: the facts not known (``stars``, ``created``, ``answered``: the ``repos set`` option names
            without their dashes).
    """

    status: str
    met: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def eligible(self) -> bool:
        """True only when every criterion is known and met."""
        return self.status == ELIGIBLE


@dataclass(frozen=True)
class EligibilityRule:
    """RepoProbe §3.2's repository-selection rule with its thresholds (defaults: the paper's).

    Attributes:
        min_stars: at least this many stars.
        created_on_or_after: created on this day or later.
        min_answered: at least this many answered discussions.
    """

    min_stars: int = PAPER_MIN_STARS
    created_on_or_after: date = PAPER_CREATED_ON_OR_AFTER
    min_answered: int = PAPER_MIN_ANSWERED

    def check(self, facts: RepositoryFacts) -> Eligibility:
        """Check every criterion against ``facts``; a failed criterion makes the repository not eligible, an
        unknown fact (with none failed) makes it unknown."""
        met: list[str] = []
        failed: list[str] = []
        unknown: list[str] = []

        def judge(name: str, value: object, ok: bool, when_met: str, when_failed: str) -> None:
            if value is None:
                unknown.append(name)
            else:
                (met if ok else failed).append(when_met if ok else when_failed)

        stars, answered, after = facts.stars, facts.answered_discussions, self.created_on_or_after.isoformat()
        judge("stars", stars, stars is not None and stars >= self.min_stars,
              f"{stars or 0:,} stars (at least {self.min_stars:,})", f"{stars or 0:,} stars (fewer than {self.min_stars:,})")
        judge("created", facts.created_on, facts.created_on is not None and facts.created_on >= after,
              f"created {facts.created_on} (on or after {after})", f"created {facts.created_on} (before {after})")
        judge("answered", answered, answered is not None and answered >= self.min_answered,
              f"{answered or 0:,} answered discussions (at least {self.min_answered:,})",
              f"{answered or 0:,} answered discussions (fewer than {self.min_answered:,})")
        status = NOT_ELIGIBLE if failed else UNKNOWN if unknown else ELIGIBLE
        return Eligibility(status, tuple(met), tuple(failed), tuple(unknown))
