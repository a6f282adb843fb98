"""``benchwright serve``: the review app in a browser, one app process per visitor, behind tokens.

The web side is `textual-serve <https://github.com/Textualize/textual-serve>`_ 1.1.3's ``AppService`` (the
protocol between the browser's ``textual.js`` and an app run with Textual's ``WebDriver``) inside an aiohttp
application of our own, which adds what textual-serve leaves out:

- **Access** (:class:`Access`): random tokens (``secrets``), printed once by ``serve`` and kept only in memory
  (never in the project file, a log or the page). A per-annotator token names its annotator; the shared token
  (given when no ``--annotator`` is named, or with ``--as-annotator-from-url``) lets its holder type a name in the
  login form. A good token opens a session (an HttpOnly, SameSite=Strict cookie holding another random id);
  the page, the websocket and downloads refuse a visitor without one (HTTP 403), so no app process is started
  for them. Tokens and sessions are compared with :func:`hmac.compare_digest`.
- **The annotator comes from the server side**: the session's name, never a URL parameter, unless the operator
  passed ``--as-annotator-from-url`` and the session was opened with the shared token (then ``/?as=NAME`` picks
  the annotator of that page: the URL is trusted). A per-annotator token's session is always its annotator.
- **Offline page**: textual-serve's template fetches the Roboto Mono CSS from Google Fonts; ours
  (``tui/serve_assets/index.html``) declares the font from the wheel's own ``static/fonts`` instead, and a
  Content-Security-Policy of ``'self'`` forbids any other origin.
- **Children**: each websocket starts ``benchwright --db PROJECT review --as NAME`` with ``exec`` (no shell), in
  its own session (a Ctrl+C in serve's terminal reaches serve only) and, on Linux, with a parent-death signal
  (SIGTERM when serve dies, even by SIGKILL). On shutdown every child is asked to quit, then terminated after
  :data:`QUIT_SECONDS`, then killed; :meth:`ServeServer.children` lists the live ones.
- **Bind address**: :func:`check_bind` refuses a non-loopback host unless ``allow_remote`` (the traffic, tokens
  included, is plain HTTP).

Two visitors are two processes on the one project file; the store already serialises their writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import ipaddress
import json
import os
import secrets
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from urllib.parse import quote, urlencode

from benchwright.core.annotator_names import NAME_CHARS as NAME_CHARS
from benchwright.core.annotator_names import annotator_name as _annotator_name
from benchwright.core.errors import BenchwrightError

TOKEN_BYTES = 24
"""Random bytes in a token or a session id (:func:`secrets.token_urlsafe`: 32 URL-safe characters)."""

COOKIE = "benchwright_session"
"""The session cookie's name."""

PENDING_COOKIE = "benchwright_pending"
"""The pre-login cookie's name: a shared link opened without a name keeps its token server-side under it."""

PENDING_SECONDS = 600
"""How long the pre-login cookie (and the token it stands for) lasts, seconds."""

MAX_WIDTH, MAX_HEIGHT = 500, 200
"""The largest terminal a browser may ask for (columns, rows); larger sizes are clamped (a client asking for
5000x5000 would otherwise grow the app to hundreds of MB)."""

QUIT_SECONDS = 5.0
"""How long a child app is given to quit on its own (it was sent textual-serve's quit message) before SIGTERM;
as long again before SIGKILL."""

MAX_APPS = 32
"""The most visitors' app processes that run at once, by default (each is a Python process: about 150 MB resident, measured on the test project)."""

ASSETS = Path(__file__).resolve().parent.parent / "serve_assets"
"""Our page templates (package data of ``benchwright.tui``)."""


