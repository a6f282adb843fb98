"""benchwright.toml: merging user and project files, validation messages, roles, prices, building providers."""

from __future__ import annotations

import json

import httpx2
import pytest

from benchwright.core.errors import Remedy
from benchwright.core.llm import LLMConfigError, Price, StructuredOutput
from benchwright.core.llm.anthropic_provider import AnthropicProvider
from benchwright.core.llm.config import build_provider, load_llm_config
from benchwright.core.llm.openai_provider import OpenAIProvider

SECRET = "sk-config-test-SECRET-9876543210"


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    user = tmp_path / "user"
    project = tmp_path / "project"
    user.mkdir()
    project.mkdir()
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(user / "config.toml"))
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "LOCAL_KEY"):
        monkeypatch.delenv(var, raising=False)
    return user, project


def write(folder, text: str):
    (folder / "benchwright.toml").write_text(text, encoding="utf-8")
    return folder / "benchwright.toml"


def test_builtin_providers_without_any_file(dirs, monkeypatch):
    _, project = dirs
    cfg = load_llm_config(project)
    assert set(cfg.settings.providers) == {"openai", "anthropic", "builtin"}
    oa = cfg.provider("openai")
    assert (oa.kind, oa.base_url, oa.api_key_env) == ("openai", None, "OPENAI_API_KEY")
    assert cfg.provider("anthropic").api_key_env == "ANTHROPIC_API_KEY"
    assert [f.found for f in cfg.files] == [False, False]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.5:9000/v1")
    cfg = load_llm_config(project)
    assert cfg.provider("openai").base_url == "http://10.0.0.5:9000/v1"
    assert cfg.show()["providers"]["openai"]["base_url"]["source"] == "environment (OPENAI_BASE_URL)"


def test_project_overrides_user_key_by_key(dirs):
    user, project = dirs
    write(user, """
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1"
concurrency = 4
structured_output = "prompt"

[roles.generator]
provider = "local"
model = "qwen2.5-coder"
temperature = 0.7
max_tokens = 1000

[prices."gpt-4.1"]
input = 2.0
output = 8.0
""")
    write(project, """
[providers.local]
concurrency = 32

[roles.generator]
temperature = 0.2

[prices."gpt-4.1"]
cache_read = 0.5
""")
    cfg = load_llm_config(project)
    local = cfg.provider("local")
    assert (local.kind, local.base_url, local.concurrency, local.structured_output) == (
        "openai", "http://127.0.0.1:8000/v1", 32, "prompt")
    assert local.api_key_env is None  # a compatible server with a base URL needs no key by default
    role = cfg.role("generator")
    assert (role.provider, role.model, role.params) == ("local", "qwen2.5-coder",
                                                        {"temperature": 0.2, "max_tokens": 1000})
    assert cfg.prices == {"gpt-4.1": Price(input=2.0, output=8.0, cache_read=0.5)}
    shown = cfg.show()
    assert shown["providers"]["local"]["concurrency"] == {"value": 32, "source": "project file"}
    assert shown["providers"]["local"]["base_url"]["source"] == "user file"
    assert shown["providers"]["local"]["timeout_s"] == {"value": 60.0, "source": "default"}
    assert shown["roles"]["generator"]["max_tokens"]["source"] == "user file"
    assert shown["roles"]["generator"]["temperature"] == {"value": 0.2, "source": "project file"}
    assert [f["found"] for f in shown["files"]] == [True, True]


def test_model_override_syntax(dirs):
    _, project = dirs
    write(project, """
[providers.ollama]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
[roles.judge]
provider = "ollama"
model = "llama3"
seed = 3
""")
    cfg = load_llm_config(project)
    assert (cfg.role("judge").provider, cfg.role("judge").model) == ("ollama", "llama3")
    r = cfg.role("judge", "qwen2.5-coder:7b")  # an Ollama tag, not a provider prefix
    assert (r.provider, r.model, r.params) == ("ollama", "qwen2.5-coder:7b", {"seed": 3})
    r = cfg.role("judge", "anthropic:claude-sonnet-5")
    assert (r.provider, r.model) == ("anthropic", "claude-sonnet-5")
    r = cfg.role("verifier", "ollama:qwen2.5-coder:7b")
    assert (r.provider, r.model) == ("ollama", "qwen2.5-coder:7b")
    with pytest.raises(LLMConfigError, match="no model name"):
        cfg.role("judge", "ollama:")


