"""LLM configuration: providers, per-role model and parameters, prices (``benchwright.toml``).

Where it is read from, lowest precedence first, merged key by key (a project file that sets only
``providers.local.base_url`` keeps every other key of ``[providers.local]`` from the user file):

1. built-in defaults: providers ``openai`` (kind openai, base URL from ``OPENAI_BASE_URL`` when set, key from
   ``OPENAI_API_KEY``), ``anthropic`` (base URL from ``ANTHROPIC_BASE_URL`` when set, key from
   ``ANTHROPIC_API_KEY``) and ``builtin`` (kind builtin: the embedders shipped with benchwright, embedder role
   only);
2. the user file: ``benchwright.toml`` in the folder of the user configuration file
   (:func:`benchwright.core.config.config_path`, which ``BENCHWRIGHT_CONFIG`` moves);
3. the project file: ``benchwright.toml`` next to the project database.

Shape (every key optional unless noted)::

    [providers.local]                  # any name; "openai" and "anthropic" exist built in
    kind = "openai"                    # required for a new provider: openai | anthropic
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "OPENAI_API_KEY"     # NAME of the environment variable holding the key; "" = no key
    structured_output = "json_schema"  # or "prompt" for servers without native JSON-Schema output
    tools = "native"                   # or "prompt": tool calls as <tool_call> text, for servers without native tools
    concurrency = 16                   # calls in flight at most (default 8)
    timeout_s = 60                     # seconds per HTTP attempt (default 60)
    max_retries = 2                    # SDK retries on 408/409/429/5xx, timeouts (default 2)

    [roles.generator]                  # roles: generator, verifier, judge
    provider = "local"                 # default "openai"
    model = "qwen2.5-coder"
    temperature = 0.2                  # also max_tokens, top_p, seed (seed: OpenAI only)
    max_tokens = 2048
    truncation_retry_factor = 2        # an output cut off at max_tokens is retried once at 2x (default 2)
    retry_max_tokens = 8192            # or: the retry's max_tokens outright (overrides the factor)

    [roles.embedder]                   # text embeddings (taxonomy, dedup); default: the built-in model
    provider = "builtin"               # kind builtin (offline, in the wheel) or an openai-kind provider
    model = "wordllama-l2-supercat"    # builtin: wordllama-l2-supercat, hashing; openai: the server's model
    dimensions = 256                   # optional; sent as "dimensions" only when set
    max_inputs = 2048                  # texts per request; also max_input_tokens (8192), max_request_tokens
                                       # (300000); tokens estimated as UTF-8 bytes / 3 (docs/data-methods.md)

    [agent]                            # agent runs (answers generate --agent), SWE-QA-Pro §3.1 defaults
    max_turns = 25                     # model calls at most; also context_tokens (32000), tool_output_chars
    command_timeout_s = 10             # (8000), search_max_hits (50)
    sandbox = "auto"                   # command_line under bubblewrap; "required" or "off" (default auto)

    [generation]                       # generate doc-chunks (Code-QA-Bench answer-first; docs/generation.md)
    top = 50                           # keep the best 50 chunks (default: all); also min_words (20),
    weights = { references = 0.4 }     # target_words (120), max_words (600), target_references (4)

    [batch]                            # --batch jobs (docs/batches.md)
    poll_interval_s = 30               # seconds between status requests (default 30); also gather_s (2)
    retry = "online"                   # errored/expired/cancelled requests: "online" (default) or "batch"
    poll_max_failures = 20             # failed status requests in a row before the job defers the batch;
                                       # also poll_give_up_s (3600), poll_backoff_max_s (300)

    [prices."gpt-4.1"]                 # US dollars per million tokens, by model name
    input = 2.0
    output = 8.0
    cache_read = 0.5                   # also cache_write
    batch_input = 1.0                  # batch API rates; default: batch_discount (0.5) x the online rates
    batch_output = 4.0

``api_key_env`` defaults: ``ANTHROPIC_API_KEY`` for kind anthropic; for kind openai ``OPENAI_API_KEY`` when
``base_url`` is unset (api.openai.com), none otherwise (a local server; set it if yours needs a key). API
keys themselves are never in the file, never shown, never stored.

Errors (:class:`~.base.LLMConfigError`) name the file and the key path (``providers.local.concurrency``).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..config import config_path
from ..embeddings import BUILTIN_EMBEDDERS, BUILTIN_PROVIDER, DEFAULT_EMBEDDER_MODEL
from ..errors import Remedy, with_remedy
from ..sandbox import mode_problem
from .base import LLMConfigError, Provider
from .client import Price, TruncationPolicy

FILE_NAME = "benchwright.toml"
ROLES = ("generator", "verifier", "judge")
"""The chat-model roles (providers of kind openai or anthropic)."""
EMBEDDER_ROLE = "embedder"
"""The embedding role (providers of kind builtin or openai; :meth:`LLMConfig.embedder`)."""
EMBEDDER_KINDS = (BUILTIN_PROVIDER, "openai")
DEFAULT_PROVIDER = "openai"
PARAM_KEYS = ("temperature", "max_tokens", "top_p", "seed")

SOURCE_DEFAULT = "default"
SOURCE_USER = "user file"
SOURCE_PROJECT = "project file"

_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)  # nan and inf are no setting


class ProviderSettings(BaseModel):
    """One ``[providers.NAME]`` table (see the module docstring for the keys and defaults)."""

    model_config = _STRICT

    kind: Literal["openai", "anthropic", "builtin"]
    base_url: str | None = None
    api_key_env: str | None = None
    structured_output: Literal["json_schema", "prompt"] = "json_schema"
    tools: Literal["native", "prompt"] = "native"
    concurrency: int = Field(8, ge=1, le=4096)
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0, le=50)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, v: str | None) -> str | None:
        if v is None:
            return v
        from urllib.parse import urlsplit

        parts = urlsplit(v.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in v.strip()):
            raise ValueError(f"{v!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1")
        return v.strip()

    @model_validator(mode="after")
    def _default_key_env(self) -> ProviderSettings:
        if self.api_key_env is None and "api_key_env" not in self.model_fields_set:
            if self.kind == "anthropic":
                self.api_key_env = "ANTHROPIC_API_KEY"
            elif self.base_url is None:
                self.api_key_env = "OPENAI_API_KEY"
        if self.api_key_env == "":
            self.api_key_env = None
        return self


class RoleSettings(BaseModel):
    """One ``[roles.ROLE]`` table: the provider, the model and the sampling parameters of a role."""

    model_config = _STRICT

    provider: str = DEFAULT_PROVIDER
    model: str | None = Field(None, min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)
    top_p: float | None = Field(None, gt=0, le=1)
    seed: int | None = None
    truncation_retry_factor: float = Field(2.0, ge=1, le=64)
    """An output cut off at the token budget is retried once with the budget times this; 1 = no retry."""
    retry_max_tokens: int | None = Field(None, ge=1)
    """The retry's ``max_tokens`` outright (overrides ``truncation_retry_factor``)."""

    @field_validator("truncation_retry_factor", mode="before")
    @classmethod
    def _int_factor(cls, v: Any) -> Any:
        return float(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @model_validator(mode="after")
    def _retry_budget_is_larger(self) -> RoleSettings:
        if self.retry_max_tokens is not None and self.max_tokens is not None and self.retry_max_tokens <= self.max_tokens:
            raise ValueError(f"retry_max_tokens ({self.retry_max_tokens}) must be larger than max_tokens "
                             f"({self.max_tokens}): the retry of a cut-off output needs a larger budget")
        return self


class EmbedderRoleSettings(BaseModel):
    """The ``[roles.embedder]`` table: the embedding provider and model, the dimensions asked for, and the
    request limits (OpenAI's embeddings API: 2048 inputs, 8192 tokens per input, 300000 tokens per request)."""

    model_config = _STRICT

    provider: str = BUILTIN_PROVIDER
    model: str | None = Field(None, min_length=1)
    """None: ``wordllama-l2-supercat`` on the builtin provider; required for an openai-kind provider."""
    dimensions: int | None = Field(None, ge=1, le=65536)
    max_inputs: int = Field(2048, ge=1, le=100000)
    max_input_tokens: int = Field(8192, ge=1)
    max_request_tokens: int = Field(300000, ge=1)


class RolesSettings(BaseModel):
    """The ``[roles]`` table: one entry per role."""

    model_config = _STRICT

    generator: RoleSettings = Field(default_factory=RoleSettings)
    verifier: RoleSettings = Field(default_factory=RoleSettings)
    judge: RoleSettings = Field(default_factory=RoleSettings)
    embedder: EmbedderRoleSettings = Field(default_factory=EmbedderRoleSettings)


class PriceSettings(BaseModel):
    """One ``[prices."MODEL"]`` table, US dollars per million tokens."""

    model_config = _STRICT

    input: float = Field(0.0, ge=0)
    output: float = Field(0.0, ge=0)
    cache_read: float = Field(0.0, ge=0)
    cache_write: float = Field(0.0, ge=0)
    batch_input: float | None = Field(None, ge=0)
    batch_output: float | None = Field(None, ge=0)
    batch_discount: float = Field(0.5, gt=0, le=1)


class BatchTableSettings(BaseModel):
    """The ``[batch]`` table: how ``--batch`` jobs wait (:class:`~.batch.BatchPolicy`; issue 19)."""

    model_config = _STRICT

    poll_interval_s: float = Field(30.0, gt=0, le=3600)
    gather_s: float = Field(2.0, ge=0, le=600)
    retry: Literal["online", "batch"] = "online"
    max_batch_retries: int = Field(2, ge=0, le=10)
    poll_backoff_max_s: float = Field(300.0, gt=0, le=86_400)
    poll_max_failures: int = Field(20, ge=1, le=10_000)
    poll_give_up_s: float = Field(3600.0, gt=0, le=86_400)


class AgentTableSettings(BaseModel):
    """The ``[agent]`` table: how an agent run goes (unset keys keep the defaults of
    :class:`benchwright.core.agent.model.AgentSettings`, SWE-QA-Pro §3.1: 25 turns, a 32k-token context)."""

    model_config = _STRICT

    max_turns: int | None = Field(None, ge=1, le=1000)
    context_tokens: int | None = Field(None, ge=1000)
    tool_output_chars: int | None = Field(None, ge=100)
    search_max_hits: int | None = Field(None, ge=1)
    max_tool_calls_per_turn: int | None = Field(None, ge=1, le=1000)
    command_timeout_s: float | None = Field(None, gt=0, le=3600)
    sandbox: str | None = None
    """CommandLine under bubblewrap (core/agent/sandbox.py); $BENCHWRIGHT_AGENT_SANDBOX wins."""

    @field_validator("sandbox")
    @classmethod
    def _sandbox_mode(cls, v: str | None) -> str | None:
        problem = None if v is None else mode_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    def overrides(self) -> dict:
        """The keys set, as keyword arguments of ``AgentSettings``."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class GenerationTableSettings(BaseModel):
    """The ``[generation]`` table: how ``generate doc-chunks`` cuts and scores documentation (unset keys keep the
    defaults of :class:`benchwright.core.doc_chunks.ChunkSettings`; ``weights`` over its default weights)."""

    model_config = _STRICT

    top: int | None = Field(None, ge=1)
    weights: dict[str, float] = Field(default_factory=dict)
    min_words: int | None = Field(None, ge=0)
    target_words: int | None = Field(None, ge=1)
    max_words: int | None = Field(None, ge=1)
    target_references: int | None = Field(None, ge=1)
    exclude: list[str] | None = None

    def overrides(self) -> dict:
        """The chunking keys set (not ``top`` nor ``weights``), as keyword arguments of ``ChunkSettings``."""
        out = {k: v for k, v in self.model_dump(exclude={"top", "weights"}).items() if v is not None}
        if "exclude" in out:
            out["exclude"] = tuple(out["exclude"])
        return out


class LLMSettings(BaseModel):
    """The whole merged ``benchwright.toml``."""

    model_config = _STRICT

    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    roles: RolesSettings = Field(default_factory=RolesSettings)
    prices: dict[str, PriceSettings] = Field(default_factory=dict)
    agent: AgentTableSettings = Field(default_factory=AgentTableSettings)
    generation: GenerationTableSettings = Field(default_factory=GenerationTableSettings)
    batch: BatchTableSettings = Field(default_factory=BatchTableSettings)

    @field_validator("providers")
    @classmethod
    def _provider_names(cls, v: dict[str, ProviderSettings]) -> dict[str, ProviderSettings]:
        for name in v:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
                raise ValueError(f"provider name {name!r}: use letters, digits, '.', '_' and '-' (a ':' would "
                                 "make --model PROVIDER:MODEL ambiguous)")
        return v


@dataclass(frozen=True)
class RoleConfig:
    """A role resolved for use: which provider, which model, which parameters.

    Attributes:
        role: ``generator``, ``verifier`` or ``judge``.
        provider: the provider's configured name.
        settings: that provider's settings.
        model: the model name sent to the provider.
        params: sampling parameters for :attr:`LLMRequest.params` (only those set).
        truncation: the retry after an output cut off at the token budget (:class:`~.client.TruncationPolicy`).
    """

    role: str
    provider: str
    settings: ProviderSettings
    model: str
    params: dict = field(default_factory=dict)
    truncation: TruncationPolicy = field(default_factory=TruncationPolicy)


@dataclass(frozen=True)
class EmbedderConfig:
    """The ``embedder`` role resolved for use.

    Attributes:
        provider: the provider's configured name (``builtin`` for the built-in embedders).
        settings: that provider's settings (kind ``builtin`` or ``openai``).
        model: the model name (a :data:`~benchwright.core.embeddings.BUILTIN_EMBEDDERS` key for kind builtin).
        dimensions: the dimensions asked for, or None (the model's own).
        max_inputs, max_input_tokens, max_request_tokens: the request limits (kind openai).
    """

    provider: str
    settings: ProviderSettings
    model: str
    dimensions: int | None = None
    max_inputs: int = 2048
    max_input_tokens: int = 8192
    max_request_tokens: int = 300000

    @property
    def kind(self) -> str:
        """``builtin`` or ``openai``."""
        return self.settings.kind


@dataclass(frozen=True)
class ConfigFile:
    """One configuration file: its scope (``user`` or ``project``), path, and whether it exists."""

    scope: str
    path: Path
    found: bool


def _builtin_layer() -> tuple[dict, dict[tuple, str]]:
    data: dict[str, Any] = {
        "providers": {
            "openai": {"kind": "openai", "api_key_env": "OPENAI_API_KEY"},
            "anthropic": {"kind": "anthropic", "api_key_env": "ANTHROPIC_API_KEY"},
            BUILTIN_PROVIDER: {"kind": BUILTIN_PROVIDER, "api_key_env": ""},
        }
    }
    origins: dict[tuple, str] = {}
    _record(data, (), origins, SOURCE_DEFAULT)
    for name, var in (("openai", "OPENAI_BASE_URL"), ("anthropic", "ANTHROPIC_BASE_URL")):
        if os.environ.get(var):
            data["providers"][name]["base_url"] = os.environ[var]
            origins[("providers", name, "base_url")] = f"environment ({var})"
    return data, origins


def _record(data: dict, prefix: tuple, origins: dict[tuple, str], source: str) -> None:
    for k, v in data.items():
        path = (*prefix, k)
        origins[path] = source
        if isinstance(v, dict):
            _record(v, path, origins, source)


def _merge(into: dict, layer: dict, origins: dict[tuple, str], source: str, prefix: tuple = ()) -> None:
    """Merge ``layer`` into ``into`` key by key (tables recursively); record each leaf's source."""
    for k, v in layer.items():
        path = (*prefix, k)
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            origins[path] = source
            _merge(into[k], v, origins, source, path)
        else:
            into[k] = _deepcopy(v)
            origins[path] = source
            if isinstance(v, dict):
                _record(v, path, origins, source)


def _deepcopy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _deepcopy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_deepcopy(x) for x in v]
    return v


def _read(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise LLMConfigError(f"{path}: not valid TOML ({e})") from None
    except OSError as e:
        raise LLMConfigError(f"{path}: cannot be read ({e.strerror or e})") from None


def _key_path(loc: tuple) -> str:
    parts = []
    for p in loc:
        s = str(p)
        parts.append(s if s.replace("_", "").replace("-", "").isalnum() else f'"{s}"')
    return ".".join(parts)


class LLMConfig:
    """The effective LLM configuration (see the module docstring).

    Attributes:
        settings: the merged, validated settings.
        files: the user and project files consulted (found or not).
        origins: for each key path (a tuple such as ``("providers", "local", "base_url")``), where its
            value came from: ``default``, ``environment (OPENAI_BASE_URL)``, ``user file`` or ``project file``.
    """

    def __init__(self, settings: LLMSettings, files: list[ConfigFile], origins: dict[tuple, str]):
        self.settings = settings
        self.files = files
        self.origins = origins

    # ------------------------------------------------------------------ lookups
    @property
    def edit_file(self) -> Path:
        """The file a user should edit: the project file when there is a project, else the user file."""
        for f in self.files:
            if f.scope == "project":
                return f.path
        return self.files[0].path

    def provider(self, name: str) -> ProviderSettings:
        """The settings of provider ``name``.

        Raises:
            LLMConfigError: no such provider (the message lists the configured ones).
        """
        try:
            return self.settings.providers[name]
        except KeyError:
            known = ", ".join(sorted(self.settings.providers))
            raise LLMConfigError(f"no provider named '{name}' (configured: {known}); add a [providers.{name}] "
                                 f"table with at least kind = \"openai\" or \"anthropic\" to {self.edit_file}")\
                from None

    def role(self, name: str, model_override: str | None = None) -> RoleConfig:
        """The provider, model and parameters of role ``name``.

        Args:
            name: ``generator``, ``verifier`` or ``judge``.
            model_override: ``MODEL`` (on the role's provider) or ``PROVIDER:MODEL``, e.g. from ``--model``.
                ``PROVIDER:`` is recognised only when PROVIDER is a configured provider's name, so an
                Ollama model such as ``qwen2.5-coder:7b`` stays whole.

        Raises:
            LLMConfigError: unknown role, unknown provider, or no model configured or given (the message
                says what to add to which file, or to pass ``--model``).
        """
        if name not in ROLES:
            raise LLMConfigError(f"unknown role '{name}'; roles are {', '.join(ROLES)}")
        rs: RoleSettings = getattr(self.settings.roles, name)
        provider, model = rs.provider, rs.model
        if model_override is not None:
            provider, model = self._override(model_override, provider)
        settings = self.provider(provider)
        if settings.kind == BUILTIN_PROVIDER:
            raise LLMConfigError(f"provider '{provider}' is of kind builtin: it only embeds text (the embedder "
                                 f"role); the {name} role needs a chat model (a provider of kind openai or "
                                 "anthropic)")
        if not model:
            raise with_remedy(LLMConfigError(
                f"no model configured for the {name} role. Add to {self.edit_file}:\n\n"
                f"[roles.{name}]\nprovider = \"{provider}\"\nmodel = \"MODEL-NAME\""
            ), Remedy.GIVE_MODEL)
        params = {k: getattr(rs, k) for k in PARAM_KEYS if getattr(rs, k) is not None}
        truncation = TruncationPolicy(factor=rs.truncation_retry_factor, retry_max_tokens=rs.retry_max_tokens,
                                      retry=rs.truncation_retry_factor > 1 or rs.retry_max_tokens is not None)
        return RoleConfig(role=name, provider=provider, settings=settings, model=model, params=params,
                          truncation=truncation)

    def _override(self, model_override: str, provider: str) -> tuple[str, str]:
        """``(provider, model)`` of ``--model MODEL`` (on ``provider``) or ``--model PROVIDER:MODEL`` (PROVIDER a
        configured provider's name, so ``qwen2.5-coder:7b`` stays whole).

        Raises:
            LLMConfigError: no model name given.
        """
        override = model_override.strip()
        head, sep, tail = override.partition(":")
        if sep and head in self.settings.providers:
            provider, model = head, tail.strip()
        else:
            model = override
        if not model:
            raise LLMConfigError(f"--model '{model_override}': no model name given (use MODEL or PROVIDER:MODEL)")
        return provider, model

    def embedder(self, model_override: str | None = None, dimensions: int | None = None) -> EmbedderConfig:
        """The ``embedder`` role: provider, model, dimensions and request limits.

        Args:
            model_override: ``MODEL`` (on the role's provider; a built-in model name such as ``hashing`` always
                means the builtin provider) or ``PROVIDER:MODEL``, e.g. from ``--model``.
            dimensions: replaces the configured ``dimensions`` (``--dimensions``); None keeps it.

        Raises:
            LLMConfigError: an unknown provider, a provider of kind anthropic (Anthropic has no embeddings
                endpoint), no model for an openai-kind provider, or a built-in model name that does not exist.
        """
        rs = self.settings.roles.embedder
        provider, model = rs.provider, rs.model
        if model_override is not None:
            if model_override.strip() in BUILTIN_EMBEDDERS:
                provider, model = BUILTIN_PROVIDER, model_override.strip()
            else:
                provider, model = self._override(model_override, provider)
        settings = self.provider(provider)
        _check_embedder_kind(provider, settings.kind, "--model" if model_override else "roles.embedder.provider")
        if settings.kind == BUILTIN_PROVIDER:
            model = model or DEFAULT_EMBEDDER_MODEL
            if model not in BUILTIN_EMBEDDERS:
                raise LLMConfigError(f"no built-in embedder {model!r}; built-in embedders are "
                                     f"{', '.join(BUILTIN_EMBEDDERS)} (for a model served over /v1/embeddings "
                                     "use PROVIDER:MODEL with a provider of kind openai)")
        elif not model:
            raise with_remedy(LLMConfigError(
                f"no model configured for the embedder role on provider '{provider}'. Add to {self.edit_file}:"
                f"\n\n[roles.embedder]\nprovider = \"{provider}\"\nmodel = \"MODEL-NAME\""), Remedy.GIVE_MODEL)
        return EmbedderConfig(provider=provider, settings=settings, model=model,
                              dimensions=dimensions if dimensions is not None else rs.dimensions,
                              max_inputs=rs.max_inputs, max_input_tokens=rs.max_input_tokens,
                              max_request_tokens=rs.max_request_tokens)

    @property
    def prices(self) -> dict[str, Price]:
        """Prices by model name, US dollars per million tokens (for :class:`~.client.LLMClient`)."""
        return {m: Price(**p.model_dump()) for m, p in self.settings.prices.items()}

    # ------------------------------------------------------------------ display
    def _source(self, path: tuple) -> str:
        return self.origins.get(path, SOURCE_DEFAULT)

    def show(self) -> dict:
        """The effective configuration with where each value came from, secrets masked.

        Shape: ``{"files": [{"scope", "path", "found"}], "providers": {NAME: {KEY: {"value", "source"}}},
        "roles": {ROLE: {KEY: {"value", "source"}}}, "prices": {MODEL: {KEY: {"value", "source"}}},
        "agent": {KEY: {"value", "source"}}}`` (``agent``: the ``[agent]`` table; None = the built-in default).
        Each provider has an extra ``api_key`` entry whose value is ``(set)``, ``(not set)`` or
        ``(not needed)`` (source ``environment``); the key itself is never included.
        """
        out: dict[str, Any] = {
            "files": [{"scope": f.scope, "path": str(f.path), "found": f.found} for f in self.files],
            "providers": {}, "roles": {}, "prices": {},
        }
        for name in sorted(self.settings.providers):
            p = self.settings.providers[name]
            entry = {k: {"value": v, "source": self._source(("providers", name, k))}
                     for k, v in p.model_dump().items()}
            if p.api_key_env:
                state = "(set)" if os.environ.get(p.api_key_env, "").strip() else "(not set)"
            else:
                state = "(not needed)"
            entry["api_key"] = {"value": state, "source": "environment"}
            out["providers"][name] = entry
        for role in (*ROLES, EMBEDDER_ROLE):
            rs = getattr(self.settings.roles, role)
            out["roles"][role] = {k: {"value": v, "source": self._source(("roles", role, k))}
                                  for k, v in rs.model_dump().items()}
        if out["roles"][EMBEDDER_ROLE]["model"]["value"] is None \
                and self.provider(self.settings.roles.embedder.provider).kind == BUILTIN_PROVIDER:
            out["roles"][EMBEDDER_ROLE]["model"] = {"value": DEFAULT_EMBEDDER_MODEL, "source": SOURCE_DEFAULT}
        for model in sorted(self.settings.prices):
            out["prices"][model] = {k: {"value": v, "source": self._source(("prices", model, k))}
                                    for k, v in self.settings.prices[model].model_dump().items()}
        out["agent"] = {k: {"value": v, "source": self._source(("agent", k))}
                        for k, v in self.settings.agent.model_dump().items()}
        return out


def config_files(project_dir: str | os.PathLike | None) -> list[ConfigFile]:
    """The user file and (with a project folder) the project file, in precedence order (lowest first)."""
    files = [ConfigFile("user", config_path().parent / FILE_NAME, False)]
    if project_dir is not None:
        files.append(ConfigFile("project", Path(project_dir) / FILE_NAME, False))
    return [ConfigFile(f.scope, f.path, f.path.is_file()) for f in files]


def load_llm_config(project_dir: str | os.PathLike | None = None) -> LLMConfig:
    """Read and merge the built-in defaults, the user file and the project file (``project_dir`` is the
    folder of the project database; None: user file only).

    Raises:
        LLMConfigError: a file is not valid TOML, has an unknown key or a value of the wrong type or
            range (the message names the file and the key path), or a role names an unknown provider.
    """
    merged, origins = _builtin_layer()
    files = config_files(project_dir)
    layers: dict[str, dict] = {}
    for f in files:
        data = _read(f.path)
        if data is None:
            continue
        layers[f.scope] = data
        _merge(merged, data, origins, SOURCE_PROJECT if f.scope == "project" else SOURCE_USER)
    by_scope = {f.scope: f.path for f in files}

    def where(loc: tuple) -> str:
        """The file(s) that set the longest existing prefix of ``loc``."""
        for n in range(len(loc), 0, -1):
            hits = [str(by_scope[s]) for s, d in layers.items() if _has(d, loc[:n])]
            if hits:
                return " and ".join(hits)
        return " and ".join(str(p) for p in by_scope.values()) or "benchwright.toml"

    def line(loc: tuple) -> str:
        """`` (line N)``: where ``loc`` (or its longest prefix) is written, when one file sets it."""
        for n in range(len(loc), 0, -1):
            hits = [by_scope[s] for s, d in layers.items() if _has(d, loc[:n])]
            if hits:
                found = _line_of(hits[0], loc) if len(hits) == 1 else None
                return f" (line {found})" if found else ""
        return ""

    try:
        settings = LLMSettings.model_validate(merged)
    except ValidationError as e:
        lines = []
        for err in e.errors():
            loc = tuple(err["loc"])
            lines.append(f"{where(loc)}: {_key_path(loc)}: {_message(err)}{line(loc)}")
        raise LLMConfigError("invalid LLM configuration:\n  " + "\n  ".join(lines)) from None
    for role in ROLES:
        rs: RoleSettings = getattr(settings.roles, role)
        if rs.provider not in settings.providers:
            loc = ("roles", role, "provider")
            known = ", ".join(sorted(settings.providers))
            raise LLMConfigError(f"{where(loc)}: roles.{role}.provider: no provider named '{rs.provider}' "
                                 f"(configured: {known}); add a [providers.{rs.provider}] table{line(loc)}")
        if settings.providers[rs.provider].kind == BUILTIN_PROVIDER:
            loc = ("roles", role, "provider")
            raise LLMConfigError(f"{where(loc)}: roles.{role}.provider: provider '{rs.provider}' is of kind builtin, "
                                 f"which only embeds text (the embedder role); the {role} role needs a provider of "
                                 f"kind openai or anthropic{line(loc)}")
    emb = settings.roles.embedder
    loc = ("roles", EMBEDDER_ROLE, "provider")
    if emb.provider not in settings.providers:
        known = ", ".join(sorted(settings.providers))
        raise LLMConfigError(f"{where(loc)}: roles.embedder.provider: no provider named '{emb.provider}' "
                             f"(configured: {known}); add a [providers.{emb.provider}] table{line(loc)}")
    try:
        _check_embedder_kind(emb.provider, settings.providers[emb.provider].kind, "roles.embedder.provider")
    except LLMConfigError as e:
        raise LLMConfigError(f"{where(loc)}: {e}{line(loc)}") from None
    return LLMConfig(settings, files, origins)


def _check_embedder_kind(provider: str, kind: str, key: str) -> None:
    """Refuse a provider kind the embedder role cannot use (anthropic: no embeddings endpoint).

    Raises:
        LLMConfigError: naming ``key`` (the configuration key or option that chose the provider).
    """
    if kind not in EMBEDDER_KINDS:
        raise LLMConfigError(f"{key}: provider '{provider}' is of kind {kind}, which has no embeddings endpoint "
                             "(Anthropic offers none); the embedder role takes a provider of kind builtin (the "
                             "default, offline) or openai (any OpenAI-compatible /v1/embeddings server)")


_TOML_HEADER = re.compile(r"^\s*\[(?!\[)(.+?)\]\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"^\s*((?:\"(?:[^\"\\]|\\.)*\"|'[^']*'|[A-Za-z0-9_-]+)"
                       r"(?:\s*\.\s*(?:\"(?:[^\"\\]|\\.)*\"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=")


def _toml_key(text: str) -> tuple:
    """The path of a TOML key as written (``providers."gpt-4.1"``), or () when it is not one."""
    try:
        value: Any = tomllib.loads(f"{text} = 0")
    except tomllib.TOMLDecodeError:
        return ()
    path: list[str] = []
    while isinstance(value, dict) and len(value) == 1:
        k, value = next(iter(value.items()))
        path.append(k)
    return tuple(path)


def _line_of(path: Path, loc: tuple) -> int | None:
    """The 1-based line of ``path`` that writes the longest prefix of ``loc`` (a ``key = `` line, or the table's
    header), best effort for the error message; None when none is found or the file cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    loc = tuple(str(p) for p in loc)
    table: tuple = ()
    best, best_len = None, 0
    for i, raw in enumerate(text.splitlines(), 1):
        m = _TOML_HEADER.match(raw)
        if m:
            table = full = _toml_key(m.group(1).strip())
        else:
            k = _TOML_KEY.match(raw)
            if not k:
                continue
            key = _toml_key(k.group(1))
            if not key:
                continue
            full = table + key
        if full and loc[:len(full)] == full and len(full) > best_len:
            best, best_len = i, len(full)
    return best


def _has(data: Any, loc: tuple) -> bool:
    for p in loc:
        if not isinstance(data, dict) or p not in data:
            return False
        data = data[p]
    return True


def _message(err: dict) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key (check the spelling; see docs/llm.md for the keys)"
    if kind == "missing":
        return "required key is missing"
    got = err.get("input")
    if kind.endswith("_type") or kind == "literal_error":
        return f"{err['msg']} (got {got!r})"
    return str(err["msg"]).removeprefix("Value error, ")


def build_provider(config: LLMConfig, role_config: RoleConfig, http_client: Any = None) -> Provider:
    """The :class:`~.base.Provider` for ``role_config``; the SDK of its kind is imported only now.

    Args:
        config: the loaded configuration (the role already carries its provider's settings; kept so
            replacement factories ``(config, role_config) -> Provider`` can look up anything else).
        role_config: from :meth:`LLMConfig.role`.
        http_client: an ``httpx2.AsyncClient`` to send through (tests), else the SDK's own.

    Raises:
        LLMConfigError: the API key's environment variable is not set (named in the message).
    """
    s = role_config.settings
    kwargs = dict(base_url=s.base_url, api_key_env=s.api_key_env, timeout_s=s.timeout_s,
                  max_retries=s.max_retries, concurrency=s.concurrency, structured_output=s.structured_output,
                  http_client=http_client, tools=s.tools)
    if s.kind == "anthropic":
        from .anthropic_provider import AnthropicProvider

        return AnthropicProvider(role_config.provider, **kwargs)
    from .openai_provider import OpenAIProvider

    return OpenAIProvider(role_config.provider, **kwargs)
