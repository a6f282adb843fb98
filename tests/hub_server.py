"""A fake Hugging Face Hub on loopback (standard library only) for ``releases push`` tests (issue 20 item 4).

It speaks the routes huggingface_hub 2.4 calls to create a dataset repository and commit files over the LFS path
(set ``huggingface_hub.constants.HF_HUB_DISABLE_XET = True``: Xet storage is not faked)::

    POST /api/repos/create                                  {"name", "organization", "type", "visibility"?}
    GET  /api/datasets/ORG/NAME                             repo_info: {"id", "private"} as the fake holds it
    POST /api/datasets/ORG/NAME/branch/BRANCH               create a branch (409 when it exists)
    POST /api/validate-yaml                                 the README's metadata (parsed and kept)
    POST /api/datasets/ORG/NAME/preupload/REV               upload mode per file: lfs for .parquet, else regular
    POST /datasets/ORG/NAME.git/info/lfs/objects/batch      basic transfer: upload and verify actions (none for
                                                            an object it holds already, as the Hub does)
    PUT  /lfs/OID                                           the object's bytes (sha256 checked)
    POST /lfs/verify                                        {"oid", "size"}
    POST /api/datasets/ORG/NAME/commit/REV                  NDJSON: header, file (base64), lfsFile (oid)

    with FakeHub(tokens={"hf_good"}, fail_commits=1) as hub:
        HfApi(endpoint=hub.url, token="hf_good") ...
        hub.calls          # [(method, path), ...] in arrival order
        hub.repos          # {"ORG/NAME": {"private": bool, "branches": {"main": {path: bytes}}, "commits": [...]}}

A request whose ``Authorization: Bearer`` token is not in ``tokens`` gets 401 (as the Hub answers a bad token).
``fail_commits`` commits are answered 500 before one goes through; ``drop_commits`` commits have their connection
closed with no answer, and ``drop_uploads`` LFS uploads likewise. ``authorizations`` counts the Authorization headers seen (tests check the token was sent
only there).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeHub:
    """The server (a context manager): ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self, tokens=("hf_good",), fail_commits: int = 0, drop_commits: int = 0, drop_uploads: int = 0):
        self.tokens = set(tokens)
        self.drop_uploads = drop_uploads
        self.fail_commits = fail_commits
        self.drop_commits = drop_commits
        self.calls: list[tuple[str, str]] = []
        self.repos: dict[str, dict] = {}
        self.lfs: dict[str, bytes] = {}
        self.metadata: list[str] = []
        self.created: list[dict] = []
        self.commit_attempts = 0
        self.authorizations: list[str] = []
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def files(self, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        """The files of ``branch`` of ``repo_id`` as its last commit left them."""
        return dict(self.repos[repo_id]["branches"][branch])


def _repo_and_rest(path: str, kind: str) -> tuple[str, str, str] | None:
    m = re.match(rf"^/api/datasets/([^/]+/[^/]+)/{kind}/(.+)$", path)
    return (m.group(1), kind, m.group(2)) if m else None


def _handler(hub: FakeHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _reply(self, status: int, body: dict | list) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _authorized(self) -> bool:
            auth = self.headers.get("Authorization") or ""
            if auth:
                hub.authorizations.append(auth)
            if auth.removeprefix("Bearer ") in hub.tokens:
                return True
            self._reply(401, {"error": "Invalid credentials in Authorization header"})
            return False

        def do_PUT(self) -> None:
            path = self.path.split("?")[0]
            with hub.lock:
                hub.calls.append(("PUT", path))
            data = self._body()
            with hub.lock:
                drop, hub.drop_uploads = hub.drop_uploads > 0, max(0, hub.drop_uploads - 1)
            if drop:  # the body was read, then the connection goes: an upload cut off before its answer
                self.close_connection = True
                self.connection.close()
                return
            oid = path.removeprefix("/lfs/")
            if hashlib.sha256(data).hexdigest() != oid:
                self._reply(400, {"error": "sha256 mismatch"})
                return
            hub.lfs[oid] = data
            self._reply(200, {})

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            with hub.lock:
                hub.calls.append(("GET", path))
            if not self._authorized():
                return
            m = re.match(r"^/api/datasets/([^/]+/[^/]+)$", path)
            if m is None or m[1] not in hub.repos:
                self._reply(404, {"error": f"no route {path}" if m is None else "Repository not found"})
                return
            self._reply(200, {"id": m[1], "private": hub.repos[m[1]]["private"]})

        def do_POST(self) -> None:
            path = self.path.split("?")[0]
            with hub.lock:
                hub.calls.append(("POST", path))
            body = self._body()
            if not self._authorized():
                return
            if path == "/api/repos/create":
                self._create(json.loads(body))
            elif path == "/api/validate-yaml":
                hub.metadata.append(json.loads(body)["content"])
                self._reply(200, {"errors": [], "warnings": []})
            elif path == "/lfs/verify":
                d = json.loads(body)
                self._reply(200 if d["oid"] in hub.lfs else 404, {})
            elif path.endswith(".git/info/lfs/objects/batch"):
                self._batch(json.loads(body))
            elif (m := _repo_and_rest(path, "branch")) is not None:
                self._branch(m[0], m[2])
            elif (m := _repo_and_rest(path, "preupload")) is not None:
                files = json.loads(body)["files"]
                self._reply(200, {"files": [{"path": f["path"], "shouldIgnore": False,
                                             "uploadMode": "lfs" if f["path"].endswith(".parquet") else "regular"}
                                            for f in files]})
            elif (m := _repo_and_rest(path, "commit")) is not None:
                self._commit(m[0], m[2], body)
            else:
                self._reply(404, {"error": f"no route {path}"})

        def _create(self, d: dict) -> None:
            repo_id = f"{d['organization']}/{d['name']}"
            hub.created.append(d)
            if repo_id in hub.repos:
                self._reply(409, {"error": "You already created this dataset repo",
                                  "url": f"{hub.url}/datasets/{repo_id}"})
                return
            hub.repos[repo_id] = {"private": d.get("visibility") == "private", "branches": {"main": {}},
                                  "commits": []}
            self._reply(200, {"url": f"{hub.url}/datasets/{repo_id}", "name": repo_id})

        def _branch(self, repo_id: str, branch: str) -> None:
            branches = hub.repos[repo_id]["branches"]
            if branch in branches:
                self._reply(409, {"error": "Reference already exists"})
                return
            branches[branch] = dict(branches["main"])
            self._reply(200, {})

        def _batch(self, d: dict) -> None:
            objects = [{"oid": o["oid"], "size": o["size"], "authenticated": True}
                       | ({} if o["oid"] in hub.lfs else  # stored already: no actions, nothing to send again
                          {"actions": {"upload": {"href": f"{hub.url}/lfs/{o['oid']}"},
                                       "verify": {"href": f"{hub.url}/lfs/verify"}}})
                       for o in d["objects"]]
            self._reply(200, {"transfer": "basic", "objects": objects})

        def _commit(self, repo_id: str, revision: str, body: bytes) -> None:
            with hub.lock:
                hub.commit_attempts += 1
                n = hub.commit_attempts
            if n <= hub.drop_commits:
                self.close_connection = True
                self.connection.close()
                return
            if n <= hub.drop_commits + hub.fail_commits:
                self._reply(500, {"error": "Internal Error - We're working hard to fix this as soon as possible!"})
                return
            repo = hub.repos.get(repo_id)
            branch = revision.replace("%2F", "/")
            if repo is None or branch not in repo["branches"]:
                self._reply(404, {"error": f"Invalid rev id: {revision}"})
                return
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            files = dict(repo["branches"][branch])
            for line in lines[1:]:
                v = line["value"]
                if line["key"] == "file":
                    files[v["path"]] = base64.b64decode(v["content"])
                elif line["key"] == "lfsFile":
                    if v["oid"] not in hub.lfs:
                        self._reply(422, {"error": f"LFS object {v['oid']} was not uploaded"})
                        return
                    files[v["path"]] = hub.lfs[v["oid"]]
            repo["branches"][branch] = files
            oid = hashlib.sha1(json.dumps(sorted((k, len(b)) for k, b in files.items())).encode()
                               + str(len(repo["commits"])).encode()).hexdigest()
            repo["commits"].append({"oid": oid, "branch": branch, "summary": lines[0]["value"]["summary"]})
            self._reply(200, {"commitUrl": f"{hub.url}/datasets/{repo_id}/commit/{oid}", "commitOid": oid,
                              "success": True})

    return Handler
