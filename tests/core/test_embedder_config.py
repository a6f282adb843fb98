"""The embedder role in benchwright.toml: the built-in default, kinds refused (anthropic for the embedder,
builtin for the chat roles) with the file and key named, dimensions, overrides, and config show."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from benchwright.core.embeddings import EmbeddingError
from benchwright.core.llm.base import LLMConfigError
from benchwright.core.llm.config import load_llm_config
from benchwright.tui.cli import main
from benchwright.tui.services.embeddings import resolve_embedder


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "user" / "config.toml"))
    (tmp_path / "user").mkdir()
    return tmp_path


def write(folder, text):
    (folder / "benchwright.toml").write_text(text, encoding="utf-8")
    return folder / "benchwright.toml"


def test_default_is_the_builtin_wordllama(project):
    e = load_llm_config(project).embedder()
    assert (e.provider, e.kind, e.model, e.dimensions) == ("builtin", "builtin", "wordllama-l2-supercat", None)
    assert (e.max_inputs, e.max_input_tokens, e.max_request_tokens) == (2048, 8192, 300000)
    c = resolve_embedder(project)
    assert (c.provider, c.kind, c.model) == ("builtin", "builtin", "wordllama-l2-supercat")


def test_configured_openai_provider_and_dimensions(project):
    write(project, '[providers.vllm]\nkind = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\n'
                   '[roles.embedder]\nprovider = "vllm"\nmodel = "Qwen/Qwen3-Embedding-8B"\ndimensions = 1024\n')
    c = resolve_embedder(project)
    assert (c.provider, c.kind, c.model, c.dimensions) == ("vllm", "openai", "Qwen/Qwen3-Embedding-8B", 1024)
    assert resolve_embedder(project, dimensions=256).dimensions == 256  # --dimensions wins
    assert resolve_embedder(project, "hashing").provider == "builtin"  # a built-in name means the builtin provider
    assert resolve_embedder(project, "builtin:hashing", 64).dimensions == 64
    assert resolve_embedder(project, "openai:text-embedding-3-small").provider == "openai"
    assert resolve_embedder(project, "other-model").model == "other-model"  # on the role's provider


def test_openai_provider_needs_a_model(project):
    write(project, '[roles.embedder]\nprovider = "openai"\n')
    with pytest.raises(LLMConfigError, match=r"(?s)no model configured for the embedder role.*\[roles.embedder\]"):
        load_llm_config(project).embedder()


def test_anthropic_is_refused_naming_file_and_key(project):
    path = write(project, '[roles.embedder]\nprovider = "anthropic"\nmodel = "claude"\n')
    with pytest.raises(LLMConfigError) as info:
        load_llm_config(project)
    msg = str(info.value)
    assert f"{path}: roles.embedder.provider: provider 'anthropic' is of kind anthropic" in msg
    assert "no embeddings endpoint" in msg and "(line 2)" in msg
    write(project, "")
    with pytest.raises(LLMConfigError, match="--model: provider 'anthropic' is of kind anthropic"):
        load_llm_config(project).embedder("anthropic:claude")


def test_chat_roles_refuse_the_builtin_provider(project):
    path = write(project, '[roles.judge]\nprovider = "builtin"\nmodel = "hashing"\n')
    with pytest.raises(LLMConfigError, match=rf"{path}: roles.judge.provider: provider 'builtin' is of kind builtin"):
        load_llm_config(project)
    write(project, "")
    with pytest.raises(LLMConfigError, match="the generator role needs a chat model"):
        load_llm_config(project).role("generator", "builtin:hashing")


@pytest.mark.parametrize("text, key", [
    ('[roles.embedder]\ndimensions = 0\n', "roles.embedder.dimensions"),
    ('[roles.embedder]\ndimensions = "256"\n', "roles.embedder.dimensions"),
    ('[roles.embedder]\nmax_inputs = 0\n', "roles.embedder.max_inputs"),
    ('[roles.embedder]\nprovider = "nope"\n', "roles.embedder.provider"),
    ('[roles.embedder]\ntemperature = 1\n', "roles.embedder.temperature"),
])
def test_bad_values_name_the_file_and_key(project, text, key):
    path = write(project, text)
    with pytest.raises(LLMConfigError, match=f"{path}: {key}"):
        load_llm_config(project)


def test_unknown_builtin_model_and_dimensions(project):
    with pytest.raises(LLMConfigError, match="no built-in embedder 'nope'"):
        resolve_embedder(project, "builtin:nope")
    with pytest.raises(EmbeddingError, match="not 100"):
        resolve_embedder(project, None, 100)


def test_config_show_lists_the_embedder_role(project):
    (project / "p.db").touch()
    out = CliRunner().invoke(main, ["--db", str(project / "p.db"), "config", "show"]).output
    assert "[roles.embedder]" in out and 'provider = "builtin"' in out
    assert 'model = "wordllama-l2-supercat"' in out and "# dimensions (not set)" in out
    assert "[providers.builtin]" in out
