"""Planted-topic texts for the taxonomy tests: three topics with disjoint vocabularies, 30 texts each, fixed by a
seed, so a two-level k-means over their hashing-embedder vectors must put every topic in one level-1 node."""

from __future__ import annotations

import random

TOPICS = {
    "db": tuple(["sqlite", "cursor", "transaction", "commit", "rollback", "query", "index", "table", "schema", "migration"]),
    "http": tuple(["request", "response", "header", "cookie", "status", "redirect", "session", "url", "proxy", "websocket"]),
    "cli": tuple(["option", "argument", "command", "flag", "parser", "help", "prompt", "terminal", "shell", "completion"]),
}


def planted(per_topic: int = 30, words: int = 12, seed: int = 1) -> list[tuple[str, str]]:
    """``[(topic, text)]``: ``per_topic`` texts of ``words`` words drawn from each topic's vocabulary."""
    rng = random.Random(seed)
    return [(topic, " ".join(rng.choice(vocab) for _ in range(words)))
            for topic, vocab in TOPICS.items() for _ in range(per_topic)]
