"""A tester's findings in ``benchwright serve`` (issue 20): a per-annotator link cannot work as another name under
``--as-annotator-from-url``; the shared link asks only for the name and drops the token from the address bar;
a tab beyond ``--max-apps`` is told why; terminal sizes are clamped; names are valid NFC text without invisible
characters."""

from __future__ import annotations

import asyncio
import sys
import unicodedata
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from benchwright.tui.services.serve import (
    COOKIE,
    MAX_HEIGHT,
    MAX_WIDTH,
    PENDING_COOKIE,
    Access,
    AccessDenied,
    ServeServer,
    annotator_name,
)

# a stand-in app (textual-serve's protocol): greets with its annotator and the terminal size it was started with
SIZE_APP = r"""
import os, sys
out = sys.stdout.buffer
out.write(b"__GANGLION__\n")
payload = ("hello %s %sx%s" % (sys.argv[1], os.environ["COLUMNS"], os.environ["ROWS"])).encode()
out.write(b"D" + len(payload).to_bytes(4, "big") + payload)
out.flush()
sys.stdin.buffer.read()
"""


def _server(tmp_path: Path, access: Access, max_apps: int = 4) -> ServeServer:
    script = tmp_path / "size_app.py"
    script.write_text(SIZE_APP)
    return ServeServer(access, tmp_path / "p.db", title="t", argv=lambda who: [sys.executable, str(script), who],
                       max_apps=max_apps)


async def _client(server: ServeServer) -> TestClient:
    client = TestClient(TestServer(server.make_app(), host="127.0.0.1"))
    await client.start_server()
    return client


def _token(access: Access, name: str | None) -> str:
    return next(t for t, n in access.tokens.items() if n == name)


async def _wait_no_services(server: ServeServer) -> None:
    for _ in range(200):
        if not server.services:
            return
        await asyncio.sleep(0.05)


def test_per_annotator_session_ignores_the_url_name_under_names_from_url():
    access = Access.create(["ada"], names_from_url=True)
    ada, _ = access.login(_token(access, "ada"))
    assert access.annotator_for(ada, "eve") == "ada"
    shared, _ = access.login(_token(access, None))
    assert access.annotator_for(shared, "eve") == "eve"


async def test_ada_s_link_cannot_open_eve_s_app(tmp_path):
    access = Access.create(["ada"], names_from_url=True)
    server = _server(tmp_path, access)
    client = await _client(server)
    try:
        await client.get("/login", params={"token": _token(access, "ada")}, allow_redirects=False)
        page = await (await client.get("/?as=eve")).text()
        assert "t: ada" in page and "t: eve" not in page and "/ws/as/eve" not in page
        ws = await client.ws_connect("/ws/as/eve")
        assert (await asyncio.wait_for(ws.receive_bytes(), 10)).startswith(b"hello ada ")
        await ws.close()
        await _wait_no_services(server)
    finally:
        await client.close()


async def test_shared_link_asks_only_for_the_name_and_leaves_the_address_bar(tmp_path):
    access = Access.create([])
    token = _token(access, None)
    server = _server(tmp_path, access)
    client = await _client(server)
    try:
        link = await client.get("/login", params={"token": token}, allow_redirects=False)
        assert link.status == 303 and link.headers["Location"] == "/login"
        assert COOKIE not in link.cookies and link.cookies[PENDING_COOKIE]["httponly"]
        assert token not in link.cookies[PENDING_COOKIE].value
        form = await client.get("/login")
        text = await form.text()
        assert form.status == 200 and 'name="name"' in text and 'name="token"' not in text
        assert token not in text and "give an annotator name" not in text
        bad = await client.post("/login", data={"name": ""}, allow_redirects=False)
        assert bad.status == 403 and 'name="token"' not in await bad.text()  # the held token stays
        done = await client.post("/login", data={"name": "carol"}, allow_redirects=False)
        assert done.status == 303 and done.headers["Location"] == "/" and COOKIE in done.cookies
        assert access.pending == {}  # the held token is forgotten once used
        ws = await client.ws_connect("/ws")
        assert (await asyncio.wait_for(ws.receive_bytes(), 10)).startswith(b"hello carol ")
        await ws.close()
        await _wait_no_services(server)
    finally:
        await client.close()


