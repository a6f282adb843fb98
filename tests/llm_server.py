"""An in-test OpenAI-compatible Chat Completions (and Embeddings) server on loopback (standard library only).

Used by the CLI, resume and benchmark tests so the real ``openai`` SDK talks HTTP to something local::

    with LLMServer(delay_s=0.1) as server:
        base_url = server.base_url          # http://127.0.0.1:PORT/v1
        ...
        server.count                        # POST /v1/chat/completions received

Answers come from ``responder(request_body, n) -> Reply | str | dict`` (``n`` is the 1-based number of the
request) or from ``script``, a list consumed in order before the responder is asked. A :class:`Reply` can be a
normal completion, an HTTP error (429 with ``retry-after``, 500 ...), a body that is not JSON at all, or a hang
(the connection stays open until the server stops; use it with a short client timeout). The default responder
(:func:`default_answer`) answers every curation step with a valid output chosen by the JSON-Schema name the
request carries, so a step run against the server succeeds.

Every request body is kept in ``requests`` (parsed JSON), in arrival order. ``GET /stats`` returns the count
and the most requests handled at once; ``python tests/llm_server.py --delay S`` runs the server in its own
process (it prints the base URL on its first line). ``POST /v1/embeddings`` answers every input with
:func:`embedding_of` (bag of hashed words, unit length), for the ``embedder`` role.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VALID_CHECKLIST = {
    "items": [
        {"kind": "knowledge", "key_point": "Names the function that does the work.", "weight": 5,
         "rubric": [{"score": 0, "criterion": "Missing or wrong."}, {"score": 5, "criterion": "Named correctly."}]},
        {"kind": "knowledge", "key_point": "Explains why it is done that way.", "weight": 4,
         "rubric": [{"score": 0, "criterion": "Missing."}, {"score": 2, "criterion": "Partly."},
                    {"score": 4, "criterion": "Fully explained."}]},
        {"kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
         "rubric": [{"score": 0, "criterion": "Severe hallucination, or an incoherent, disorganized answer."},
                    {"score": 1, "criterion": "Clear, well-organized answer without severe hallucination."}]},
    ]
}
"""A checklist that satisfies RepoProbe §4.1 (weights 5 + 4 = 9, clarity 1)."""

_TAG = re.compile(r"<question>\n(.*?)\n</question>", re.S)


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: the assistant message text (a dict/list is sent as JSON text).
        status: HTTP status; not 200 sends an OpenAI-style error body with ``error_message``.
        headers: extra response headers (``{"retry-after": "0"}`` with a 429).
        raw_body: send these bytes as the body instead of a completion (e.g. broken JSON).
        hang: never answer; the handler waits until the server stops.
        delay_s: wait this long before answering (None: the server's ``delay_s``).
        refusal: send a refusal message instead of content.
        model: the model the answer claims (default: the requested one).
        tool_calls: native tool calls to send, each ``(name, arguments)``: ``message.tool_calls`` with ids
            ``call_1``... and finish reason ``tool_calls`` (as OpenAI's Chat Completions does).
    """

    content: Any = ""
    status: int = 200
    headers: dict = field(default_factory=dict)
    raw_body: bytes | None = None
    hang: bool = False
    delay_s: float | None = None
    refusal: str | None = None
    model: str | None = None
    error_message: str = "scripted error"
    tool_calls: list = field(default_factory=list)


def question_of(body: dict) -> str | None:
    """The question text between ``<question>`` tags in the request's first user message that has one (a
    repair turn repeats the conversation, so it names the same question), or None."""
    for m in body.get("messages") or []:
        if m.get("role") == "user":
            hit = _TAG.search(m.get("content") or "")
            if hit:
                return hit.group(1)
    return None


_PROMPT_SCHEMA = "It must conform to this JSON Schema:\n"
_NAMES_BY_KEYS = {
    ("category", "code_understanding_relevant", "rationale"): "classification",
    ("rationale", "relevant", "summary"): "link_summary",
    ("answer", "question"): "integrated_pair",
    ("answer", "changes", "question"): "refined_pair",
    ("answerable", "self_contained"): "verification",
    ("description", "label"): "taxonomy_label",
    ("items",): "checklist",
    ("mode", "rationale"): "failure_mode",
    ("clarity", "completeness", "correctness", "rated_answer", "reasoning", "relevance"): "swe_qa_pro_judgment",
    ("accuracy", "completeness", "specificity"): "code_qa_bench_judgment",
}


def prompt_schema(body: dict) -> dict | None:
    """The JSON Schema a prompt-mode request (``structured_output = "prompt"``) carries in its last user turn."""
    for m in reversed(body.get("messages") or []):
        text = m.get("content") or ""
        if m.get("role") == "user" and _PROMPT_SCHEMA in text:
            try:
                return json.loads(text.split(_PROMPT_SCHEMA, 1)[1])
            except ValueError:
                return None
    return None


