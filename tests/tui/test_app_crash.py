"""A crash of the app exits non-zero and says where the traceback is (issue 12, item 2)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from textual.app import App

from benchwright.tui import crash
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.cli import main
from benchwright.tui.screens import QueueScreen


def _headless(monkeypatch):
    """``App.run`` without a terminal (CliRunner has none)."""
    real = App.run
    monkeypatch.setattr(BenchwrightApp, "run", lambda self, **kw: real(self, headless=True, size=(120, 40), **kw))


def test_a_crash_exits_1_and_names_the_log(project, tmp_path, monkeypatch):
    db, _ids = project
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _headless(monkeypatch)

    def boom(self):
        raise RuntimeError("boom from a screen [/]")

    monkeypatch.setattr(QueueScreen, "on_mount", boom)
    r = CliRunner().invoke(main, ["--db", str(db), "review", "--as", "ann"])
    assert r.exit_code == 1, r.output
    (line,) = [x for x in r.stderr.splitlines() if x.strip()]
    assert line.startswith("benchwright: the app crashed; the traceback is in ")
    path = line.removeprefix("benchwright: the app crashed; the traceback is in ")
    assert path.startswith(str(tmp_path / "state" / "benchwright" / "log"))
    log = Path(path).read_text()
    assert "RuntimeError: boom from a screen [/]" in log and "Traceback (most recent call last)" in log
    assert "Traceback" not in r.stderr  # the traceback is in the file, not on the terminal


def test_a_normal_quit_exits_0_without_a_log(project, tmp_path, monkeypatch):
    db, _ids = project
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _headless(monkeypatch)
    monkeypatch.setattr(QueueScreen, "on_mount", lambda self: self.app.exit())
    r = CliRunner().invoke(main, ["--db", str(db), "review", "--as", "ann"])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert not (tmp_path / "state").exists()


def test_crash_log_falls_back_to_the_temp_folder(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(crash.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    path = crash.write_crash_log(ValueError("x"), "report", directory=blocked / "log")
    assert path.parent == tmp_path / "tmp" and "ValueError: x" in path.read_text()