class AccessDenied(BenchwrightError):
    """A token or a login that does not let the visitor in."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address to bind to) only accepts connections from this machine:
    ``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``). ``0.0.0.0``, ``::`` and other names are not."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> str | None:
    """Check the address ``serve`` binds to. Returns a warning to print for a non-loopback host that was
    allowed, else None.

    Raises:
        BenchwrightError: ``host`` is empty, or not loopback and ``allow_remote`` is false."""
    if not host.strip():
        raise BenchwrightError("--host: give an address or a host name")
    if is_loopback(host):
        return None
    if not allow_remote:
        raise BenchwrightError(
            f"--host {host}: not a loopback address; other machines could reach the app. Pass --allow-remote "
            "to serve it there anyway (plain HTTP: put it behind a TLS proxy on an untrusted network)")
    return (f"warning: serving on {host}, reachable from other machines, over plain HTTP: anyone who sees a link "
            "or the traffic gets in. Prefer 127.0.0.1 with an SSH tunnel, or a TLS proxy.")


def annotator_name(raw: object, where: str) -> str:
    """An annotator name given at login, on the command line or in a URL: the project's one rule
    (:func:`benchwright.core.annotator_names.annotator_name`: stripped, NFC, no control or format characters, at
    most :data:`NAME_CHARS` characters).

    Raises:
        AccessDenied: the name breaks the rule (``where`` names the field in the message)."""
    return _annotator_name(raw, where, AccessDenied)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def _find(table: dict[str, str | None], key: str) -> tuple[bool, str | None]:
    """Look ``key`` up in ``table`` comparing every entry in constant time (no early exit)."""
    found, value = False, None
    for known, v in table.items():
        if _same(known, key):
            found, value = True, v
    return found, value


@dataclass
class Access:
    """Who may come in: tokens and the sessions they opened (memory only).

    ``tokens`` maps a token to its annotator, or to None for the shared token (the name is typed at login).
    ``names_from_url``: ``--as-annotator-from-url`` (the page's ``as`` parameter names the annotator)."""

    tokens: dict[str, str | None]
    names_from_url: bool = False
    sessions: dict[str, str | None] = field(default_factory=dict)
    shared_sessions: dict[str, None] = field(default_factory=dict)
    """Sessions opened with the shared token: only these take the annotator from the URL."""
    pending: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Pre-login ids (a short-lived cookie) of a shared link opened without a name: ``id -> (token, expiry)``."""

    @classmethod
    def create(cls, annotators: Sequence[str] = (), *, names_from_url: bool = False) -> Access:
        """Fresh random tokens: one per name of ``annotators``, plus a shared one when there are none or
        ``names_from_url``.

        Raises:
            BenchwrightError: a name given twice, or refused by :func:`annotator_name`."""
        tokens: dict[str, str | None] = {}
        seen: set[str] = set()
        for raw in annotators:
            name = annotator_name(raw, "--annotator")
            if name in seen:
                raise BenchwrightError(f"--annotator {name}: given twice")
            seen.add(name)
            tokens[secrets.token_urlsafe(TOKEN_BYTES)] = name
        if not annotators or names_from_url:
            tokens[secrets.token_urlsafe(TOKEN_BYTES)] = None
        return cls(tokens, names_from_url)

    @property
    def shared(self) -> bool:
        """Whether a shared token exists (the login form then asks for a name)."""
        return None in self.tokens.values()

    def links(self, base_url: str) -> list[tuple[str | None, str]]:
        """``(annotator or None for the shared token, login link)`` for every token, in the order created."""
        return [(name, f"{base_url}/login?{urlencode({'token': token})}") for token, name in self.tokens.items()]

    def login(self, token: object, name: object = None) -> tuple[str, str | None]:
        """Open a session. Returns ``(session id, annotator)``; the annotator is the token's, or ``name`` for the
        shared token (None there when ``names_from_url`` and no name was typed: the page's URL names it).

        Raises:
            AccessDenied: an unknown token, or a shared token without a valid name."""
        if not isinstance(token, str) or not token.strip():
            raise AccessDenied("give the access token that benchwright serve printed")
        found, annotator = _find(self.tokens, token.strip())
        if not found:
            raise AccessDenied("this token does not open this server (ask for the link benchwright serve printed)")
        shared = annotator is None
        if annotator is None and not (self.names_from_url and not (isinstance(name, str) and name.strip())):
            annotator = annotator_name(name, "name")
        session = secrets.token_urlsafe(TOKEN_BYTES)
        self.sessions[session] = annotator
        if shared:
            self.shared_sessions[session] = None
        return session, annotator

    def needs_name(self, token: object) -> bool:
        """Whether ``token`` is the shared token and the login form must ask for a name (no ``names_from_url``)."""
        if not isinstance(token, str) or self.names_from_url:
            return False
        found, annotator = _find(self.tokens, token.strip())
        return found and annotator is None

    def hold(self, token: str, now: float | None = None) -> str:
        """Keep a shared ``token`` for :data:`PENDING_SECONDS` under a new random id (the pre-login cookie), so
        the login form asks only for the name and the token leaves the address bar."""
        now = time.monotonic() if now is None else now
        self.pending = {k: v for k, v in self.pending.items() if v[1] > now}
        held = secrets.token_urlsafe(TOKEN_BYTES)
        self.pending[held] = (token.strip(), now + PENDING_SECONDS)
        return held

    def held(self, held: str | None, now: float | None = None) -> str | None:
        """The token kept under ``held`` by :meth:`hold`, or None (unknown or expired)."""
        if not held:
            return None
        now = time.monotonic() if now is None else now
        found, value = False, None
        for known, v in self.pending.items():
            if _same(known, held):
                found, value = True, v
        return value[0] if found and value is not None and value[1] > now else None

    def release(self, held: str | None) -> None:
        """Forget the token kept under ``held`` (the login it was kept for is done)."""
        for known in list(self.pending):
            if held and _same(known, held):
                del self.pending[known]

    def session(self, session: str | None) -> tuple[bool, str | None]:
        """``(whether session is open, its annotator)``."""
        if not session:
            return False, None
        return _find(self.sessions, session)

    def annotator_for(self, session: str | None, url_name: str | None) -> str:
        """The annotator a visitor's app runs as: the session's; ``url_name`` only under ``names_from_url`` and
        for a session of the shared token (a per-annotator token's session is always its annotator).

        Raises:
            AccessDenied: no open session, or no name to run as."""
        found, annotator = self.session(session)
        if not found:
            raise AccessDenied("not logged in")
        if self.names_from_url and url_name and _find(self.shared_sessions, session or "")[0]:
            return annotator_name(url_name, "as")
        if annotator is None:
            raise AccessDenied("as: this server takes the annotator from the page's URL (?as=NAME)")
        return annotator

    def logout(self, session: str | None) -> None:
        """Close ``session`` (nothing if it is not open)."""
        for known in list(self.sessions):
            if session and _same(known, session):
                del self.sessions[known]
                self.shared_sessions.pop(known, None)


def app_argv(db_path: str | os.PathLike, annotator: str) -> list[str]:
    """The command line of one visitor's app: this Python running ``benchwright --db DB review --as NAME``."""
    code = "import sys; from benchwright.tui.cli import main; main(sys.argv[1:], prog_name='benchwright')"
    return [sys.executable, "-c", code, "--db", str(db_path), "review", "--as", annotator]


def _child_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    os.setsid()
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _textual_serve():
    """textual-serve's ``AppService`` and its ``static`` folder, imported on use."""
    import textual_serve
    from textual_serve.app_service import AppService

    return AppService, Path(textual_serve.__file__).resolve().parent / "static"


def _visitor_service_class():
    AppService, _static = _textual_serve()

    class VisitorApp(AppService):
        """textual-serve's AppService, started with ``argv`` (exec, no shell) and stopped within a deadline."""

        def __init__(self, argv: list[str], **kwargs) -> None:
            super().__init__(" ".join(argv), **kwargs)
            self.argv = argv

        async def _open_app_process(self, width: int = 80, height: int = 24):
            env = self._build_environment(width=width, height=height)
            self._process = process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, preexec_fn=_child_setup)
            self._stdin = process.stdin
            return process

        @property
        def pid(self) -> int | None:
            return self._process.pid if self._process is not None else None

        async def stop(self) -> None:
            """Ask the app to quit; SIGTERM after :data:`QUIT_SECONDS`, SIGKILL after as long again.

            Only asyncio's child watcher reaps the child (its exit code is kept): the signals go through
            :func:`os.kill`, not ``Process.send_signal``, whose ``Popen.poll()`` would reap a child that just
            exited before the watcher does (asyncio then logs "Unknown child process pid N, will report
            returncode 255"). The pid cannot be reused before the watcher reaps it."""
            process = self._process
            with contextlib.suppress(asyncio.TimeoutError, ConnectionError, RuntimeError):
                await asyncio.wait_for(super().stop(), QUIT_SECONDS)
            if process is None:
                return
            with contextlib.suppress(asyncio.TimeoutError):  # it quit: give the watcher a moment to reap it
                await asyncio.wait_for(asyncio.shield(process.wait()), 0.5)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if process.returncode is not None:
                    break
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, sig)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(process.wait()), QUIT_SECONDS)
            if self._task is not None:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._task
                self._task = None

    return VisitorApp


