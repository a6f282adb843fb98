"""``benchwright serve``'s HTTP routes on a loopback server (aiohttp's test server), with a stand-in app process
that speaks textual-serve's protocol: login by link and form, 403 for the page, websocket and downloads without
a session, the annotator from the token (not the URL) unless ``--as-annotator-from-url``, an offline page, and
children stopped on shutdown (even one that ignores quit and SIGTERM)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from benchwright.tui.services import serve as serve_module
from benchwright.tui.services.serve import COOKIE, Access, ServeServer

FAKE_APP = r"""
import json, signal, sys, time
name, mode = sys.argv[1], sys.argv[2]
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
out = sys.stdout.buffer
out.write(b"__GANGLION__\n")
payload = ("hello " + name).encode()
out.write(b"D" + len(payload).to_bytes(4, "big") + payload)
out.flush()
inp = sys.stdin.buffer
while True:
    kind = inp.read(1)
    if not kind:
        break
    body = inp.read(int.from_bytes(inp.read(4), "big"))
    if kind == b"M" and json.loads(body).get("type") == "quit" and mode != "stubborn":
        break
    if kind == b"D":
        echo = b"echo " + body
        out.write(b"D" + len(echo).to_bytes(4, "big") + echo)
        out.flush()
while mode == "stubborn":
    time.sleep(1)
