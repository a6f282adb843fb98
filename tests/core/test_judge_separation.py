"""Judge separation (RepoProbe §5.1.3, SWE-QA-Pro §4.1): core's rule of which judge model would judge itself."""

from __future__ import annotations

from benchwright.core.judges import (
    SelfJudging,
    bare_model_name,
    checklist_generator,
    generated_checklist_author,
    same_model,
    self_judging,
)

PROVIDERS = ("openai", "anthropic", "local")


def test_provider_prefix_is_stripped_only_for_a_configured_provider():
    assert bare_model_name("openai:gpt-4o", PROVIDERS) == "gpt-4o"
    assert bare_model_name("  local:qwen2.5-coder:7b ", PROVIDERS) == "qwen2.5-coder:7b"
    assert bare_model_name("qwen2.5-coder:7b", PROVIDERS) == "qwen2.5-coder:7b"  # an Ollama tag stays
    assert bare_model_name("openai:gpt-4o", ()) == "openai:gpt-4o"


def test_same_model_ignores_case_and_prefix_but_not_tags():
    assert same_model("openai:GPT-4o", "gpt-4o", PROVIDERS)
    assert not same_model("qwen2.5-coder:7b", "qwen2.5-coder:14b", PROVIDERS)
    assert not same_model("", "", PROVIDERS) and not same_model(None, "x", PROVIDERS)


def test_generated_checklist_author_round_trips():
    assert generated_checklist_author("gpt-4o") == "llm:gpt-4o"
    assert checklist_generator("llm:gpt-4o") == "gpt-4o"
    assert checklist_generator(generated_checklist_author(None)) is None  # llm:unknown names no model
    assert checklist_generator("ada") is None and checklist_generator(None) is None


def test_self_judging_reasons():
    assert self_judging("gpt-4o", answer_model="openai:gpt-4o", checklist_author="ada",
                        providers=PROVIDERS) is SelfJudging.WROTE_ANSWER
    assert self_judging("gpt-4o", answer_model="claude", checklist_author="llm:GPT-4o",
                        providers=PROVIDERS) is SelfJudging.GENERATED_CHECKLIST
    assert self_judging("gpt-4o", answer_model="claude", checklist_author="llm:qwen", providers=PROVIDERS) is None
    assert self_judging("gpt-4o", answer_model="claude", checklist_author=None) is None
    assert str(SelfJudging.WROTE_ANSWER) == "written by the judge model"
