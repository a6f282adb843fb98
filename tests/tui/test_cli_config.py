"""`benchwright config show`: the effective LLM configuration, where each value comes from, keys masked."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchwright.tui.cli import main

SECRET = "sk-cli-test-SECRET-abcdef0123456789"


@pytest.fixture
def folders(tmp_path, monkeypatch):
    user = tmp_path / "user"
    project = tmp_path / "project"
    user.mkdir()
    project.mkdir()
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(user / "config.toml"))
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-ant")
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    return user, project


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_show_prints_values_with_their_source_and_masks_keys(folders):
    user, project = folders
    (user / "benchwright.toml").write_text('[providers.local]\nkind = "openai"\n'
                                           'base_url = "http://127.0.0.1:8000/v1"\napi_key_env = "OPENAI_API_KEY"\n')
    (project / "benchwright.toml").write_text('[providers.local]\nconcurrency = 16\n'
                                              '[roles.generator]\nprovider = "local"\nmodel = "qwen2.5-coder"\n'
                                              '[prices."gpt-4.1"]\ninput = 2.0\noutput = 8.0\n')
    r = run("--db", str(project / "p.db"), "config", "show")
    assert r.exit_code == 0, r.output
    out = r.output
    assert SECRET not in out and SECRET[-8:] not in out
    lines = out.splitlines()
    assert f"# user file: {user / 'benchwright.toml'}" in lines
    assert f"# project file: {project / 'benchwright.toml'}" in lines
    section = lines[lines.index("[providers.local]"):]
    section = section[:section.index("")]
    assert any(line.startswith("concurrency = 16") and line.endswith("# project file") for line in section)
    assert any(line.startswith('base_url = "http://127.0.0.1:8000/v1"') and line.endswith("# user file")
               for line in section)
    assert any(line.startswith("max_retries = 2") and line.endswith("# default") for line in section)
    assert "# API key: $OPENAI_API_KEY (set)" in section
    assert '[prices."gpt-4.1"]' in lines
    assert any(line.startswith('model = "qwen2.5-coder"') for line in lines)


def test_show_json_and_default_project_folder(folders, monkeypatch):
    _, project = folders
    (project / "benchwright.toml").write_text('[roles.judge]\nprovider = "anthropic"\nmodel = "claude-x"\n')
    monkeypatch.chdir(project)  # no --db: ./benchwright.db, so this folder is the project folder
    r = run("config", "show", "--json")
    assert r.exit_code == 0, r.output
    assert SECRET not in r.output
    data = json.loads(r.output)
    assert data["roles"]["judge"]["model"] == {"value": "claude-x", "source": "project file"}
    assert data["providers"]["anthropic"]["api_key"] == {"value": "(set)", "source": "environment"}
    assert data["roles"]["generator"]["model"]["value"] is None


def test_show_reports_a_bad_file_without_traceback(folders):
    _, project = folders
    path = project / "benchwright.toml"
    path.write_text('[providers.local]\nkind = "openai"\ntimeout = 30\n')
    r = run("--db", str(project / "p.db"), "config", "show")
    assert r.exit_code == 1
    assert "error: invalid LLM configuration" in r.output
    assert f"{path}: providers.local.timeout: unknown key" in r.output
    assert "Traceback" not in r.output
    path.write_text("[providers.local\n")
    r = run("--db", str(project / "p.db"), "config", "show")
    assert r.exit_code == 1 and f"error: {path}: not valid TOML" in r.output


def test_keys_never_appear_even_when_the_file_names_them_as_env(folders, monkeypatch):
    _, project = folders
    monkeypatch.setenv("LOCAL_KEY", SECRET)
    (project / "benchwright.toml").write_text('[providers.local]\nkind = "openai"\nbase_url = "http://h/v1"\n'
                                              'api_key_env = "LOCAL_KEY"\n')
    for extra in ((), ("--json",)):
        r = run("--db", str(project / "p.db"), "config", "show", *extra)
        assert r.exit_code == 0 and SECRET not in r.output and "LOCAL_KEY" in r.output


def test_benchwright_config_may_name_a_folder(tmp_path, monkeypatch):
    """``BENCHWRIGHT_CONFIG`` naming a folder reads ``config.toml`` in it (it used to give IsADirectoryError)."""
    folder = tmp_path / "conf"
    folder.mkdir()
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(folder))
    monkeypatch.delenv("BENCHWRIGHT_ANNOTATOR", raising=False)
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    db = tmp_path / "p.db"
    assert run("--db", str(db), "init").exit_code == 0
    assert run("--db", str(db), "status").exit_code == 0  # no config.toml in the folder yet: defaults
    (folder / "config.toml").write_text('annotator = "from-folder"\n', encoding="utf-8")
    from benchwright.core.config import resolve_annotator
    assert resolve_annotator() == "from-folder"


def test_an_unreadable_user_config_is_a_clear_error(tmp_path, monkeypatch):
    """A folder named config.toml inside the config folder: an error naming it, not an OSError traceback."""
    folder = tmp_path / "conf"
    (folder / "config.toml").mkdir(parents=True)
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(folder))
    monkeypatch.delenv("BENCHWRIGHT_ANNOTATOR", raising=False)
    monkeypatch.delenv("BENCHWRIGHT_DB", raising=False)
    db = tmp_path / "p.db"
    assert run("--db", str(db), "init").exit_code == 0
    from benchwright.core.config import load_user_config
    from benchwright.core.errors import BenchwrightError
    with pytest.raises(BenchwrightError, match=r"config\.toml: the user configuration file cannot be read"):
        load_user_config()