def _page(name: str, **values: str) -> str:
    return Template((ASSETS / name).read_text(encoding="utf-8")).substitute(values)


CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'")
"""The pages' Content-Security-Policy: nothing from another origin (the page works offline, and a script
injected from elsewhere could not run)."""


class ServeServer:
    """The aiohttp application of ``serve`` (routes ``/login``, ``/logout``, ``/``, ``/ws``, ``/ws/as/NAME``,
    ``/download/KEY``, ``/static/...``). ``argv(annotator)`` builds a visitor's app command (default
    :func:`app_argv` on ``db_path``). ``on_event(annotator, event, pid)`` is told when a visitor's app starts
    (``"started"``) and ends (``"ended"``); the command prints it. At most ``max_apps`` app processes run at
    once (a further tab gets HTTP 503)."""

    def __init__(self, access: Access, db_path: str | os.PathLike, *, title: str = "benchwright",
                 argv: Callable[[str], list[str]] | None = None,
                 on_event: Callable[[str, str, int | None], None] | None = None, max_apps: int = MAX_APPS) -> None:
        from textual_serve.download_manager import DownloadManager

        self.access = access
        self.db_path = db_path
        self.title = title
        self.argv = argv or (lambda annotator: app_argv(db_path, annotator))
        self.on_event = on_event or (lambda annotator, event, pid: None)
        self.max_apps = max_apps
        self.download_manager = DownloadManager()
        self.services: set = set()
        self.sockets: set = set()
        self.stopping: set[asyncio.Future] = set()
        self.closing = False

    def children(self) -> list[int]:
        """Pids of the visitors' app processes still running."""
        return [s.pid for s in self.services
                if s.pid is not None and s._process is not None and s._process.returncode is None]

    def make_app(self):
        """The aiohttp ``web.Application``."""
        from aiohttp import web

        _service, static = _textual_serve()
        app = web.Application()
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/login", self.handle_login_page, name="login"),
            web.post("/login", self.handle_login_form),
            web.get("/logout", self.handle_logout),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/ws/as/{name}", self.handle_websocket),
            web.get("/download/{key}", self.handle_download),
            web.static("/static", static, name="static"),
        ])
        app.on_shutdown.append(self.on_shutdown)
        return app

    # pages

    def _html(self, body: str, status: int = 200):
        from aiohttp import web

        response = web.Response(text=body, status=status, content_type="text/html", charset="utf-8")
        response.headers.update({"Content-Security-Policy": CSP, "Cache-Control": "no-store",
                                 "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
                                 "X-Content-Type-Options": "nosniff"})
        return response

    def _login_page(self, message: str = "", status: int = 200, name: str = "", held: bool = False):
        """The form. ``held``: the token is kept server-side (pre-login cookie), so only the name is asked."""
        name_row = ""
        if self.access.shared:
            name_row = ('<label>Your name <input name="name" autocomplete="username" maxlength="64" required '
                        f'autofocus value="{html.escape(name)}"></label>')
        token_row = ('<p id="token-held">Access token accepted: type your name.</p>' if held else
                     '<label>Access token <input name="token" type="password" autocomplete="off" required></label>')
        return self._html(_page("login.html", title=html.escape(self.title), message=html.escape(message),
                                name_row=name_row, token_row=token_row), status)

    def _busy_page(self):
        """HTTP 503: ``max_apps`` apps run already (shown instead of a terminal page whose websocket would fail)."""
        message = (f"The limit of {self.max_apps} open apps (benchwright serve --max-apps) is reached: close "
                   "another tab of this server, then reload this page.")
        return self._html(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
                          f'{html.escape(self.title)}: busy</title></head><body><h1>{html.escape(self.title)}</h1>'
                          f'<p id="message">{html.escape(message)}</p></body></html>', 503)

    def _logged_in(self, request, annotator: str | None, session: str):
        from aiohttp import web

        target = "/" if annotator is not None or not request.query.get("as") else \
            f"/?{urlencode({'as': request.query['as']})}"
        response = web.HTTPSeeOther(target, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
        response.set_cookie(COOKIE, session, httponly=True, samesite="Strict", path="/")
        response.del_cookie(PENDING_COOKIE, path="/login")
        raise response

    async def handle_login_page(self, request):
        """GET /login: the form; with ``?token=`` (a printed link) logs in and redirects to ``/``. The shared
        token without a name is kept server-side under a pre-login cookie and the visitor redirected to
        ``/login``, where the form asks only for the name (the token leaves the address bar)."""
        from aiohttp import web

        if "token" not in request.query:
            held = self.access.held(request.cookies.get(PENDING_COOKIE)) is not None
            return self._login_page(held=held)
        token = request.query["token"]
        if self.access.needs_name(token) and not request.query.get("name"):
            response = web.HTTPSeeOther("/login", headers={"Cache-Control": "no-store",
                                                           "Referrer-Policy": "no-referrer"})
            response.set_cookie(PENDING_COOKIE, self.access.hold(token), httponly=True, samesite="Strict",
                                path="/login", max_age=PENDING_SECONDS)
            raise response
        try:
            session, annotator = self.access.login(token, request.query.get("name"))
        except AccessDenied as e:
            return self._login_page(str(e), 403)
        return self._logged_in(request, annotator, session)

    async def handle_login_form(self, request):
        """POST /login: the form's token, or the one the pre-login cookie holds (and a name for the shared
        token)."""
        form = await request.post()
        held = self.access.held(request.cookies.get(PENDING_COOKIE))
        token = form.get("token") or held
        try:
            session, annotator = self.access.login(token, form.get("name"))
        except AccessDenied as e:
            name = form.get("name")
            return self._login_page(str(e), 403, name if isinstance(name, str) else "",
                                    held=held is not None and not form.get("token"))
        self.access.release(request.cookies.get(PENDING_COOKIE))
        return self._logged_in(request, annotator, session)

    async def handle_logout(self, request):
        """GET /logout: close the session, back to the form."""
        from aiohttp import web

        self.access.logout(request.cookies.get(COOKIE))
        response = web.HTTPSeeOther("/login")
        response.del_cookie(COOKIE, path="/")
        raise response

    async def handle_index(self, request):
        """GET /: the terminal page for a logged-in visitor (303 to /login otherwise)."""
        from aiohttp import web

        if "token" in request.query:  # a link to / with its token: log in first
            return await self.handle_login_page(request)
        url_name = request.query.get("as") if self.access.names_from_url else None
        try:
            annotator = self.access.annotator_for(request.cookies.get(COOKIE), url_name)
        except AccessDenied as e:
            if str(e) == "not logged in":
                raise web.HTTPSeeOther("/login") from None
            return self._login_page(str(e), 403)
        if len(self.services) >= self.max_apps:
            return self._busy_page()
        scheme = "wss" if request.secure else "ws"
        path = "/ws" if url_name is None else f"/ws/as/{quote(annotator, safe='')}"
        return self._html(_page(
            "index.html", title=html.escape(f"{self.title}: {annotator}"), static_url="/static/",
            websocket_url=html.escape(f"{scheme}://{request.host}{path}"),
            font_size=str(_int(request.query.get("fontsize"), 16))))

    # the app

    def _refuse(self, request) -> str | None:
        """Why a websocket or download request is refused, or None. A browser's Origin must be this server."""
        origin = request.headers.get("Origin")
        if origin is not None and origin not in (f"http://{request.host}", f"https://{request.host}"):
            return "another site's page may not open the app"
        return None

    async def handle_websocket(self, request):
        """GET /ws (or /ws/as/NAME under ``--as-annotator-from-url``): start the visitor's app and relay it.
        403 before the upgrade without a session (no process is started)."""
        from aiohttp import web

        if self.closing:
            raise web.HTTPServiceUnavailable(text="the server is stopping")
        if len(self.services) >= self.max_apps:
            raise web.HTTPServiceUnavailable(text=f"{self.max_apps} apps are open already: close a tab")
        why = self._refuse(request)
        if why:
            raise web.HTTPForbidden(text=why)
        url_name = request.match_info.get("name")
        if url_name is not None and not self.access.names_from_url:
            raise web.HTTPForbidden(text="this server does not take the annotator from the URL")
        try:
            annotator = self.access.annotator_for(request.cookies.get(COOKIE), url_name)
        except AccessDenied as e:
            raise web.HTTPForbidden(text=str(e)) from None
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        self.sockets.add(websocket)
        service = _visitor_service_class()(
            self.argv(annotator), write_bytes=websocket.send_bytes, write_str=websocket.send_str,
            close=websocket.close, download_manager=self.download_manager)
        self.services.add(service)
        try:
            await service.start(*_size(request.query.get("width"), request.query.get("height")))
            self.on_event(annotator, "started", service.pid)
            await self._relay(websocket, service)
        except asyncio.CancelledError:
            pass
        finally:
            # aiohttp cancels this handler when the browser goes away, maybe while the app is being stopped: the
            # stop runs in a task of its own, which a cancellation here does not interrupt
            stopping = asyncio.ensure_future(self._stop(service, websocket, annotator))
            self.stopping.add(stopping)
            stopping.add_done_callback(self.stopping.discard)
            await asyncio.shield(stopping)
        return websocket

    async def _stop(self, service, websocket, annotator: str) -> None:
        try:
            await service.stop()
            if service.pid is not None:
                self.on_event(annotator, "ended", service.pid)
        finally:
            self.services.discard(service)
            self.sockets.discard(websocket)
            with contextlib.suppress(Exception):
                await websocket.close()

    async def _relay(self, websocket, service) -> None:
        """The browser's messages to the app (textual-serve's protocol: stdin, resize, ping, blur, focus)."""
        from aiohttp import WSMsgType

        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
                kind, data = [*envelope, None][:2] if isinstance(envelope, list) and envelope else (None, None)
            except (ValueError, TypeError):
                continue
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(*_size(data.get("width"), data.get("height")))
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def handle_download(self, request):
        """GET /download/KEY: a file the app delivers (logged-in visitors only)."""
        from aiohttp import web

        found, _name = self.access.session(request.cookies.get(COOKIE))
        if not found or self._refuse(request):
            raise web.HTTPForbidden(text="not logged in")
        key = request.match_info["key"]
        try:
            meta = await self.download_manager.get_download_metadata(key)
        except KeyError:
            raise web.HTTPNotFound(text="no such download") from None
        response = web.StreamResponse()
        response.headers["Content-Type"] = meta.mime_type + (f"; charset={meta.encoding}" if meta.encoding else "")
        disposition = "inline" if meta.open_method == "browser" else "attachment"
        response.headers["Content-Disposition"] = f"{disposition}; filename={quote(meta.file_name)}"
        await response.prepare(request)
        async for chunk in self.download_manager.download(key):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def on_shutdown(self, _app=None) -> None:
        """Stop every visitor's app (quit, then SIGTERM, then SIGKILL) and close the websockets."""
        self.closing = True
        await asyncio.gather(*(s.stop() for s in list(self.services)), *list(self.stopping),
                             return_exceptions=True)
        for ws in list(self.sockets):
            with contextlib.suppress(Exception):
                await ws.close()

    async def run(self, host: str, port: int, on_ready: Callable[[int], None] | None = None) -> None:
        """Serve until cancelled (Ctrl+C, SIGTERM); then stop the children and return or re-raise.
        ``on_ready(port)`` is called once listening (``port`` is the real one when 0 was asked for).
        No access log (a login link's token would land in it).

        Raises:
            BenchwrightError: the address cannot be bound."""
        from aiohttp import web

        runner = web.AppRunner(self.make_app(), access_log=None, handle_signals=False, shutdown_timeout=2)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as e:
            await runner.cleanup()
            raise BenchwrightError(f"--host {host} --port {port}: cannot listen there ({e.strerror or e})") from e
        try:
            bound = site._server.sockets[0].getsockname()[1] if site._server and site._server.sockets else port
            if on_ready is not None:
                on_ready(bound)
            await asyncio.Event().wait()
        finally:
            await self.on_shutdown()
            await asyncio.shield(runner.cleanup())


def _int(value: object, default: int) -> int:
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return number if 0 < number < 10_000 else default


def _size(width: object, height: object) -> tuple[int, int]:
    """A terminal size a browser asked for: ``(columns, rows)``, 80x24 where not a number, at most
    :data:`MAX_WIDTH` x :data:`MAX_HEIGHT`."""
    return min(_int(width, 80), MAX_WIDTH), min(_int(height, 24), MAX_HEIGHT)
