"""The store's connection lock, shared by the store's method groups."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def serialized(method: _F) -> _F:
    """Run ``method`` holding ``self._lock`` (the store's connection is shared between threads)."""

    @wraps(method)
    def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked  # type: ignore[return-value]
