"""``benchwright serve``'s rules without a server: tokens, sessions, names, the bind address, the CLI's refusals."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchwright.core.errors import BenchwrightError
from benchwright.tui.cli import main
from benchwright.tui.services.serve import (
    Access,
    AccessDenied,
    annotator_name,
    app_argv,
    check_bind,
    is_loopback,
)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.0.1", "localhost", "LOCALHOST", "::1", "[::1]"])
def test_loopback_hosts_need_no_flag(host):
    assert is_loopback(host)
    assert check_bind(host, allow_remote=False) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "example.org", "10.0.0.1"])
def test_other_hosts_need_allow_remote_and_warn(host):
    assert not is_loopback(host)
    with pytest.raises(BenchwrightError, match="--allow-remote"):
        check_bind(host, allow_remote=False)
    warning = check_bind(host, allow_remote=True)
    assert warning and warning.startswith("warning:") and host in warning


def test_empty_host_refused():
    with pytest.raises(BenchwrightError, match="--host"):
        check_bind(" ", allow_remote=True)


def test_per_annotator_tokens_name_their_annotator():
    access = Access.create(["alice", "bob"])
    assert not access.shared and sorted(access.tokens.values()) == ["alice", "bob"]
    assert len(set(access.tokens)) == 2 and all(len(t) >= 32 for t in access.tokens)
    by_name = {name: token for token, name in access.tokens.items()}
    session, who = access.login(by_name["alice"], "mallory")  # a typed name cannot change the token's annotator
    assert who == "alice"
    assert access.session(session) == (True, "alice")
    assert access.annotator_for(session, "mallory") == "alice"  # nor can a URL parameter
    assert session not in access.tokens  # the cookie is not the token
    access.logout(session)
    assert access.session(session) == (False, None)
    with pytest.raises(AccessDenied):
        access.annotator_for(session, None)


@pytest.mark.parametrize("token", ["", "   ", None, "nope", 42])
def test_wrong_tokens_open_nothing(token):
    access = Access.create(["alice"])
    with pytest.raises(AccessDenied):
        access.login(token)
    assert access.sessions == {}


def test_a_token_almost_right_is_wrong():
    access = Access.create(["alice"])
    (token,) = access.tokens
    for wrong in (token[:-1], token + "x", token.upper() if token.upper() != token else token.lower()):
        with pytest.raises(AccessDenied):
            access.login(wrong)


def test_shared_token_asks_for_a_name():
    access = Access.create([])
    assert access.shared
    (token,) = access.tokens
    with pytest.raises(AccessDenied, match="name"):
        access.login(token, "")
    session, who = access.login(token, "  carol ")
    assert who == "carol" and access.annotator_for(session, "dave") == "carol"


def test_names_from_url_trusts_the_url():
    access = Access.create(["alice"], names_from_url=True)
    shared = next(t for t, n in access.tokens.items() if n is None)
    session, who = access.login(shared)
    assert who is None
    assert access.annotator_for(session, "erin") == "erin"
    with pytest.raises(AccessDenied, match="URL"):
        access.annotator_for(session, None)
    with pytest.raises(AccessDenied, match="control"):
        access.annotator_for(session, "bad\x1b[31m")


def test_fresh_tokens_each_time():
    assert set(Access.create(["a"]).tokens).isdisjoint(Access.create(["a"]).tokens)


@pytest.mark.parametrize("raw, message", [("", "give"), ("x" * 65, "at most"), ("a\nb", "control"),
                                          ("a\u200eb", "invisible or direction-changing"), (None, "give")])
def test_bad_names(raw, message):
    with pytest.raises(AccessDenied, match=message):
        annotator_name(raw, "name")


def test_duplicate_annotator_refused():
    with pytest.raises(BenchwrightError, match="twice"):
        Access.create(["al", " al"])


def test_links_carry_the_token_once():
    access = Access.create(["alice"])
    ((name, link),) = access.links("http://127.0.0.1:8000")
    (token,) = access.tokens
    assert name == "alice" and link == f"http://127.0.0.1:8000/login?token={token}"


def test_app_argv_is_review_as_the_annotator(tmp_path):
    argv = app_argv(tmp_path / "p.db", "o'brien; rm -rf /")
    assert argv[-5:] == ["--db", str(tmp_path / "p.db"), "review", "--as", "o'brien; rm -rf /"]  # one argument


def test_cli_refuses_remote_host_without_flag(cli_env, project):
    db, _ids = project
    result = CliRunner().invoke(main, ["--db", str(db), "serve", "--host", "0.0.0.0"])
    assert result.exit_code == 1 and "--allow-remote" in result.output


def test_cli_refuses_missing_project(cli_env, tmp_path):
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "none.db"), "serve"])
    assert result.exit_code == 1 and "no project here" in result.output
    assert not (tmp_path / "none.db").exists()


def test_cli_refuses_bad_annotator(cli_env, project):
    db, _ids = project
    result = CliRunner().invoke(main, ["--db", str(db), "serve", "--annotator", "a\tb"])
    assert result.exit_code == 1 and re.search(r"--annotator: .*control", result.output)


def test_cli_port_in_use_is_a_clear_error(cli_env, project):
    db, _ids = project
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["--db", str(db), "serve", "--port", str(port)])
    assert result.exit_code == 1 and f"--port {port}: cannot listen there" in result.output
    assert "token=" not in result.output  # no link printed for a server that never listened


@pytest.mark.slow  # a subprocess that imports the CLI and aiohttp
def test_cli_serves_prints_links_once_and_stops_on_sigterm(tmp_path, project):
    """The command as a user runs it: links on stdout, a login, SIGTERM exits 143; no token in the project."""
    db, _ids = project
    env = {**os.environ, "BENCHWRIGHT_CONFIG": str(tmp_path / "none.toml")}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "benchwright"), "--db", str(db), "serve", "--port",
                             "0", "--annotator", "ada"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        link = re.search(r"ada: (http://127\.0\.0\.1:\d+/login\?token=(\S+))", lines[2])
        assert link, lines
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as redirect:
            opener.open(link[1], timeout=20)
        assert redirect.value.code == 303 and "benchwright_session=" in redirect.value.headers["Set-Cookie"]
        base = link[1].split("/login")[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(base + "/login?token=wrong", timeout=20)
        assert refused.value.code == 403
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 128 + signal.SIGTERM and "interrupted (SIGTERM)" in err
        assert link[2] not in out + err  # printed once, at start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stored = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    assert link[2].encode() not in stored


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