def test_role_without_model_says_what_to_add_where(dirs):
    _, project = dirs
    cfg = load_llm_config(project)
    with pytest.raises(LLMConfigError) as info:
        cfg.role("verifier")
    msg = str(info.value)
    assert str(project / "benchwright.toml") in msg
    assert '[roles.verifier]\nprovider = "openai"\nmodel = "MODEL-NAME"' in msg
    # what else to do is a reason each front end words (the CLI: --model; tests/tui/test_front_end_wording.py)
    assert info.value.remedy is Remedy.GIVE_MODEL and "--model" not in msg
    with pytest.raises(LLMConfigError, match="unknown role"):
        cfg.role("critic")


@pytest.mark.parametrize("text,where,key,what", [
    ('[providers.local]\nkind = "openai"\nconcurency = 4\n', "project", "providers.local.concurency", "unknown key"),
    ('[providers.local]\nkind = "openai"\nconcurrency = "many"\n', "project", "providers.local.concurrency",
     "valid integer"),
    ('[providers.local]\nkind = "openai"\nconcurrency = 0\n', "project", "providers.local.concurrency",
     "greater than or equal to 1"),
    ('[providers.local]\nbase_url = "http://x"\n', "project", "providers.local.kind", "required key is missing"),
    ('[providers.local]\nkind = "gemini"\n', "project", "providers.local.kind", "'openai', 'anthropic' or 'builtin'"),
    ('[roles.generatr]\nmodel = "x"\n', "project", "roles.generatr", "unknown key"),
    ('[roles.judge]\ntemperature = 5\n', "project", "roles.judge.temperature", "less than or equal to 2"),
    ('[prices."gpt-4.1"]\ninput = "2"\n', "project", 'prices."gpt-4.1".input', "valid number"),
    ('[llm]\nx = 1\n', "project", "llm", "unknown key"),
    ('[roles.judge]\nmax_tokens = 4096\nretry_max_tokens = 2048\n', "project", "roles.judge",
     "must be larger than max_tokens"),
])
def test_validation_errors_name_file_and_key(dirs, text, where, key, what):
    user, project = dirs
    path = write(project if where == "project" else user, text)
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    msg = str(info.value)
    assert f"{path}: {key}: " in msg and what in msg, msg


@pytest.mark.parametrize("text,key,line", [
    ('# tools\n[providers.x]\nkind = "openai"\ntools = "native-ish"\n', "providers.x.tools", 4),
    ('[agent]\ncommand_timeout_s = 5\n\nmax_turns = 0  # none\n', "agent.max_turns", 4),
    ('[roles.judge]\nmodel = "m"\n[agent]\nmax_turn = 3\n', "agent.max_turn", 4),
    ('# top\nagent.max_turns = 0\n', "agent.max_turns", 2),
    ('\nagent = {max_turns = "25"}\n', "agent.max_turns", 2),
    ('[agent.sub]\nx = 1\n', "agent.sub", 1),
    ('[prices."gpt-4.1"]\ninput = "2"\n', 'prices."gpt-4.1".input', 2),
    ('[providers.local]\nbase_url = "http://x"\n', "providers.local.kind", 1),
    ('[roles.generator]\nmodel = "m"\nprovider = "locl"\n', "roles.generator.provider", 3),
])
def test_validation_errors_name_the_line(dirs, text, key, line):
    _, project = dirs
    path = write(project, text)
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    msg = str(info.value)
    assert f"{path}: {key}: " in msg and msg.endswith(f" (line {line})"), msg


@pytest.mark.parametrize("text,key", [
    ('[providers.openai]\ntimeout_s = inf\n', "providers.openai.timeout_s"),
    ('[agent]\ncommand_timeout_s = nan\n', "agent.command_timeout_s"),
    ('[roles.judge]\ntemperature = nan\n', "roles.judge.temperature"),
    ('[prices.m]\ninput = inf\n', "prices.m.input"),
])
def test_nan_and_inf_are_refused_as_not_finite(dirs, text, key):
    # (inf passed as a timeout; nan was reported as "less than or equal to 3600", which it is not either)
    _, project = dirs
    path = write(project, text)
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    assert f"{path}: {key}: Input should be a finite number" in str(info.value)