"""


def _server(tmp_path: Path, access: Access, mode: str = "polite", events: list | None = None,
            max_apps: int = 4) -> ServeServer:
    script = tmp_path / "fake_app.py"
    script.write_text(FAKE_APP)
    return ServeServer(access, tmp_path / "p.db", title="t<b>", argv=lambda who: [sys.executable, str(script), who,
                                                                                   mode],
                       on_event=lambda *event: events.append(event) if events is not None else None,
                       max_apps=max_apps)


async def _client(server: ServeServer) -> TestClient:
    client = TestClient(TestServer(server.make_app(), host="127.0.0.1"))
    await client.start_server()
    return client


def _token(access: Access, name: str | None) -> str:
    return next(t for t, n in access.tokens.items() if n == name)


async def _login(client: TestClient, token: str, **extra) -> aiohttp.ClientResponse:
    return await client.get("/login", params={"token": token, **extra}, allow_redirects=False)


async def test_no_session_no_page_no_app(tmp_path):
    server = _server(tmp_path, Access.create(["alice"]))
    client = await _client(server)
    try:
        page = await client.get("/", allow_redirects=False)
        assert page.status == 303 and page.headers["Location"] == "/login"
        form = await client.get("/login")
        text = await form.text()
        assert form.status == 200 and 'name="token"' in text and 'name="name"' not in text
        assert "t&lt;b&gt;" in text  # the title is escaped
        wrong = await _login(client, "wrong")
        assert wrong.status == 403 and "does not open this server" in await wrong.text()
        assert COOKIE not in wrong.cookies
        posted = await client.post("/login", data={"token": "wrong"}, allow_redirects=False)
        assert posted.status == 403
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect("/ws")
        assert refused.value.status == 403
        client.session.cookie_jar.update_cookies({COOKIE: "forged"})
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await client.ws_connect("/ws")
        assert (await client.get("/download/x")).status == 403
        assert server.services == set() and server.children() == []
    finally:
        await client.close()


async def test_link_logs_in_and_the_app_runs_as_the_token_s_annotator(tmp_path):
    access = Access.create(["alice", "bob"])
    events: list = []
    server = _server(tmp_path, access, events=events)
    client = await _client(server)
    try:
        response = await _login(client, _token(access, "alice"))
        assert response.status == 303 and response.headers["Location"] == "/"
        cookie = response.cookies[COOKIE]
        assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie.value not in access.tokens
        page = await client.get("/?as=bob")  # a URL parameter does not change who you are
        text = await page.text()
        assert page.status == 200 and "t&lt;b&gt;: alice" in text
        assert "'self'" in page.headers["Content-Security-Policy"]
        assert not [u for u in re.findall(r"https?://[^\"' )]+", text) if "www.w3.org/2000/svg" not in u]
        assert re.search(r'data-session-websocket-url="ws://127\.0\.0\.1:\d+/ws"', text)
        font = await client.get("/static/fonts/RobotoMono-VariableFont_wght.ttf")
        assert font.status == 200 and len(await font.read()) > 100_000
        with pytest.raises(aiohttp.WSServerHandshakeError):  # the URL form of the name is off by default
            await client.ws_connect("/ws/as/bob")
        with pytest.raises(aiohttp.WSServerHandshakeError):  # another site's page
            await client.ws_connect("/ws", headers={"Origin": "http://evil.example"})
        ws = await client.ws_connect("/ws?width=100&height=30")
        first = await asyncio.wait_for(ws.receive_bytes(), 10)
        assert first == b"hello alice"
        assert len(server.children()) == 1
        await ws.send_str(json.dumps(["stdin", "a"]))
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"echo a"
        await ws.send_str(json.dumps(["ping", "x"]))
        assert await asyncio.wait_for(ws.receive_json(), 10) == ["pong", "x"]
        await ws.send_str("not json")  # ignored, the relay goes on
        await ws.send_str(json.dumps(["stdin", "b"]))
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"echo b"
        await ws.close()
        for _ in range(100):
            if not server.services:
                break
            await asyncio.sleep(0.05)
        assert server.children() == [] and server.services == set()  # closing the page ends its app
        assert [e[:2] for e in events] == [("alice", "started"), ("alice", "ended")] and events[0][2] > 0
        out = await client.get("/logout", allow_redirects=False)
        assert out.status == 303 and access.sessions == {}
    finally:
        await client.close()


async def test_shared_token_form_asks_for_the_name(tmp_path):
    access = Access.create([])
    client = await _client(_server(tmp_path, access))
    try:
        assert 'name="name"' in await (await client.get("/login")).text()
        missing = await client.post("/login", data={"token": _token(access, None), "name": ""},
                                    allow_redirects=False)
        assert missing.status == 403
        response = await client.post("/login", data={"token": _token(access, None), "name": "carol"},
                                     allow_redirects=False)
        assert response.status == 303
        ws = await client.ws_connect("/ws")
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"hello carol"
        await ws.close()
    finally:
        await client.close()


async def test_as_annotator_from_url(tmp_path):
    access = Access.create([], names_from_url=True)
    client = await _client(_server(tmp_path, access))
    try:
        response = await _login(client, _token(access, None), **{"as": "dave"})
        assert response.status == 303 and response.headers["Location"] == "/?as=dave"
        page = await client.get("/?as=dave")
        assert "/ws/as/dave" in await page.text()
        assert (await client.get("/")).status == 403  # no name anywhere
        ws = await client.ws_connect("/ws/as/erin")
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"hello erin"
        await ws.close()
    finally:
        await client.close()


async def test_shutdown_stops_a_child_that_ignores_quit_and_sigterm(tmp_path, monkeypatch):
    monkeypatch.setattr(serve_module, "QUIT_SECONDS", 0.5)
    access = Access.create(["alice"])
    server = _server(tmp_path, access, mode="stubborn")
    client = await _client(server)
    try:
        await _login(client, _token(access, "alice"))
        ws = await client.ws_connect("/ws")
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"hello alice"
        (pid,) = server.children()
        await asyncio.wait_for(server.on_shutdown(), 10)
        assert server.children() == []
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
        with pytest.raises(aiohttp.WSServerHandshakeError):  # stopping: no new app
            await client.ws_connect("/ws")
    finally:
        await client.close()


async def test_at_most_max_apps_at_once(tmp_path):
    access = Access.create(["alice"])
    server = _server(tmp_path, access, max_apps=1)
    client = await _client(server)
    try:
        await _login(client, _token(access, "alice"))
        ws = await client.ws_connect("/ws")
        assert await asyncio.wait_for(ws.receive_bytes(), 10) == b"hello alice"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect("/ws")
        assert refused.value.status == 503 and len(server.children()) == 1
        await ws.close()
    finally:
        await client.close()