def test_held_token_expires():
    access = Access.create([])
    held = access.hold(_token(access, None), now=0.0)
    assert access.held(held, now=1.0) == _token(access, None)
    assert access.held(held, now=10_000.0) is None and access.held("forged", now=1.0) is None


async def test_a_tab_beyond_max_apps_is_told_the_limit(tmp_path):
    access = Access.create(["ada"])
    server = _server(tmp_path, access, max_apps=1)
    client = await _client(server)
    try:
        await client.get("/login", params={"token": _token(access, "ada")}, allow_redirects=False)
        ws = await client.ws_connect("/ws")
        await asyncio.wait_for(ws.receive_bytes(), 10)
        page = await client.get("/")
        text = await page.text()
        assert page.status == 503 and "limit of 1 open apps" in text and "--max-apps" in text
        assert "data-session-websocket-url" not in text
        await ws.close()
        await _wait_no_services(server)
    finally:
        await client.close()


async def test_terminal_size_is_clamped(tmp_path):
    access = Access.create(["ada"])
    server = _server(tmp_path, access)
    client = await _client(server)
    try:
        await client.get("/login", params={"token": _token(access, "ada")}, allow_redirects=False)
        ws = await client.ws_connect("/ws?width=5000&height=5000")
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == f"hello ada {MAX_WIDTH}x{MAX_HEIGHT}".encode()
        await ws.close()
        await _wait_no_services(server)
    finally:
        await client.close()


@pytest.mark.parametrize("raw", ["%ff%fe", "%ED%A0%80", "a%C3"])
async def test_invalid_utf8_names_are_refused(tmp_path, raw):
    access = Access.create([])
    client = await _client(_server(tmp_path, access))
    try:
        response = await client.post("/login", data=f"token={_token(access, None)}&name={raw}",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"},
                                     allow_redirects=False)
        assert response.status == 403 and "not valid UTF-8" in await response.text()
        assert access.sessions == {}
    finally:
        await client.close()


def test_names_are_nfc_and_invisible_characters_are_named():
    decomposed = "Zoe\u0301"
    assert annotator_name(decomposed, "name") == unicodedata.normalize("NFC", decomposed) == "Zo\u00e9"
    for raw in ("a\u200bb", "\u202eada", "ad\u2066a"):
        with pytest.raises(AccessDenied, match="invisible or direction-changing"):
            annotator_name(raw, "name")
    with pytest.raises(AccessDenied, match="control characters"):
        annotator_name("a\x1bb", "name")
    with pytest.raises(AccessDenied, match="UTF-8"):
        annotator_name("a\ufffd", "name")


# exits on textual-serve's quit message, like the real app after ctrl+q
QUITTING_APP = r"""
import json, sys
out = sys.stdout.buffer
out.write(b"__GANGLION__\n")
out.write(b"D" + (5).to_bytes(4, "big") + b"hello")
out.flush()
inp = sys.stdin.buffer
while kind := inp.read(1):
    body = inp.read(int.from_bytes(inp.read(4), "big"))
    if kind == b"M" and json.loads(body).get("type") == "quit":
        sys.exit(3)
"""


class _Recording(set):
    def __init__(self, seen: list) -> None:
        super().__init__()
        self.seen = seen

    def add(self, item) -> None:
        self.seen.append(item)
        super().add(item)


async def test_closed_tabs_reap_each_child_once_and_keep_its_exit_code(tmp_path, caplog):
    """Finding 5: signalling through ``Popen.send_signal`` polled (reaped) a child that had just quit, and
    asyncio's watcher then logged "Unknown child process pid N, will report returncode 255" (2 of 15 tabs here)."""
    script = tmp_path / "quitting_app.py"
    script.write_text(QUITTING_APP)
    access = Access.create(["ada"])
    server = ServeServer(access, tmp_path / "p.db", argv=lambda who: [sys.executable, str(script)])
    seen: list = []
    server.services = _Recording(seen)
    client = await _client(server)
    try:
        await client.get("/login", params={"token": _token(access, "ada")}, allow_redirects=False)
        for _ in range(15):
            ws = await client.ws_connect("/ws")
            assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"hello"
            await ws.close()
            await _wait_no_services(server)
    finally:
        await client.close()
    assert "Unknown child process" not in caplog.text
    assert [s._process.returncode for s in seen] == [3] * 15
