"""Helpers."""


def normalize(name: str) -> str:
    """Task names are compared lower-case, without surrounding spaces."""
    return name.strip().lower()


async def gather(items):
    return [await i for i in items]