def test_error_in_user_file_names_the_user_file(dirs):
    user, project = dirs
    path = write(user, '[providers.openai]\ntimeout_s = -1\n')
    write(project, '[providers.openai]\nconcurrency = 3\n')
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    assert f"{path}: providers.openai.timeout_s: " in str(info.value)
    assert str(project / "benchwright.toml") not in str(info.value)


def test_role_naming_an_unknown_provider(dirs):
    _, project = dirs
    path = write(project, '[roles.generator]\nprovider = "locl"\nmodel = "m"\n')
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    assert f"{path}: roles.generator.provider: no provider named 'locl'" in str(info.value)


def test_invalid_toml_names_file_and_line(dirs):
    _, project = dirs
    path = write(project, '[providers.local]\nkind = "openai\n')
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    assert str(path) in str(info.value) and "line 2" in str(info.value)


def test_show_masks_keys(dirs, monkeypatch):
    _, project = dirs
    write(project, '[providers.local]\nkind = "openai"\nbase_url = "http://h/v1"\napi_key_env = "LOCAL_KEY"\n'
                   '[providers.nokey]\nkind = "openai"\nbase_url = "http://h/v1"\napi_key_env = ""\n')
    monkeypatch.setenv("LOCAL_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET + "2")
    shown = load_llm_config(project).show()
    text = json.dumps(shown)
    assert SECRET not in text and SECRET[-6:] not in text
    assert shown["providers"]["local"]["api_key"]["value"] == "(set)"
    assert shown["providers"]["local"]["api_key_env"]["value"] == "LOCAL_KEY"
    assert shown["providers"]["openai"]["api_key"]["value"] == "(set)"
    assert shown["providers"]["anthropic"]["api_key"]["value"] == "(not set)"
    assert shown["providers"]["nokey"]["api_key"]["value"] == "(not needed)"


def test_build_provider_by_kind(dirs, monkeypatch):
    _, project = dirs
    write(project, """
[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:8000/v1/"
structured_output = "prompt"
concurrency = 16
timeout_s = 12
max_retries = 0
[providers.claude]
kind = "anthropic"
[roles.generator]
provider = "local"
model = "qwen"
[roles.judge]
provider = "claude"
model = "claude-opus-5"
""")
    cfg = load_llm_config(project)
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(lambda r: httpx2.Response(500)))
    p = build_provider(cfg, cfg.role("generator"), http_client=client)
    assert isinstance(p, OpenAIProvider)
    assert (p.name, p.base_url, p.concurrency, p.timeout_s, p.max_retries) == (
        "local", "http://127.0.0.1:8000/v1", 16, 12.0, 0)
    assert p.structured_output is StructuredOutput.PROMPT
    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        build_provider(cfg, cfg.role("judge"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    a = build_provider(cfg, cfg.role("judge"))
    assert isinstance(a, AnthropicProvider) and a.name == "claude" and a.base_url == "https://api.anthropic.com"


def test_builtin_openai_without_key_fails_clearly(dirs):
    _, project = dirs
    cfg = load_llm_config(project)
    with pytest.raises(LLMConfigError, match=r"OPENAI_API_KEY is not set"):
        build_provider(cfg, cfg.role("generator", "gpt-4.1"))


def test_base_url_must_be_an_http_url(tmp_path):
    from benchwright.core.llm.config import load_llm_config

    (tmp_path / "benchwright.toml").write_text('[providers.x]\nkind = "openai"\nbase_url = "not a url"\n')
    with pytest.raises(LLMConfigError) as e:
        load_llm_config(tmp_path)
    assert "providers.x.base_url: 'not a url' is not an http(s) URL" in str(e.value)


def test_provider_names_with_a_colon_are_refused(tmp_path):
    from benchwright.core.llm.config import load_llm_config

    (tmp_path / "benchwright.toml").write_text('[providers."gpt-4.1:mini"]\nkind = "openai"\n')
    with pytest.raises(LLMConfigError) as e:
        load_llm_config(tmp_path)
    assert "provider name 'gpt-4.1:mini'" in str(e.value) and "ambiguous" in str(e.value)
