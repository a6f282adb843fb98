"""``benchwright serve`` in a real browser: Debian's chromium driven by Playwright (never a downloaded browser).

Two annotators log in with their printed links in two pages (two browser contexts: two cookie jars), decide
pairs with key presses, and both annotators' decisions land in the project file; a wrong token is refused; the
page makes no request to another host; SIGTERM stops serve and every app process it started."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from benchwright.db import Store

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
BENCHWRIGHT = Path(sys.executable).parent / "benchwright"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium; "
                                                    "apt-get install chromium, as .ci/run does)"),
]


def _children(pid: int) -> list[int]:
    """Pids whose parent is ``pid``."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _decided(db: Path, annotator: str) -> int:
    with Store.open(db) as store:
        return sum(1 for row in store.queue_page(annotator, limit=1000) if row.decision)


@pytest.fixture
def served(tmp_path, project_factory):
    db, _ids = project_factory(tmp_path, n=8)
    env = {**os.environ, "BENCHWRIGHT_CONFIG": str(tmp_path / "none.toml")}
    env.pop("BENCHWRIGHT_DB", None)
    proc = subprocess.Popen([str(BENCHWRIGHT), "--db", str(db), "serve", "--port", "0", "--annotator", "alice",
                             "--annotator", "bob"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    links: dict[str, str] = {}
    lines = []
    deadline = time.monotonic() + 30
    while len(links) < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if m := re.match(r"\s+(alice|bob): (http://\S+)", line):
            links[m[1]] = m[2]
    assert len(links) == 2, "serve printed no links: " + "".join(lines) + proc.stderr.read()
    try:
        yield proc, db, links
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_two_annotators_in_chromium(served, tmp_path):
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    proc, db, links = served
    base = "{0.scheme}://{0.netloc}".format(urlsplit(links["alice"]))
    requested: list[str] = []
    outside: list[str] = []

    def guard(route):
        url = route.request.url
        requested.append(url)
        if urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
            outside.append(url)
            route.abort()
        else:
            route.continue_()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            pages = {}
            for name in ("alice", "bob"):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.route("**/*", guard)
                pages[name] = page = context.new_page()
                if name == "alice":  # her link
                    page.goto(links[name])
                else:  # bob pastes his token into the login form
                    page.goto(f"{base}/login")
                    page.fill("input[name=token]", parse_qs(urlsplit(links[name]).query)["token"][0])
                    page.click("#login")
                    page.wait_for_url(f"{base}/")
                assert urlsplit(page.url).path == "/" and "token" not in page.url  # the token left the URL
            for name, page in pages.items():  # both apps start at once
                page.wait_for_selector("body.-first-byte", timeout=30_000)
                # the page focuses the terminal on its own: alice's keys reach the app without a click
                page.wait_for_function("document.activeElement !== null && "
                                       "document.activeElement.classList.contains('xterm-helper-textarea')",
                                       timeout=10_000)
                if name == "bob":
                    page.click("#terminal")
            # accept with "a" in both pages, turn about, until each annotator has two decisions (a press
            # before an app is ready is lost, so keep pressing; the project file is the judge)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and min(_decided(db, n) for n in pages) < 2:
                for name, page in pages.items():
                    if _decided(db, name) < 2:
                        page.keyboard.press("a")
                time.sleep(0.3)
            pages["alice"].keyboard.press(" ")  # a skip: alice's third pair
            time.sleep(0.5)
            pages["alice"].screenshot(path=str(tmp_path / "serve.png"))
            assert (tmp_path / "serve.png").stat().st_size > 10_000

            # a wrong token: refused, no session, and the app page sends back to the form
            stranger = browser.new_context()
            stranger.route("**/*", guard)
            page = stranger.new_page()
            response = page.goto(f"{base}/login?token=not-the-token")
            assert response.status == 403
            assert "does not open this server" in page.inner_text("#message")
            page.goto(f"{base}/")
            assert urlsplit(page.url).path == "/login" and not stranger.cookies()
            children = _children(proc.pid)
            assert len(children) == 2  # one app per annotator; the stranger started none
            # SIGTERM with both pages open: serve stops both apps and exits as an interrupted command does
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=20) == 128 + signal.SIGTERM
            time.sleep(0.2)
            assert not [pid for pid in children if _alive(pid)], "app processes outlived serve"
        finally:
            browser.close()

    assert not outside, f"the page asked another host: {outside}"
    assert any(u.endswith("/static/js/textual.js") for u in requested)
    assert any("/static/fonts/RobotoMono" in u for u in requested)  # the font came from us
    with Store.open(db) as store:
        rows = {name: [r.decision for r in store.queue_page(name, limit=1000)] for name in ("alice", "bob")}
    assert rows["alice"].count("accept") >= 2 and "skip" in rows["alice"]
    assert rows["bob"].count("accept") >= 2
    tokens = [parse_qs(urlsplit(link).query)["token"][0].encode() for link in links.values()]
    stored = b"".join(f.read_bytes() for f in db.parent.glob(db.name + "*"))
    assert not [t for t in tokens if t in stored]  # tokens never reach the project file