def schema_name(body: dict) -> str | None:
    """The ``response_format.json_schema.name`` of a request; for a prompt-mode request the name its schema's
    keys imply; None for free text."""
    rf = body.get("response_format") or {}
    name = (rf.get("json_schema") or {}).get("name")
    if name is not None:
        return name
    schema = prompt_schema(body)
    if schema is None:
        return None
    keys = tuple(sorted((schema.get("properties") or {}).keys()))
    if keys == ("items",) and "item" in json.dumps(schema):
        return "checklist_judgment" if '"item"' in json.dumps(schema) else "checklist"
    return _NAMES_BY_KEYS.get(keys)


def default_answer(body: dict, n: int) -> Reply:
    """A valid answer for each curation step, by schema name (RepoProbe §3.2 outputs)."""
    name = schema_name(body)
    q = question_of(body) or "the question"
    if name == "classification":
        return Reply({"rationale": "About the code.", "code_understanding_relevant": True,
                      "category": "Implementation Details"})
    if name == "link_summary":
        return Reply({"rationale": "Describes the API.", "relevant": True, "summary": "The page explains it."})
    if name in ("integrated_pair",):
        return Reply({"question": q + " (with link context)", "answer": "Integrated answer."})
    if name == "refined_pair":
        return Reply({"question": "Refined: " + q, "answer": "Refined answer.", "changes": "Removed chatter."})
    if name == "taxonomy_label":
        return Reply({"label": f"Topic {n}: {q[:40]}".strip(), "description": "Questions about one area of the code."})
    if name == "verification":
        return Reply({"self_contained": {"rationale": "Stands alone.", "passed": True},
                      "answerable": {"rationale": "The code shows it.", "passed": True}})
    judged = judge_answer(body, n)
    if judged is not None:
        return judged
    return Reply(VALID_CHECKLIST)


_ITEM = re.compile(r"^Item (\d+) \([^;]*; allowed scores: ([0-9, ]+)\)", re.M)
_CANDIDATE = re.compile(r"Answer ([AB]) is the CANDIDATE")


def _user_text(body: dict) -> str:
    return "\n".join(m.get("content") or "" for m in body.get("messages") or [] if m.get("role") == "user")


def judge_answer(body: dict, n: int, *, invalid_every: int = 0) -> Reply | None:
    """Plausible judge output for the judges' schemas (checklist, SWE-QA-Pro, Code-QA-Bench, failure mode),
    free text for a direct answer; scores vary with the request number ``n``. With ``invalid_every`` = k,
    every k-th checklist judgment gives its first item a score that is not allowed (tests the repair path)."""
    name = schema_name(body)
    text = _user_text(body)
    if name == "checklist_judgment":
        items = []
        for m in _ITEM.finditer(text):
            allowed = [int(x) for x in m.group(2).replace(" ", "").split(",") if x]
            items.append({"item": int(m.group(1)), "rationale": f"Item {m.group(1)} checked against the answer.",
                          "score": allowed[(n + int(m.group(1))) % len(allowed)]})
        if invalid_every and items and n % invalid_every == 0:
            items[0]["score"] = 7.5
        return Reply({"items": items})
    if name in ("swe_qa_pro_judgment", "code_qa_bench_judgment"):
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or prompt_schema(body)
        props = (schema or {}).get("properties", {})
        out: dict[str, Any] = {}
        for key, spec in props.items():
            if key == "rated_answer":
                m = _CANDIDATE.search(text)
                out[key] = m.group(1) if m else "A"
                continue
            lo, hi = spec["properties"]["score"]["minimum"], spec["properties"]["score"]["maximum"]
            out[key] = {"rationale": f"{key} judged.", "score": lo + (n + len(key)) % (hi - lo + 1)}
        return Reply(out)
    if name == "failure_mode":
        return Reply({"rationale": "The answer proposes a change instead of explaining.", "mode": "edit-bias"})
    if name is None and "<question>" in text:
        return Reply("A direct answer, written without the repository.")
    return None


EMBEDDING_DIMENSIONS = 64
"""Dimensions of the server's embeddings when the request does not ask for others."""


