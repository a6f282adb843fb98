"""Text embeddings for SWE-QA-Pro's data methods (§2.1 taxonomy, §2.3 semantic dedup): the vectors, their cache
key, and the built-in embedders that work offline.

Vectors are ``numpy.ndarray`` of shape ``(n, dimensions)``, dtype float32, each row L2-normalised (so a dot
product is the cosine similarity). The cache key of a vector is (SHA-256 of the UTF-8 text, model, dimensions)
(:func:`text_sha256`); the store keeps it (``embeddings`` table, ``db/embeddings.py``).

Built-in embedders (provider kind ``builtin``, no network, no download):

- ``wordllama-l2-supercat`` (the default of the ``embedder`` role): WordLlama's token-embedding model, whose
  weights (256 dimensions, Matryoshka: 64 and 128 are truncations) ship inside the ``wordllama`` wheel. It is
  loaded from the files in the wheel directly: ``WordLlama.load`` looks for the tokenizer in a folder the wheel
  does not have and would try to download it.
- ``hashing``: a normalised bag of word unigrams and bigrams hashed into ``dimensions`` buckets (scikit-learn's
  ``HashingVectorizer``); deterministic and fast, for tests and for a first look without a model.

The paper embeds with Qwen3-8B-Embedding; any OpenAI-compatible ``/v1/embeddings`` endpoint serving it works
through the ``embedder`` role (docs/data-methods.md).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .errors import BenchwrightError

DEFAULT_EMBEDDER_MODEL = "wordllama-l2-supercat"
"""The ``embedder`` role's model when none is configured (provider ``builtin``)."""

BUILTIN_PROVIDER = "builtin"
"""The provider name (and kind) of the built-in embedders."""


class EmbeddingError(BenchwrightError):
    """An embedder cannot be loaded or used (unknown model, unsupported dimensions, a provider's error)."""


def text_sha256(text: str) -> str:
    """Hex SHA-256 of ``text`` as UTF-8 (the text part of an embedding's cache key)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (n, d) as float32 with every row scaled to unit L2 norm (an all-zero row stays zero)."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise EmbeddingError(f"expected a 2-D array of vectors, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (m / norms).astype(np.float32, copy=False)


def pack_vector(vector: np.ndarray) -> bytes:
    """One vector (d,) as float32 little-endian bytes (``4 * d`` bytes), the ``embeddings.vector`` column."""
    return np.asarray(vector, dtype="<f4").tobytes()


def unpack_vectors(blobs: Sequence[bytes], dimensions: int) -> np.ndarray:
    """Blobs written by :func:`pack_vector` as an ``(len(blobs), dimensions)`` float32 array.

    Raises:
        EmbeddingError: a blob whose length is not ``4 * dimensions``.
    """
    out = np.empty((len(blobs), dimensions), dtype=np.float32)
    for i, b in enumerate(blobs):
        if len(b) != 4 * dimensions:
            raise EmbeddingError(f"stored vector {i} has {len(b)} bytes, expected {4 * dimensions}")
        out[i] = np.frombuffer(b, dtype="<f4")
    return out


class Embedder(Protocol):
    """A local (synchronous) embedder: ``embed(texts)`` returns their vectors, ``(len(texts), dimensions)``
    float32, rows L2-normalised. ``model`` and ``dimensions`` are the cache key's model and dimensions."""

    model: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class HashingEmbedder:
    """Word unigrams and bigrams hashed into ``dimensions`` buckets, L2-normalised (scikit-learn
    ``HashingVectorizer``, ``alternate_sign=False``). Deterministic across runs and machines."""

    model = "hashing"

    def __init__(self, dimensions: int = 256):
        if not 8 <= dimensions <= 65536:
            raise EmbeddingError(f"the hashing embedder takes 8 to 65536 dimensions, not {dimensions}")
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from sklearn.feature_extraction.text import HashingVectorizer

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vec = HashingVectorizer(n_features=self.dimensions, alternate_sign=False, norm="l2", ngram_range=(1, 2),
                                lowercase=True)
        return normalize_rows(vec.transform(list(texts)).toarray())


class WordLlamaEmbedder:
    """WordLlama ``l2_supercat`` (256 dimensions; 64 or 128 by Matryoshka truncation), from the weights and the
    tokenizer inside the ``wordllama`` wheel: nothing is downloaded. The model is loaded once per process."""

    model = DEFAULT_EMBEDDER_MODEL
    DIMENSIONS = (64, 128, 256)
    _lock = threading.Lock()
    _loaded: dict[int, object] = {}

    def __init__(self, dimensions: int = 256):
        if dimensions not in self.DIMENSIONS:
            raise EmbeddingError(f"{self.model} has {', '.join(map(str, self.DIMENSIONS))} dimensions, "
                                 f"not {dimensions}")
        self.dimensions = dimensions

    def _model(self):
        with self._lock:
            if self.dimensions not in self._loaded:
                self._loaded[self.dimensions] = _load_wordllama(self.dimensions)
            return self._loaded[self.dimensions]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._model().embed(list(texts), norm=False, return_np=True)
        return normalize_rows(np.asarray(vectors).reshape(len(texts), self.dimensions))


