"""The LLM runtime for a project: a ledger-backed client for a configured role (benchwright.toml)."""

from __future__ import annotations

from pathlib import Path

from benchwright.core.steps import STEP_ROLES as STEP_ROLES
from benchwright.db import Store

# STEP_ROLES (step -> the configured role that runs it) is declared in core's step registry (core/steps.py).
JUDGE_ROLE = "judge"
"""The configured role (``[roles.judge]`` in benchwright.toml) of the judges and the failure-mode classifier."""
ANSWER_ROLE = "generator"
"""The role whose provider writes direct answers (``answers generate``; its model comes from ``--model``)."""


def project_dir_of(store: Store) -> Path:
    """The project folder: where benchwright.toml and prompt overrides (``prompts/ID.md``) are looked up."""
    return Path(store.path).resolve().parent


def make_llm_client(store: Store, role: str, model_override: str | None = None, *, provider_factory=None,
                    batch=None):
    """An :class:`~benchwright.core.llm.client.LLMClient` for ``role`` with the project's ledger and prices,
    and the role's model and parameters.

    ``provider_factory(config, role_config) -> Provider`` replaces the real providers (tests, the demo).
    ``batch`` (:class:`~benchwright.tui.services.batches.BatchOptions`) puts the client in batch mode.

    Returns:
        ``(client, role_config)``.

    Raises:
        LLMConfigError: no model for the role, unknown provider, a missing API key (the message says what to set).
    """
    config, role_config = llm_role(store, role, model_override)
    return client_for_role(store, config, role_config, provider_factory=provider_factory, batch=batch), role_config


def llm_role(store: Store, role: str, model_override: str | None = None):
    """``(config, role_config)`` of ``role`` from the project's benchwright.toml, without building a provider
    (so a command with nothing to do needs no API key).

    Raises:
        LLMConfigError: no model for the role, unknown provider, a bad configuration file.
    """
    from benchwright.core.llm.config import load_llm_config

    config = load_llm_config(project_dir_of(store))
    return config, config.role(role, model_override)


def configured_providers(store: Store) -> tuple[str, ...]:
    """The names of the project's configured providers (benchwright.toml, the user file and the built-in ones):
    the ``PROVIDER:`` prefixes a recorded model name may carry (:func:`benchwright.core.judges.bare_model_name`).

    Raises:
        LLMConfigError: a bad configuration file.
    """
    from benchwright.core.llm.config import load_llm_config

    return tuple(sorted(load_llm_config(project_dir_of(store)).settings.providers))


def client_for_role(store: Store, config, role_config, *, provider_factory=None, batch=None):
    """The ledger-backed client for a resolved role (see :func:`make_llm_client`); in batch mode when ``batch``
    (:class:`~benchwright.tui.services.batches.BatchOptions`) is given.

    Raises:
        LLMConfigError: a missing API key, an unusable provider setting, a provider without a batch API.
    """
    from benchwright.core.llm.client import LLMClient
    from benchwright.core.llm.config import build_provider

    provider = (provider_factory or build_provider)(config, role_config)
    client = LLMClient(provider, store, prices=config.prices, truncation=getattr(role_config, "truncation", None))
    if batch is not None:
        from .batches import enable_batch

        enable_batch(client, store, config, batch)
    return client
