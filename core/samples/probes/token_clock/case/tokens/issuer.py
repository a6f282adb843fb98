"""Issuing session tokens."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Token:
    user: str
    value: str
    expires_at: float


class TokenIssuer:
    """Issues tokens that expire ``ttl_s`` seconds after they are issued.

    ``clock`` returns the current time in seconds; tests pass a fake one.
    """

    def __init__(self, ttl_s: float = 3600.0, clock: Callable[[], float] = time.time) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._serial = itertools.count(1)

    def issue(self, user: str) -> Token:
        return Token(user=user, value=f"{user}-{next(self._serial)}", expires_at=self.clock() + self.ttl_s)
