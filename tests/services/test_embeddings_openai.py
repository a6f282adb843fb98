"""Embeddings from an OpenAI-compatible /v1/embeddings endpoint through the real openai SDK on an httpx2 mock
transport (no network, no key leaves the test): the request body, batching at the limits, usage -> ledger tokens
and cost, a failed call -> a ledger row and a typed error with earlier batches kept, a wrong vector count or
dimension refused, the key never stored, and the cache (a second run makes no calls)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import numpy as np
import pytest

from benchwright.core.embeddings import EmbeddingError
from benchwright.core.llm.openai_embeddings import EmbeddingLimits, estimate_tokens, plan_requests
from benchwright.db import Store
from benchwright.tui.services.embeddings import embed_texts, resolve_embedder

KEY = "sk-test-EMBED-0123456789abcdef"


class Server:
    """A scripted /v1/embeddings: each request's JSON body is kept; vectors are derived from the texts."""

    def __init__(self, dims: int = 8):
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.dims = dims
        self.fail_on: set[int] = set()  # 1-based request numbers answered with HTTP 400
        self.short_on: set[int] = set()  # ... answered with one vector too few
        self.usage = True

    def vector(self, text: str, dims: int) -> list[float]:
        rng = np.random.default_rng(sum(text.encode()))
        return [float(x) for x in rng.normal(size=dims)]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        n = len(self.bodies)
        if n in self.fail_on:
            return httpx2.Response(400, json={"error": {"message": "input too long", "type": "invalid_request"}},
                                   headers={"x-request-id": f"req_{n}"})
        dims = body.get("dimensions", self.dims)
        data = [{"object": "embedding", "index": i, "embedding": self.vector(t, dims)}
                for i, t in enumerate(body["input"])]
        if n in self.short_on:
            data = data[:-1]
        out = {"object": "list", "data": data, "model": body["model"]}
        if self.usage:
            out["usage"] = {"prompt_tokens": 10 * len(body["input"]), "total_tokens": 10 * len(body["input"])}
        return httpx2.Response(200, json=out, headers={"x-request-id": f"req_{n}"})


@pytest.fixture
def project(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    monkeypatch.setenv("EMBED_KEY", KEY)
    (tmp_path / "benchwright.toml").write_text(
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "EMBED_KEY"\n'
        "max_retries = 0\nconcurrency = 1\n"
        '[roles.embedder]\nprovider = "local"\nmodel = "qwen3-embedding"\nmax_inputs = 3\n'
        '[prices."qwen3-embedding"]\ninput = 0.5\n')
    store = Store.open(tmp_path / "p.db")
    yield store
    store.close()


def client(server: Server) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(server))


def calls(store: Store) -> list[tuple]:
    return store.db.conn.execute(
        "SELECT purpose, provider, requested_model, input_tokens, cost_usd, status, request_id, error, params_json "
        "FROM llm_calls ORDER BY id").fetchall()


TEXTS = [f"question number {i} about flask routing" for i in range(7)]


def test_request_body_batching_ledger_and_cache(project):
    server = Server()
    choice = resolve_embedder(project.path.parent)
    assert (choice.provider, choice.kind, choice.model, choice.dimensions) == ("local", "openai", "qwen3-embedding",
                                                                               None)
    batch = embed_texts(project, [*TEXTS, TEXTS[0]], choice, http_client=client(server))
    # max_inputs = 3: seven distinct texts go in requests of 3, 3, 1; the repeated text is embedded once
    assert [len(b["input"]) for b in server.bodies] == [3, 3, 1]
    assert server.bodies[0] == {"model": "qwen3-embedding", "input": TEXTS[:3], "encoding_format": "float"}
    assert "dimensions" not in server.bodies[0]  # sent only when asked for
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert batch.vectors.shape == (8, 8) and batch.dimensions == 8 and batch.model == "qwen3-embedding"
    assert np.allclose(np.linalg.norm(batch.vectors, axis=1), 1.0) and np.allclose(batch.vectors[0], batch.vectors[7])
    assert (batch.computed, batch.cached, batch.calls) == (7, 0, 3)
    assert batch.cost_usd == pytest.approx(70 * 0.5 / 1e6) and batch.cost_unknown == 0
    rows = calls(project)
    assert [r[:7] for r in rows] == [("embed", "local", "qwen3-embedding", 30, pytest.approx(30 * 0.5 / 1e6), "ok",
                                      "req_1"),
                                     ("embed", "local", "qwen3-embedding", 30, pytest.approx(30 * 0.5 / 1e6), "ok",
                                      "req_2"),
                                     ("embed", "local", "qwen3-embedding", 10, pytest.approx(10 * 0.5 / 1e6), "ok",
                                      "req_3")]
    linked = project.db.conn.execute("SELECT DISTINCT call_id FROM embeddings ORDER BY 1").fetchall()
    assert [r[0] for r in linked] == [1, 2, 3]  # each vector names the call that made it
    # second run: everything from the cache, no request, no ledger row
    again = embed_texts(project, TEXTS, choice, http_client=client(server))
    assert (again.computed, again.cached, again.calls) == (0, 7, 0) and len(server.bodies) == 3
    assert np.allclose(again.vectors, batch.vectors[:7]) and len(calls(project)) == 3
    # the key is in no stored row
    dump = "\n".join(project.db.conn.iterdump())
    assert KEY not in dump


