"""One registry per vocabulary: the judges, curation steps, failure modes, categories, entry kinds and conditions
of benchwright are each declared once, as entries of a :class:`Registry`, and every list, CLI choice, help text,
report column and write check is read from it (the pattern of Inspect AI's ``_util/registry.py``).

A registry keeps its entries in registration order (the order of reports and help texts). Views over it
(:class:`Names`, :class:`Attribute`) are live: a judge registered later (a plugin, a test) is in every list at
once, with no second list to keep in sync.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from .errors import BenchwrightError


class Named(Protocol):
    """What a registry holds: anything with a ``name``."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class UnknownNameError(BenchwrightError, ValueError):
    """A name no registry entry has. Structured for the front ends: ``what`` (``judge``, ``step`` ...), ``name``
    (the unknown one) and ``known`` (every registered name, in order); the message lists them."""

    def __init__(self, what: str, name: Any, known: Sequence[str]):
        self.what, self.name, self.known = what, name, tuple(known)
        super().__init__(f"unknown {what} {name!r}; use one of {', '.join(self.known)}")


class Registry(Generic[T]):
    """Entries of one vocabulary by name, in registration order.

    Args:
        what: the vocabulary's singular noun, for messages (``judge``, ``curation step``).
    """

    def __init__(self, what: str):
        self.what = what
        self._items: dict[str, T] = {}
        self.version = 0
        """Bumped by every change (register, replace, unregister): :class:`Names` views cache their names on it."""

    def register(self, item: T) -> T:
        """Add ``item``; returns it (so a registration can be an assignment).

        Raises:
            ValueError: the name is empty or already registered.
        """
        if not item.name or not item.name.strip():
            raise ValueError(f"a {self.what} needs a name")
        if item.name in self._items:
            raise ValueError(f"{self.what} {item.name!r} is already registered")
        self._items[item.name] = item
        self.version += 1
        return item

    def replace(self, item: T) -> T:
        """Put ``item`` in place of the registered entry of the same name (keeping its position): how a module
        attaches what lives there (e.g. a judge's request builder) to a declaration made elsewhere.

        Raises:
            UnknownNameError: no entry has that name.
        """
        self.get(item.name)
        self._items[item.name] = item
        self.version += 1
        return item

    def unregister(self, name: str) -> None:
        """Remove entry ``name`` (tests that register a toy entry clean up with this); unknown names are ignored."""
        self._items.pop(name, None)
        self.version += 1

    def get(self, name: str) -> T:
        """The entry ``name``.

        Raises:
            UnknownNameError: no entry has that name (the message lists those there are).
        """
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise UnknownNameError(self.what, name, tuple(self._items)) from None

    def check(self, name: str) -> str:
        """``name`` if it is registered (the check on write of the store).

        Raises:
            UnknownNameError: it is not.
        """
        self.get(name)
        return name

    def names(self, where: Callable[[T], bool] | None = None) -> tuple[str, ...]:
        """Registered names in order, optionally only those whose entry satisfies ``where``."""
        return tuple(n for n, item in self._items.items() if where is None or where(item))

    def __iter__(self) -> Iterator[T]:
        return iter(tuple(self._items.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}: {', '.join(self._items)})"


class Names(Sequence[str]):
    """A live, read-only tuple-like view of a registry's names (optionally filtered): ``JUDGES``, ``STEPS``,
    ``FAILURE_MODES`` are such views, so old callers keep working and never go stale. Compares equal to a
    tuple or list with the same names."""

    def __init__(self, registry: Registry, where: Callable[[Any], bool] | None = None):
        self._registry, self._where = registry, where
        self._cache: tuple[int, tuple[str, ...]] | None = None

    def _names(self) -> tuple[str, ...]:
        # cached per registry version: the report reads JUDGES / ENTRY_KINDS once per judgment (90,000 times for
        # 10,000 pairs x 3 models x 3 runs), and rebuilding the tuple each time was most of its time
        version = self._registry.version
        if self._cache is None or self._cache[0] != version:
            self._cache = (version, self._registry.names(self._where))
        return self._cache[1]

    def __getitem__(self, index):  # type: ignore[override]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Names | tuple | list):
            return self._names() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[str]) -> tuple[str, ...]:
        return self._names() + tuple(other)

    def __repr__(self) -> str:
        return repr(self._names())


class Attribute(Mapping[str, Any]):
    """A live, read-only mapping name -> one attribute of each entry (optionally filtered), e.g.
    ``DEFAULT_RUNS`` (judge -> default runs) or ``SCALAR_SCALES`` (scalar judge -> scale)."""

    def __init__(self, registry: Registry, attribute: str | Callable[[Any], Any],
                 where: Callable[[Any], bool] | None = None):
        self._registry, self._where = registry, where
        self._get = attribute if callable(attribute) else (lambda item: getattr(item, attribute))

    def _dict(self) -> dict[str, Any]:
        return {item.name: self._get(item) for item in self._registry if self._where is None or self._where(item)}

    def __getitem__(self, name: str) -> Any:
        return self._dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __repr__(self) -> str:
        return repr(self._dict())


def or_list(names: Sequence[str]) -> str:
    """``a, b, c or d``: names for a help text or a message."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


__all__ = ["Attribute", "Named", "Names", "Registry", "UnknownNameError", "or_list"]