def _load_wordllama(dimensions: int):
    try:
        from pathlib import Path

        import wordllama
        from safetensors import safe_open
        from wordllama.inference import WordLlamaInference
        from wordllama.wordllama import WordLlama
    except ImportError as e:  # pragma: no cover - a dependency of the package
        raise EmbeddingError(f"the built-in embedder needs the wordllama package ({e})") from None
    root = Path(wordllama.__file__).parent
    weights = root / "weights" / "l2_supercat_256.safetensors"
    tokenizer_file = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
    for f in (weights, tokenizer_file):
        if not f.is_file():
            raise EmbeddingError(f"the wordllama wheel has no {f.name} (at {f}); reinstall wordllama")
    tokenizer = WordLlama.load_tokenizer(tokenizer_file)
    with safe_open(str(weights), framework="np", device="cpu") as fh:
        embedding = fh.get_tensor("embedding.weight")
    if dimensions < embedding.shape[1]:
        embedding = embedding[:, :dimensions]
    return WordLlamaInference(embedding, tokenizer, binary=False)


BUILTIN_EMBEDDERS = {"wordllama-l2-supercat": WordLlamaEmbedder, "hashing": HashingEmbedder}
"""Built-in embedders by model name (provider ``builtin``)."""

BUILTIN_DEFAULT_DIMENSIONS = {"wordllama-l2-supercat": 256, "hashing": 256}


def builtin_embedder(model: str, dimensions: int | None = None) -> Embedder:
    """The built-in embedder called ``model`` (:data:`BUILTIN_EMBEDDERS`) at ``dimensions`` (its default when
    None).

    Raises:
        EmbeddingError: an unknown model or unsupported dimensions.
    """
    cls = BUILTIN_EMBEDDERS.get(model)
    if cls is None:
        raise EmbeddingError(f"no built-in embedder {model!r}; built-in embedders are "
                             f"{', '.join(BUILTIN_EMBEDDERS)}")
    return cls(dimensions or BUILTIN_DEFAULT_DIMENSIONS[model])


SIMILARITY_TOLERANCE = 1e-5
"""Rounding slack of :func:`similar_pairs`' comparison with its threshold (float32 dot products of unit rows)."""


@dataclass(frozen=True)
class SimilarPair:
    """Two rows ``i < j`` of a vector matrix and their cosine similarity ``score`` in [-1, 1]."""

    i: int
    j: int
    score: float


class SimilarityLimitError(BenchwrightError):
    """More pairs reached the similarity threshold than the caller allows (:func:`similar_pairs` ``limit``)."""


def similar_pairs(vectors: np.ndarray, threshold: float, *, block: int = 2048,
                  limit: int | None = None) -> list[SimilarPair]:
    """Every pair of rows of ``vectors`` (n, d; rows L2-normalised) with cosine similarity >= ``threshold``,
    ``i < j``, ordered by ``(i, j)``. Computed block by block (``block`` rows at a time, each against the rows
    from its own first one on: the upper triangle only), so memory is ``O(block * n)`` and never ``O(n^2)``.
    A similarity within :data:`SIMILARITY_TOLERANCE` under ``threshold`` counts as reaching it: float32 rounding
    puts the cosine of two equal unit vectors at 0.9999994 as often as at 1.0, and equal texts are duplicates at
    any threshold, ``--threshold 1`` included.

    Raises:
        SimilarityLimitError: more than ``limit`` pairs reach the threshold (checked block by block, before they
            are collected: a threshold far too low for the texts would otherwise fill the memory).
    """
    n = vectors.shape[0]
    out: list[SimilarPair] = []
    v = np.asarray(vectors, dtype=np.float32)
    for start in range(0, n, block):
        sims = v[start:start + block] @ v[start:].T
        mask = sims >= threshold - SIMILARITY_TOLERANCE
        np.fill_diagonal(mask, False)  # row r of the block is column r of v[start:]: a text with itself
        mask = np.triu(mask)
        if limit is not None and len(out) + int(mask.sum()) > limit:
            raise SimilarityLimitError(f"more than {limit:,} pairs of texts have a cosine similarity of at least "
                                       f"{threshold:g}")
        rows, cols = np.nonzero(mask)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if c > r:
                out.append(SimilarPair(start + r, start + c, float(sims[r, c])))
    out.sort(key=lambda p: (p.i, p.j))
    return out