def test_dimensions_are_sent_and_keyed(project):
    server = Server()
    choice = resolve_embedder(project.path.parent, "qwen3-embedding", 4)
    batch = embed_texts(project, TEXTS[:2], choice, http_client=client(server))
    assert server.bodies[0]["dimensions"] == 4 and batch.vectors.shape == (2, 4)
    assert json.loads(calls(project)[0][8])["dimensions"] == 4
    assert project.embedding_counts() == [("qwen3-embedding", 4, 2)]


def test_failed_call_is_recorded_and_earlier_batches_stay(project):
    server = Server()
    server.fail_on = {2}
    choice = resolve_embedder(project.path.parent)
    with pytest.raises(EmbeddingError, match=r"HTTP 400.*input too long.*ledger call 2") as info:
        embed_texts(project, TEXTS, choice, http_client=client(server))
    assert KEY not in str(info.value)
    rows = calls(project)
    assert [r[5] for r in rows] == ["ok", "error"]  # concurrency 1: the first failure stops the run
    assert "HTTP 400" in rows[1][7] and rows[1][6] == "req_2"
    assert project.embedding_counts() == [("qwen3-embedding", 8, 3)]  # the first batch is kept
    server.fail_on = set()
    rerun = embed_texts(project, TEXTS, choice, http_client=client(server))
    assert (rerun.cached, rerun.computed) == (3, 4)  # the rerun continues where it stopped


def test_wrong_vector_count_is_refused_and_not_cached(project):
    server = Server()
    server.short_on = {1}
    with pytest.raises(EmbeddingError, match="2 vectors for 3 texts"):
        embed_texts(project, TEXTS[:3], resolve_embedder(project.path.parent), http_client=client(server))
    assert [r[5] for r in calls(project)] == ["invalid"] and project.embedding_counts() == []


def test_wrong_dimension_is_refused(project):
    server = Server(dims=8)

    def ignore_dimensions(request):
        body = json.loads(request.content)
        body.pop("dimensions", None)
        return server(httpx2.Request("POST", request.url, json=body))

    choice = resolve_embedder(project.path.parent, None, 4)
    with pytest.raises(EmbeddingError, match="8 dimensions where 4 were expected"):
        embed_texts(project, TEXTS[:2], choice, http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(ignore_dimensions)))
    assert project.embedding_counts() == []


def test_missing_usage_means_unknown_cost(project):
    server = Server()
    server.usage = False
    batch = embed_texts(project, TEXTS[:2], resolve_embedder(project.path.parent), http_client=client(server))
    assert batch.cost_usd is None and batch.cost_unknown == 1 and calls(project)[0][4] is None


def test_over_long_input_is_named_before_any_call(project):
    server = Server()
    long = "x" * (3 * 8192 + 1)
    with pytest.raises(EmbeddingError, match=r"text 2 of 2 .*max_input_tokens \(8,192\).*nothing was sent"):
        embed_texts(project, ["short one", long], resolve_embedder(project.path.parent), http_client=client(server))
    assert server.bodies == [] and calls(project) == []


def test_plan_requests_keeps_the_token_budget():
    texts = ["a" * 30] * 10  # 10 tokens each by the estimate
    assert estimate_tokens("a" * 30) == 10 and estimate_tokens("a") == 1
    groups = plan_requests(texts, EmbeddingLimits(max_inputs=100, max_input_tokens=50, max_request_tokens=35))
    assert [len(g) for g in groups] == [3, 3, 3, 1] and [i for g in groups for i in g] == list(range(10))
    with pytest.raises(EmbeddingError, match="text 1 is empty"):
        plan_requests([" "], EmbeddingLimits())


def test_ada_on_openai_refuses_dimensions(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    store = Store.open(tmp_path / "p.db")
    choice = resolve_embedder(tmp_path, "openai:text-embedding-ada-002", 256)
    with pytest.raises(EmbeddingError, match="takes no dimensions"):
        embed_texts(store, ["a text to embed"], choice, http_client=client(Server()))
    store.close()


def test_called_from_inside_an_event_loop(project):
    import asyncio

    server = Server()

    async def inside():
        return embed_texts(project, TEXTS[:2], resolve_embedder(project.path.parent), http_client=client(server))

    batch = asyncio.run(inside())
    assert batch.vectors.shape == (2, 8) and len(server.bodies) == 1


def test_openai_default_limits_split_at_2048_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    (tmp_path / "benchwright.toml").write_text('[roles.embedder]\nprovider = "openai"\nmodel = "text-embedding-3-small"\n')
    store = Store.open(tmp_path / "p.db")
    server = Server(dims=4)
    batch = embed_texts(store, [f"text {i}" for i in range(2049)], resolve_embedder(tmp_path),
                        http_client=client(server))
    assert [len(b["input"]) for b in server.bodies] == [2048, 1] and batch.vectors.shape == (2049, 4)
    assert calls(store)[0][4] is None and batch.cost_unknown == 2  # no [prices] entry: cost unknown, never $0
    store.close()


def test_a_model_that_changes_its_own_dimensions_is_refused(project):
    server = Server(dims=8)
    choice = resolve_embedder(project.path.parent)
    embed_texts(project, TEXTS[:2], choice, http_client=client(server))
    server.dims = 6  # the server now answers with other vectors for the same model
    with pytest.raises(EmbeddingError, match="6 dimensions where 8 were expected"):
        embed_texts(project, TEXTS[:4], choice, http_client=client(server))
    assert [r[5] for r in calls(project)] == ["ok", "invalid"] and project.embedding_counts() == [
        ("qwen3-embedding", 8, 2)]
    assert "dimensions" not in server.bodies[-1]  # the model's own dimensions: not sent
