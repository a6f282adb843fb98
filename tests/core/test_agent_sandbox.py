"""The second wall around the agent's command_line (issue 15 item 2): under bubblewrap a command the argument checker
would let through still sees only the system's programs and the workspace, read-only, without network or keys;
``required`` without bubblewrap refuses; ``off`` runs unconfined and says so; outputs are the same either way."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from test_agent_fixture import SECRET, make_repo

from benchwright.core.agent import sandbox as S
from benchwright.core.agent import tools as T
from benchwright.core.agent.loop import run_agent
from benchwright.core.agent.model import AgentSettings
from benchwright.core.agent.workspace import Workspace
from benchwright.core.errors import BenchwrightError
from benchwright.core.llm import LLMClient, MemoryLedger, Reply, ScriptedProvider
from benchwright.core.llm.base import LLMConfigError
from benchwright.core.llm.config import load_llm_config

CONFINED = T.command_sandbox(Workspace(Path("/usr")), "auto") if not os.environ.get(S.ENV_SANDBOX) else None
needs_bwrap = pytest.mark.skipif(CONFINED is None or not CONFINED.confined,
                                 reason="bubblewrap (bwrap) is missing or cannot make the agent's namespaces here "
                                        "(.ci/run installs it when root)")


@pytest.fixture(autouse=True)
def _no_mode_from_outside(monkeypatch):
    monkeypatch.delenv(S.ENV_SANDBOX, raising=False)


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(make_repo(tmp_path))


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path):
    """A PATH without bwrap (the commands themselves are found on the fixed COMMAND_PATH)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert shutil.which("bwrap") is None


def confined(ws: Workspace):
    box = T.command_sandbox(ws, "required")
    assert box.confined and box.note == S.SANDBOXED
    return box


# ------------------------------------------------------------------------------------------------ the wall
@needs_bwrap
def test_a_command_the_checker_would_let_through_sees_nothing_outside(ws, tmp_path):
    box = confined(ws)
    outside = str(tmp_path / "outside" / "secret.txt")
    for argv in (["cat", "leak.txt"], ["cat", outside], ["grep", "-r", "TOP", "leak/"], ["ls", "-L", "leak"],
                 ["head", "/etc/hostname"], ["cat", "/proc/self/environ"], ["ls", str(Path.home())]):
        r = T.run_argv(ws, argv, sandbox=box)
        assert SECRET not in r.output and "[exit status" in r.output, argv
    # unconfined, the same argv does read outside: the wall is what stops it
    assert SECRET in T.run_argv(ws, ["cat", "leak.txt"], sandbox=T.command_sandbox(ws, "off")).output
    # the root holds the system's programs and the workspace's parents only; /etc four files
    top = T.run_argv(ws, ["ls", "/"], sandbox=box).output.split("\n")
    assert set(top) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "sbin", "tmp", "usr", "work"}
    assert "home" not in top and "root" not in top and "proc" not in top
    etc = T.run_argv(ws, ["ls", "/etc"], sandbox=box).output.split("\n")
    assert set(etc) <= {"group", "ld.so.cache", "localtime", "passwd"} and "shadow" not in etc


@needs_bwrap
def test_git_metadata_is_an_empty_folder_inside_the_sandbox(ws):
    """Past the argument checks (run_argv runs argv as given), .git is an empty read-only tmpfs: its config (a
    remote URL with a token) is not there."""
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("url = https://u:TOKEN_IN_GIT@example.com/r.git\n")
    box = confined(ws)
    assert "TOKEN_IN_GIT" not in T.run_argv(ws, ["grep", "-r", "TOKEN_IN_GIT", "."], sandbox=box).output
    assert T.run_argv(ws, ["ls", "-A", ".git"], sandbox=box).output == "(no output)"
    assert "TOKEN_IN_GIT" in T.run_argv(ws, ["cat", ".git/config"], sandbox=T.command_sandbox(ws, "off")).output


