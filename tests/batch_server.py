"""A loopback fake of Anthropic's Message Batches and OpenAI's Batch API (standard library only), issue 19.

It speaks the wire formats the official SDKs use, under one base URL (``http://127.0.0.1:PORT``; the OpenAI SDK
takes ``.../v1``):

- Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``, ``GET
  /v1/messages/batches/{id}/results`` (JSONL), ``POST /v1/messages/batches/{id}/cancel``, ``GET
  /v1/messages/batches`` (``after_id``, ``limit``; ``data``, ``has_more``, ``first_id``, ``last_id``), and the
  online ``POST /v1/messages``.
- OpenAI: ``POST /v1/files`` (multipart), ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``, ``POST
  /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/batches`` (``after``,
  ``limit``), and the online ``POST /v1/chat/completions`` and ``POST /v1/embeddings``.

Requests are answered with ``tests/llm_server.py``'s answers for our prompts (:func:`llm_server.default_answer`,
by schema name; an Anthropic body is read through :func:`openai_view`). A batch "runs" for ``polls`` retrievals,
then ends; its results come back shuffled. Knobs (constructor, command-line flags, or ``POST /control`` with a JSON
object of the same names, at any time): ``polls``; ``missing_every``, ``errored_every``, ``expired_every``,
``cancelled_every`` (every k-th request of a batch, counted from 1 in submission order, ends that way);
``missing``, ``errored``, ``expired``, ``cancelled`` (lists of ``custom_id``); ``fail_batches`` (OpenAI batches
end ``failed``, with ``errors``); ``shuffle`` (a seed, or null for submission order).

State lives in ``state_dir`` (one JSON file per batch, its lines beside it, uploaded and result files, a counters
file), so a client killed and restarted, or the server itself restarted on the same directory, finds its batches.
:attr:`BatchServer.submissions` counts batch creations (``GET /stats`` too: ``{"submissions", "online",
"batches"}``). ``python tests/batch_server.py --state DIR [--polls N]`` serves in its own process, printing the
base URL on its first line.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import threading
import time
from datetime import UTC, datetime
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import llm_server

KNOBS = ("polls", "missing_every", "errored_every", "expired_every", "cancelled_every", "missing", "errored",
         "expired", "cancelled", "fail_batches", "shuffle")


def _rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text") or (b.get("content") if isinstance(b.get("content"), str) else "") or ""
                     for b in content or [] if isinstance(b, dict))


def openai_view(body: dict) -> dict:
    """An Anthropic ``messages`` body as the Chat Completions body :func:`llm_server.default_answer` reads: the
    system prompt and text turns as messages, the ``output_config`` schema as a named ``response_format``."""
    messages = [{"role": "system", "content": body["system"]}] if isinstance(body.get("system"), str) else []
    messages += [{"role": m.get("role"), "content": _text_of(m.get("content"))} for m in body.get("messages") or []]
    view: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    schema = (((body.get("output_config") or {}).get("format") or {}).get("schema"))
    if isinstance(schema, dict):
        keys = tuple(sorted((schema.get("properties") or {}).keys()))
        text = json.dumps(schema)
        name = (("checklist_judgment" if '"item"' in text else "checklist") if keys == ("items",)
                else llm_server._NAMES_BY_KEYS.get(keys))
        view["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    return view


def _reply(body: dict, n: int) -> llm_server.Reply:
    answer = llm_server.default_answer(body, n)
    return answer if isinstance(answer, llm_server.Reply) else llm_server.Reply(answer)


def chat_completion(body: dict, n: int) -> dict:
    """The chat completion answering ``body`` (request number ``n``)."""
    return json.loads(llm_server.LLMServer._completion(None, body, _reply(body, n), n))  # type: ignore[arg-type]


def anthropic_message(body: dict, n: int) -> dict:
    """The Messages API answer to ``body`` (request number ``n``)."""
    reply = _reply(openai_view(body), n)
    content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    words = sum(len(_text_of(m.get("content")).split()) for m in body.get("messages") or [])
    return {"id": f"msg_{n:06d}", "type": "message", "role": "assistant", "model": reply.model or body.get("model"),
            "content": [{"type": "text", "text": content}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": words, "output_tokens": len(content.split()), "cache_read_input_tokens": 0,
                      "cache_creation_input_tokens": 0}}


def embeddings(body: dict) -> dict:
    """The embeddings answer to ``body`` (:func:`llm_server.embedding_of`)."""
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    dims = body.get("dimensions") or llm_server.EMBEDDING_DIMENSIONS
    words = sum(len(t.split()) for t in inputs)
    return {"object": "list", "model": body.get("model", "unknown"),
            "data": [{"object": "embedding", "index": i, "embedding": llm_server.embedding_of(t, dims)}
                     for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": words, "total_tokens": words}}


class BatchServer:
    """The fake (see the module docstring).

    Args:
        state_dir: where batches and files are kept (created if needed).
        polls: retrievals of a batch that report it running before it ends.
        port: the port to listen on (0: any free one; a restarted server takes its old port so that the client's
            cache keys, which hold the base URL, stay the same).
        knobs: any of :data:`KNOBS` (see the module docstring).
    """

    def __init__(self, state_dir: str | Path, *, polls: int = 1, port: int = 0, **knobs: Any):
        unknown = set(knobs) - set(KNOBS)
        if unknown:
            raise TypeError(f"unknown knobs {sorted(unknown)}")
        self.dir = Path(state_dir)
        for sub in ("batches", "files"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.knobs: dict[str, Any] = {"polls": polls, "missing_every": 0, "errored_every": 0, "expired_every": 0,
                                      "cancelled_every": 0, "missing": [], "errored": [], "expired": [],
                                      "cancelled": [], "fail_batches": False, "shuffle": 7}
        self.knobs.update(knobs)
        self._lock = threading.RLock()
        self._httpd = llm_server._HTTPServer(("127.0.0.1", port), self._handler_class())
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        """The port listened on."""
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's base URL; the OpenAI SDK's is this + ``/v1``)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> BatchServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (the state stays on disk)."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> BatchServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ state on disk
    def _counters(self) -> dict:
        p = self.dir / "counters.json"
        return json.loads(p.read_text()) if p.exists() else {"submissions": 0, "online": 0, "next": 0}

    def _bump(self, key: str) -> int:
        with self._lock:
            c = self._counters()
            c[key] = c.get(key, 0) + 1
            self._write(self.dir / "counters.json", c)
            return c[key]

    @staticmethod
    def _write(path: Path, doc: Any) -> None:
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{self._bump('next'):08d}"

    def _load(self, batch_id: str) -> dict | None:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", batch_id):
            return None
        p = self.dir / "batches" / f"{batch_id}.json"
        return json.loads(p.read_text()) if p.exists() else None

    def _save(self, b: dict) -> None:
        self._write(self.dir / "batches" / f"{b['id']}.json", b)

    def _save_lines(self, b: dict, lines: list[dict]) -> None:
        """A batch's request lines, written once (the state file, rewritten at every poll, stays small)."""
        self._write(self.dir / "batches" / f"{b['id']}.lines", lines)

    def _lines(self, b: dict) -> list[dict]:
        return json.loads((self.dir / "batches" / f"{b['id']}.lines").read_text())

    def _all(self, provider: str) -> list[dict]:
        docs = [json.loads(p.read_text()) for p in (self.dir / "batches").glob("*.json")]
        return sorted((d for d in docs if d["provider"] == provider), key=lambda d: (d["created"], d["id"]),
                      reverse=True)

    @property
    def submissions(self) -> int:
        """Batches created so far (both providers), over every run on this state directory."""
        with self._lock:
            return self._counters().get("submissions", 0)

    @property
    def online(self) -> int:
        """Online requests answered (``/v1/messages``, ``/v1/chat/completions``)."""
        with self._lock:
            return self._counters().get("online", 0)

    def batches(self) -> list[dict]:
        """Every batch's state (newest first)."""
        with self._lock:
            return self._all("anthropic") + self._all("openai")

    # ------------------------------------------------------------------ outcomes
    def _kind(self, custom_id: str, i: int, cancelled: bool) -> str:
        k = self.knobs
        for kind in ("missing", "errored", "expired", "cancelled"):
            every = k.get(f"{kind}_every") or 0
            if custom_id in (k.get(kind) or ()) or (every and i % every == 0):
                return kind
        return "cancelled" if cancelled else "succeeded"

    def _finish(self, b: dict) -> None:
        """Decide every request's outcome once the batch ends (kept in its state, so results never change)."""
        if b.get("outcomes") is not None:
            return
        outcomes = []
        for i, line in enumerate(self._lines(b), 1):
            outcomes.append([line["custom_id"], self._kind(line["custom_id"], i, b["cancelled"])])
        seed = self.knobs.get("shuffle")
        if seed is not None:
            random.Random(seed).shuffle(outcomes)
        b["outcomes"] = outcomes
        b["ended_at"] = time.time()
        if b["provider"] == "openai":
            self._openai_files(b)

    def _poll(self, b: dict) -> dict:
        b["polls"] += 1
        if not b.get("failed") and (b["cancelled"] or b["polls"] > self.knobs["polls"]):
            self._finish(b)
        self._save(b)
        return b

    # ------------------------------------------------------------------ Anthropic
    def _anthropic_doc(self, b: dict) -> dict:
        ended = b.get("outcomes") is not None
        counts = {"processing": 0 if ended else b["count"], "succeeded": 0, "errored": 0, "canceled": 0,
                  "expired": 0}
        if ended:
            names = {"succeeded": "succeeded", "errored": "errored", "cancelled": "canceled", "expired": "expired",
                     "missing": "errored"}
            for _, kind in b["outcomes"]:
                counts[names[kind]] += 1
        status = "ended" if ended else ("canceling" if b["cancelled"] else "in_progress")
        return {"id": b["id"], "type": "message_batch", "processing_status": status, "request_counts": counts,
                "created_at": _rfc3339(b["created"]), "expires_at": _rfc3339(b["created"] + 86400),
                "ended_at": _rfc3339(b["ended_at"]) if ended else None, "archived_at": None,
                "cancel_initiated_at": _rfc3339(b["created"]) if b["cancelled"] else None,
                "results_url": f"{self.base_url}/v1/messages/batches/{b['id']}/results" if ended else None}

    def _anthropic_results(self, b: dict) -> bytes:
        by_id = {ln["custom_id"]: (i, ln) for i, ln in enumerate(self._lines(b), 1)}
        out = []
        for cid, kind in b["outcomes"]:
            i, ln = by_id[cid]
            if kind == "missing":
                continue
            if kind == "succeeded":
                result: dict = {"type": "succeeded", "message": anthropic_message(ln["params"], i)}
            elif kind == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "invalid_request_error", "message": f"scripted error for request {i}"}}}
            else:
                result = {"type": "canceled" if kind == "cancelled" else "expired"}
            out.append(json.dumps({"custom_id": cid, "result": result}))
        return ("\n".join(out) + "\n").encode() if out else b""

    # ------------------------------------------------------------------ OpenAI
    def _openai_doc(self, b: dict) -> dict:
        ended = b.get("outcomes") is not None
        if b.get("failed"):
            status = "failed"
        elif ended:
            status = "cancelled" if b["cancelled"] else "completed"
        else:
            status = "cancelling" if b["cancelled"] else ("validating" if b["polls"] == 0 else "in_progress")
        done = [k for _, k in b.get("outcomes") or []]
        counts = {"total": b["count"], "completed": done.count("succeeded"),
                  "failed": sum(1 for k in done if k in ("errored", "expired", "cancelled"))}
        return {"id": b["id"], "object": "batch", "endpoint": b["endpoint"], "errors": b.get("errors"),
                "input_file_id": b["input_file_id"], "completion_window": "24h", "status": status,
                "output_file_id": b.get("output_file_id"), "error_file_id": b.get("error_file_id"),
                "created_at": int(b["created"]), "in_progress_at": None, "expires_at": int(b["created"]) + 86400,
                "completed_at": int(b["ended_at"]) if ended else None, "failed_at": None, "expired_at": None,
                "request_counts": counts, "metadata": b.get("metadata")}

    def _openai_files(self, b: dict) -> None:
        by_id = {ln["custom_id"]: (i, ln) for i, ln in enumerate(self._lines(b), 1)}
        ok, bad = [], []
        for cid, kind in b["outcomes"]:
            i, ln = by_id[cid]
            rid = f"batch_req_{b['id']}_{i}"
            if kind == "missing":
                continue
            if kind == "succeeded":
                body = (embeddings(ln["body"]) if ln.get("url") == "/v1/embeddings"
                        else chat_completion(ln["body"], i))
                ok.append({"id": rid, "custom_id": cid, "error": None,
                           "response": {"status_code": 200, "request_id": f"req_{b['id']}_{i}", "body": body}})
            elif kind == "errored":
                bad.append({"id": rid, "custom_id": cid, "error": None, "response": {
                    "status_code": 400, "request_id": f"req_{b['id']}_{i}",
                    "body": {"error": {"message": f"scripted error for request {i}", "type": "invalid_request_error",
                                       "code": None}}}})
            else:
                code = "batch_expired" if kind == "expired" else "batch_cancelled"
                bad.append({"id": rid, "custom_id": cid, "response": None,
                            "error": {"code": code, "message": f"request {i}: {code}"}})
        for lines, key in ((ok, "output_file_id"), (bad, "error_file_id")):
            if lines:
                fid = self._new_id("file-out")
                (self.dir / "files" / f"{fid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
                self._write(self.dir / "files" / f"{fid}.json",
                            {"id": fid, "filename": f"{b['id']}_{key}.jsonl", "purpose": "batch_output"})
                b[key] = fid

    def _upload(self, headers: Any, raw: bytes) -> dict:
        msg = BytesParser(policy=policy.default).parsebytes(b"Content-Type: " + headers.get("Content-Type", "").encode() + b"\r\n\r\n"
                                       + raw)
        fields: dict[str, Any] = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True))  # type: ignore[union-attr]
        filename, data = fields.get("file", (None, b""))
        purpose = (fields.get("purpose", (None, b""))[1] or b"").decode()
        fid = self._new_id("file-")
        (self.dir / "files" / f"{fid}.jsonl").write_bytes(data or b"")
        meta = {"id": fid, "object": "file", "bytes": len(data or b""), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}
        self._write(self.dir / "files" / f"{fid}.json", meta)
        return meta

    def _create_openai(self, body: dict) -> tuple[int, dict]:
        fid = str(body.get("input_file_id") or "")
        path = self.dir / "files" / f"{fid}.jsonl"
        if not re.fullmatch(r"[A-Za-z0-9_-]+", fid) or not path.exists():
            return 404, {"error": {"message": f"No such File object: {fid}", "type": "invalid_request_error"}}
        meta = json.loads((self.dir / "files" / f"{fid}.json").read_text())
        if meta.get("purpose") != "batch":
            return 400, {"error": {"message": "the input file's purpose must be batch"}}
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        errors = []
        seen: set[str] = set()
        for i, ln in enumerate(lines, 1):
            if ln.get("url") != body.get("endpoint") or ln.get("method") != "POST":
                errors.append({"code": "invalid_url", "line": i, "message": "url or method does not match"})
            if ln.get("custom_id") in seen:
                errors.append({"code": "duplicate_custom_id", "line": i, "message": "duplicate custom_id"})
            seen.add(ln.get("custom_id"))
        if self.knobs.get("fail_batches"):
            errors.append({"code": "scripted_failure", "line": None, "message": "the batch was made to fail"})
        self._bump("submissions")
        b = {"id": self._new_id("batch_"), "provider": "openai", "created": time.time(), "count": len(lines), "polls": 0,
             "cancelled": False, "endpoint": body.get("endpoint"), "input_file_id": fid,
             "metadata": body.get("metadata"), "outcomes": None}
        if errors:
            b["failed"] = True
            b["errors"] = {"object": "list", "data": errors}
        self._save_lines(b, lines)
        self._save(b)
        return 200, self._openai_doc(b)

    # ------------------------------------------------------------------ HTTP
    def _route(self, method: str, path: str, query: dict, headers: Any, raw: bytes) -> tuple[int, Any, str]:
        """``(status, JSON document or bytes, content type)`` of one request."""
        def body() -> dict:
            return json.loads(raw or b"{}")

        p = path.rstrip("/")
        if method == "GET" and p == "/stats":
            return 200, {"submissions": self.submissions, "online": self.online,
                         "batches": len(self.batches())}, "application/json"
        if method == "POST" and p == "/control":
            self.knobs.update({k: v for k, v in body().items() if k in KNOBS})
            return 200, self.knobs, "application/json"
        if method == "POST" and p == "/v1/messages":
            return 200, anthropic_message(body(), self._bump("online")), "application/json"
        if method == "POST" and p == "/v1/chat/completions":
            return 200, chat_completion(body(), self._bump("online")), "application/json"
        if method == "POST" and p == "/v1/embeddings":
            return 200, embeddings(body()), "application/json"
        # Anthropic
        if p == "/v1/messages/batches":
            if method == "POST":
                requests = body().get("requests") or []
                ids = [r.get("custom_id") for r in requests]
                if not requests or len(set(ids)) != len(ids):
                    return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": "requests: empty or duplicate custom_id"}}, \
                        "application/json"
                self._bump("submissions")
                b = {"id": self._new_id("msgbatch_"), "provider": "anthropic", "created": time.time(),
                     "count": len(requests), "polls": 0, "cancelled": False, "outcomes": None}
                self._save_lines(b, requests)
                self._save(b)
                return 200, self._anthropic_doc(b), "application/json"
            docs = [self._anthropic_doc(b) for b in self._all("anthropic")]
            after = (query.get("after_id") or [None])[0]
            if after is not None:
                idx = next((i for i, d in enumerate(docs) if d["id"] == after), len(docs) - 1)
                docs = docs[idx + 1:]
            limit = int((query.get("limit") or ["20"])[0])
            page = docs[:limit]
            return 200, {"data": page, "has_more": len(docs) > limit, "first_id": page[0]["id"] if page else None,
                         "last_id": page[-1]["id"] if page else None}, "application/json"
        m = re.fullmatch(r"/v1/messages/batches/([^/]+)(/results|/cancel)?", p)
        if m:
            b = self._load(m.group(1))
            if b is None or b["provider"] != "anthropic":
                return 404, {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}, \
                    "application/json"
            if m.group(2) == "/results":
                if b.get("outcomes") is None:
                    return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": "batch still processing"}}, "application/json"
                return 200, self._anthropic_results(b), "application/binary"
            if m.group(2) == "/cancel" and method == "POST":
                if b.get("outcomes") is None:
                    b["cancelled"] = True
                    self._save(b)
                return 200, self._anthropic_doc(b), "application/json"
            return 200, self._anthropic_doc(self._poll(b)), "application/json"
        # OpenAI
        if p == "/v1/files" and method == "POST":
            return 200, self._upload(headers, raw), "application/json"
        m = re.fullmatch(r"/v1/files/([A-Za-z0-9_-]+)(/content)?", p)
        if m:
            fpath = self.dir / "files" / f"{m.group(1)}.jsonl"
            if not fpath.exists():
                return 404, {"error": {"message": "No such File object"}}, "application/json"
            if method == "DELETE":
                fpath.unlink()
                return 200, {"id": m.group(1), "object": "file", "deleted": True}, "application/json"
            if m.group(2):
                return 200, fpath.read_bytes(), "application/octet-stream"
            return 200, json.loads((self.dir / "files" / f"{m.group(1)}.json").read_text()), "application/json"
        if p == "/v1/batches":
            if method == "POST":
                status, doc = self._create_openai(body())
                return status, doc, "application/json"
            docs = [self._openai_doc(b) for b in self._all("openai")]
            after = (query.get("after") or [None])[0]
            if after is not None:
                idx = next((i for i, d in enumerate(docs) if d["id"] == after), len(docs) - 1)
                docs = docs[idx + 1:]
            limit = int((query.get("limit") or ["20"])[0])
            page = docs[:limit]
            return 200, {"object": "list", "data": page, "has_more": len(docs) > limit,
                         "first_id": page[0]["id"] if page else None,
                         "last_id": page[-1]["id"] if page else None}, "application/json"
        m = re.fullmatch(r"/v1/batches/([^/]+)(/cancel)?", p)
        if m:
            b = self._load(m.group(1))
            if b is None or b["provider"] != "openai":
                return 404, {"error": {"message": "No such Batch object", "type": "invalid_request_error"}}, \
                    "application/json"
            if m.group(2) and method == "POST":
                if b.get("outcomes") is None and not b.get("failed"):
                    b["cancelled"] = True
                    self._save(b)
                return 200, self._openai_doc(b), "application/json"
            return 200, self._openai_doc(self._poll(b)), "application/json"
        return 404, {"error": {"message": f"not found: {method} {path}"}}, "application/json"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                url = urlsplit(self.path)
                try:
                    with server._lock:
                        status, doc, ctype = server._route(method, url.path, parse_qs(url.query), self.headers, raw)
                except (ValueError, KeyError) as e:
                    status, doc, ctype = 400, {"error": {"message": f"bad request: {e}"}}, "application/json"
                except Exception as e:  # a bug here: answer 500 with the reason instead of hanging up
                    status, doc, ctype = 500, {"error": {"message": f"{type(e).__name__}: {e}"}}, "application/json"
                payload = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("request-id", f"req-{time.monotonic_ns()}")
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client went away (killed)
                    pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        return Handler


def main(argv: list[str] | None = None) -> None:
    """``python tests/batch_server.py --state DIR [--polls N] [--missing-every K] ...``: serve until killed, the
    base URL on the first line of output."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--state", required=True, help="directory holding the batches (kept across restarts)")
    ap.add_argument("--polls", type=int, default=1, help="retrievals a batch reports running before it ends")
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: any free one)")
    for kind in ("missing", "errored", "expired", "cancelled"):
        ap.add_argument(f"--{kind}-every", type=int, default=0, help=f"every k-th request of a batch is {kind}")
    ap.add_argument("--fail-batches", action="store_true", help="OpenAI batches end failed")
    args = ap.parse_args(argv)
    server = BatchServer(args.state, polls=args.polls, port=args.port, missing_every=args.missing_every,
                         errored_every=args.errored_every, expired_every=args.expired_every,
                         cancelled_every=args.cancelled_every, fail_batches=args.fail_batches)
    print(server.base_url, flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
        print(f"submissions: {server.submissions}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
