"""The LLM layer: providers (OpenAI, Anthropic, scripted fake), the ledger-backed client, configuration.

Providers' SDKs are imported only when a provider of that kind is built (:func:`.config.build_provider`).
"""

from .base import (
    CallStatus,
    ChatMessage,
    LLMConfigError,
    LLMError,
    LLMRefusalError,
    LLMRequest,
    LLMResponse,
    Provider,
    StructuredOutput,
    ToolCall,
    ToolProtocol,
    ToolSpec,
    Usage,
)
from .client import CallRecord, CallResult, Ledger, LLMClient, MemoryLedger, Price, parse_json_output
from .fake import Delay, Reply, ScriptedProvider

__all__ = [
    "CallRecord",
    "CallResult",
    "CallStatus",
    "ChatMessage",
    "Delay",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMRefusalError",
    "LLMRequest",
    "LLMResponse",
    "Ledger",
    "MemoryLedger",
    "Price",
    "Provider",
    "Reply",
    "ScriptedProvider",
    "StructuredOutput",
    "ToolCall",
    "ToolProtocol",
    "ToolSpec",
    "Usage",
    "parse_json_output",
]