def embedding_of(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic unit vector for ``text``: its lower-cased words hashed (SHA-256) into ``dimensions``
    buckets, so texts sharing words are close and unrelated ones far apart."""
    import hashlib
    import math

    v = [0.0] * dimensions
    for w in re.findall(r"\w+", text.lower()):
        v[int.from_bytes(hashlib.sha256(w.encode()).digest()[:4], "big") % dimensions] += 1.0
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = 1024  # the default listen backlog (5) refuses connections at concurrency 64
    daemon_threads = True


class LLMServer:
    """A threaded HTTP server speaking enough of ``POST /v1/chat/completions`` for the ``openai`` SDK.

    Args:
        delay_s: seconds every answer waits (unless the reply sets its own).
        responder: ``(body, n) -> Reply | str | dict``; default :func:`default_answer`.
        script: replies used in order for the first requests, before ``responder``.
    """

    def __init__(self, *, delay_s: float = 0.0, responder: Callable[[dict, int], Any] | None = None,
                 script: list | None = None):
        self.delay_s = delay_s
        self.responder = responder or default_answer
        self.script = list(script or [])
        self.requests: list[dict] = []
        self.embedding_requests: list[dict] = []
        """Bodies of ``POST /v1/embeddings`` requests (not counted in :attr:`count`)."""
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        """The port the server listens on (chosen by the OS)."""
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what ``base_url`` in benchwright.toml should say."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def count(self) -> int:
        """Chat-completion requests received so far."""
        with self._lock:
            return len(self.requests)

    def questions(self) -> list[str | None]:
        """The question of every request received, in arrival order (see :func:`question_of`)."""
        with self._lock:
            return [question_of(b) for b in self.requests]

    def start(self) -> LLMServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging handlers, stop serving and close the socket."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ handling
    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            self.requests.append(body)
            n = len(self.requests)
            scripted = self.script.pop(0) if self.script else None
        answer = scripted if scripted is not None else self.responder(body, n)
        if not isinstance(answer, Reply):
            answer = Reply(answer)
        return answer

    def _completion(self, body: dict, reply: Reply, n: int) -> bytes:
        content = reply.content
        if not isinstance(content, str):
            content = json.dumps(content)
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        message = {"role": "assistant", "content": None if reply.refusal else content, "refusal": reply.refusal}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(reply.tool_calls, 1)]
        doc = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": reply.model or body.get("model", "unknown"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(content.split()),
                      "total_tokens": prompt_words + len(content.split())},
        }
        return json.dumps(doc).encode()

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, status: int, payload: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                """``GET /stats``: ``{"count", "max_in_flight"}`` (for a server running in its own process)."""
                if self.path.rstrip("/") != "/stats":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                with server._lock:
                    doc = {"count": len(server.requests), "max_in_flight": server.max_in_flight}
                self._send(200, json.dumps(doc).encode())

            def _embeddings(self, raw: bytes) -> None:
                """``POST /v1/embeddings``: one vector per input (:func:`embedding_of`), usage in words."""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, b'{"error": {"message": "request body is not JSON"}}')
                    return
                inputs = body.get("input")
                inputs = [inputs] if isinstance(inputs, str) else inputs
                if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
                    self._send(400, b'{"error": {"message": "input must be a string or a list of strings"}}')
                    return
                dims = body.get("dimensions") or EMBEDDING_DIMENSIONS
                with server._lock:
                    server.embedding_requests.append(body)
                words = sum(len(t.split()) for t in inputs)
                doc = {"object": "list", "model": body.get("model", "unknown"),
                       "data": [{"object": "embedding", "index": i, "embedding": embedding_of(t, dims)}
                                for i, t in enumerate(inputs)],
                       "usage": {"prompt_tokens": words, "total_tokens": words}}
                self._send(200, json.dumps(doc).encode(), {"x-request-id": f"emb-{len(server.embedding_requests)}"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._embeddings(raw)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, b'{"error": {"message": "request body is not JSON"}}')
                    return
                reply = server._next_reply(body)
                n = server.count
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if reply.hang:
                        server._stop.wait()
                        return
                    delay = server.delay_s if reply.delay_s is None else reply.delay_s
                    if delay:
                        server._stop.wait(delay)
                    headers = {"x-request-id": f"req-{n}", **reply.headers}
                    if reply.raw_body is not None:
                        self._send(reply.status, reply.raw_body, headers)
                    elif reply.status != 200:
                        err = {"error": {"message": reply.error_message, "type": "scripted", "code": reply.status}}
                        self._send(reply.status, json.dumps(err).encode(), headers)
                    else:
                        self._send(200, server._completion(body, reply, n), headers)
                except (BrokenPipeError, ConnectionResetError):  # the client went away (killed, timed out)
                    pass
                finally:
                    with server._lock:
                        server.in_flight -= 1

        return Handler


def main(argv: list[str] | None = None) -> None:
    """``python tests/llm_server.py [--delay S]``: serve until killed, printing the base URL on the first line
    (to run the server in its own process, so it does not share the client's interpreter lock)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds every answer waits")
    ap.add_argument("--invalid-every", type=int, default=0,
                    help="every k-th checklist judgment gives a score that is not allowed")
    args = ap.parse_args(argv)
    responder = None
    if args.invalid_every:
        def responder(body: dict, n: int) -> Reply:
            return judge_answer(body, n, invalid_every=args.invalid_every) or default_answer(body, n)
    server = LLMServer(delay_s=args.delay, responder=responder)
    print(server.base_url, flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
        print(f"requests: {server.count}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