@needs_bwrap
def test_nothing_is_writable(ws):
    box = confined(ws)
    for argv in (["touch", "new.txt"], ["mkdir", "made"], ["touch", "/tmp/new.txt"], ["touch", "/dev/shm/x"],
                 ["sort", "-o", "sorted.txt", "README.md"], ["cp", "README.md", "copy.md"], ["touch", "/x"]):
        r = T.run_argv(ws, argv, sandbox=box)
        assert not r.ok or "[exit status" in r.output, argv
        assert "Read-only file system" in r.output, (argv, r.output)
    assert not {"new.txt", "made", "sorted.txt", "copy.md"} & set(os.listdir(ws.root))
    assert not os.path.exists("/tmp/new.txt") and not os.path.exists("/x")


@needs_bwrap
def test_there_is_no_network(ws):
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("no /usr/bin/python3 to try a connection with")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    script = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')"
    try:
        assert "connected" in T.run_argv(ws, [python, "-c", script], sandbox=T.command_sandbox(ws, "off")).output
        r = T.run_argv(ws, [python, "-c", script], sandbox=confined(ws))
    finally:
        server.close()
    assert "connected" not in r.output and ("Network is unreachable" in r.output or "refused" in r.output)


@needs_bwrap
def test_the_command_gets_no_key_and_nothing_of_benchwrights_environment(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leaked")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-leaked")
    out = T.run_argv(ws, ["env"], sandbox=confined(ws)).output
    names = {line.split("=", 1)[0] for line in out.split("\n")}
    assert "leaked" not in out and "HOME" not in names
    assert {"PATH", "LANG", "LC_ALL"} <= names <= {"PATH", "LANG", "LC_ALL", "PWD"}  # bwrap sets PWD (--chdir)


@needs_bwrap
def test_a_command_past_its_timeout_is_stopped_with_its_sandbox(ws):
    marker = "31.4159"
    r = T.run_argv(ws, ["sleep", marker], timeout_s=1, sandbox=confined(ws))
    assert not r.ok and "stopped after 1 seconds (the time limit)" in r.output

    def alive() -> bool:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
        return False

    for _ in range(50):  # bwrap was killed; --die-with-parent takes the sleep with it
        if not alive():
            break
        time.sleep(0.1)
    assert not alive()


# ------------------------------------------------------------------------------------------------ same outputs
@needs_bwrap
@pytest.mark.parametrize("command", [
    "ls -l pkg", "ls -la", "grep -rn Engine .", "find . -name '*.py'", "wc -l pkg/engine.py", "du -a pkg",
    "file pkg/engine.py", "head -n 3 pkg/engine.py", "sed -n '2,4p' pkg/engine.py", "sort README.md",
    "stat -c '%n %s %U %G %y' pkg/engine.py", "find . -type l", "ls -l src/*.py pkg/*.py",
    "grep -rn -e TOP .", "cat README.md",
])
def test_a_command_gives_the_same_output_confined_or_not(ws, command):
    """A run's tool outputs do not depend on the mode: owners by name (/etc/passwd, /etc/group), times in the same
    zone (/etc/localtime), the same messages; a run resumed where bwrap is gone replays its cached turns."""
    free = T.command_line(ws, command, sandbox=T.command_sandbox(ws, "off"))
    boxed = T.command_line(ws, command, sandbox=confined(ws))
    assert boxed == free
    again = T.command_line(ws, command, sandbox=confined(ws))
    assert again == boxed


def test_a_command_is_confined_by_default_when_nothing_is_passed(ws, monkeypatch):
    seen = {}

    def fake(box):
        seen["box"] = box
        return box

    real = T.command_sandbox
    monkeypatch.setattr(T, "command_sandbox", lambda w, mode=None: fake(real(w, mode)))
    T.execute(ws, "command_line", {"command": "ls"})
    assert seen["box"].note in (S.SANDBOXED, S.UNAVAILABLE)  # auto: never "off" unless asked


# ------------------------------------------------------------------------------------------------ the modes
def test_required_without_bubblewrap_refuses_every_command_and_the_run(ws, no_bwrap, monkeypatch):
    box = T.command_sandbox(ws, "required")
    assert not box.confined and box.missing == "bubblewrap"
    r = T.execute(ws, "command_line", {"command": "ls"}, sandbox=box)
    assert not r.ok and r.output == S.REQUIRED_MISSING and "install bubblewrap" in r.output
    with pytest.raises(BenchwrightError, match=r'missing bubblewrap \(agent sandbox = "required"\)'):
        S.require_sandbox("required")
    monkeypatch.setenv(S.ENV_SANDBOX, "required")  # the environment variable over the configured "off"
    with pytest.raises(BenchwrightError, match="missing bubblewrap"):
        S.require_sandbox("off")


