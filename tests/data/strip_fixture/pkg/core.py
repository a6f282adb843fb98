#!/usr/bin/env python3
"""Module docstring of core.

Two paragraphs.
"""

from __future__ import annotations

import re  # regular expressions
from typing import Any

HASH = "#"  # the string keeps its hash
PATTERN = re.compile(r"#\d+")
TEMPLATE = f"{HASH} item {1 + 1} # not a comment"
NESTED = f"{'#'.join(['a', 'b'])}"
COUNTS = {}  # type: dict[str, int]
LATER = None  # type: ignore[assignment]


class OnlyDocumented:
    """A class whose body is its docstring."""


class Greeter:
    '''Greets.'''

    greeting: str = "hello"  # an annotated attribute
    """An attribute docstring: a string literal after a statement, kept."""

    def __init__(self, name: str) -> None:
        """Store the name."""
        self.name = name

    def greet(self, loud: bool = False) -> str:
        # a full-line comment
        text = f"{self.greeting}, {self.name}"  # build it
        if loud:
            return text.upper() + "!"  # shout
        return text

    async def later(self) -> Any:
        r"""Raw docstring."""
        def inner():
            "inner docstring"; return 1
        return inner()


def one_liner(): "only a docstring"


def described(x: int) -> int:
    """Double x.

    Args:
        x: a number # with a hash inside the docstring
    """

    return x * 2