async def test_a_run_under_required_without_bubblewrap_fails_before_any_call(ws, no_bwrap):
    provider = ScriptedProvider([Reply("", tool_calls=[("command_line", {"command": "ls"})])])
    out = await run_agent(LLMClient(provider, MemoryLedger()), ws, "Q?", AgentSettings(model="m", sandbox="required"),
                          qa_pair_id="p1")
    assert out.status == "failed" and out.reason == S.REQUIRED_MISSING and out.turns == [] and out.calls == 0
    assert provider.calls == []


async def ls_then_finish(ws, **settings):
    """A run whose one command is ``ls pkg``."""
    script = [Reply("", tool_calls=[("command_line", {"command": "ls pkg"})]),
              Reply("", tool_calls=[("finish", {"answer": "pkg holds engine.py."})])]
    return await run_agent(LLMClient(ScriptedProvider(script), MemoryLedger()), ws, "Q?",
                           AgentSettings(model="m", **settings), qa_pair_id="p1")


async def test_off_runs_unconfined_and_the_run_says_so(ws):
    out = await ls_then_finish(ws, sandbox="off")
    assert out.ok and out.sandbox == S.OFF and "unconfined" in out.sandbox
    assert "engine.py" in out.turns[0].tool_uses[0].output


async def test_auto_without_bubblewrap_runs_and_says_it_ran_unconfined(ws, no_bwrap):
    out = await ls_then_finish(ws)
    assert out.ok and out.sandbox == S.UNAVAILABLE and "engine.py" in out.turns[0].tool_uses[0].output


@needs_bwrap
async def test_a_confined_run_records_it(ws):
    out = await ls_then_finish(ws)
    assert out.ok and out.sandbox == S.SANDBOXED and "engine.py" in out.turns[0].tool_uses[0].output


def test_the_mode_comes_from_the_environment_then_the_configuration(tmp_path, monkeypatch):
    assert S.agent_sandbox_mode() == "auto" and S.agent_sandbox_mode("off") == "off"
    monkeypatch.setenv(S.ENV_SANDBOX, "required")
    assert S.agent_sandbox_mode("off") == "required"
    monkeypatch.setenv(S.ENV_SANDBOX, "maybe")
    with pytest.raises(BenchwrightError, match=r"BENCHWRIGHT_AGENT_SANDBOX: 'maybe' is not a sandbox mode"):
        S.agent_sandbox_mode()
    monkeypatch.delenv(S.ENV_SANDBOX)
    (tmp_path / "benchwright.toml").write_text('[agent]\nsandbox = "off"\n', encoding="utf-8")
    config = load_llm_config(tmp_path)
    assert config.settings.agent.overrides() == {"sandbox": "off"}
    assert AgentSettings(model="m", **config.settings.agent.overrides()).as_json()["sandbox"] == "off"
    (tmp_path / "benchwright.toml").write_text('[agent]\nsandbox = "never"\n', encoding="utf-8")
    with pytest.raises(LLMConfigError, match=r"agent\.sandbox: 'never' is not a sandbox mode; use one of auto"):
        load_llm_config(tmp_path)


def test_a_program_linked_from_outside_the_system_folders_is_bound(tmp_path):
    real = tmp_path / "opt" / "rg"
    real.parent.mkdir()
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "rg").symlink_to(real)
    (bin_dir / "ls").symlink_to(shutil.which("ls") or "/usr/bin/ls")
    options = S.sandbox_options(tmp_path / "ws", {"PATH": str(bin_dir)}, programs=["rg", "ls"], path=str(bin_dir))
    i = options.index(str(real))
    assert options[i - 1:i + 2] == ["--ro-bind", str(real), str(real)] and options.count("--ro-bind") >= 2
    assert options.index(str(real)) < options.index("--remount-ro")  # bound before the root is made read-only
    assert sys.prefix not in options  # nothing of benchwright's own Python is bound
