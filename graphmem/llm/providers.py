"""Which LLM ``GRAPHMEM_LLM`` names, and graphiti-core's client for it.

``GRAPHMEM_LLM`` is ``provider:model``. The OpenAI-compatible servers (Ollama, vLLM,
llama.cpp, LM Studio) share graphiti-core's generic client; their names only give a default
base URL. Every client is built with the SDK's own retries off and graphmem's timeout, so the
bounded retry of :mod:`graphmem.llm.client` is the only one.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

from graphmem.errors import LLMConfigurationError
from graphmem.settings.llm import HOSTED, LOCAL_SERVERS, parse_llm


@dataclass(frozen=True)
class LLMSpec:
    """A configured LLM: the provider, the model, where it is served and the key."""

    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 60.0
    max_tokens: int = 4096

    @property
    def generic(self) -> bool:
        """Served through graphiti-core's generic OpenAI-compatible client."""
        return self.provider == "openai-compatible" or self.provider in LOCAL_SERVERS

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


def spec_from_settings(settings: Any) -> LLMSpec:
    """The LLM the settings configure; LLMConfigurationError when none is, or a hosted
    provider has no key."""
    if not settings.llm:
        raise LLMConfigurationError(
            "no LLM is configured: set GRAPHMEM_LLM=provider:model (for example "
            "openai:gpt-4.1-mini, or ollama:llama3.1 for a local server)",
            provider="none",
        )
    provider, model = parse_llm(settings.llm)
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    if provider in HOSTED:
        key = key or os.environ.get(HOSTED[provider])
        if not key:
            raise LLMConfigurationError(
                f"the {provider} LLM needs an API key: set GRAPHMEM_LLM_API_KEY "
                f"(or {HOSTED[provider]})",
                provider=provider,
            )
    base_url = settings.llm_base_url or LOCAL_SERVERS.get(provider)
    if provider == "openai-compatible" and not base_url:
        raise LLMConfigurationError(
            "an openai-compatible LLM needs its server's address: set GRAPHMEM_LLM_BASE_URL "
            "(for example http://localhost:8000/v1)",
            provider=provider,
        )
    return LLMSpec(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=key,
        timeout=settings.llm_timeout,
        max_tokens=settings.llm_max_tokens,
    )


def _module(name: str, provider: str, extra: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise LLMConfigurationError(
            f"the {provider} LLM needs {extra}: pip install 'graphiti-core[{extra}]' "
            f"(import failed: {exc})",
            provider=provider,
        ) from exc


def build_client(spec: LLMSpec) -> Any:
    """graphiti-core's LLM client for ``spec`` (graphiti-core imported with telemetry set as
    the caller configured, see :func:`graphmem.llm.graphiti.import_graphiti`)."""
    from graphiti_core.llm_client.config import LLMConfig

    config = LLMConfig(
        api_key=spec.api_key,
        model=spec.model,
        small_model=spec.model,
        base_url=spec.base_url,
        temperature=0.0,
        max_tokens=spec.max_tokens,
    )
    if spec.generic or spec.provider == "openai":
        import openai

        sdk = openai.AsyncOpenAI(
            # A local server takes any key; the SDK refuses to start without one.
            api_key=spec.api_key or "graphmem-local",
            base_url=spec.base_url,
            timeout=spec.timeout,
            max_retries=0,
        )
        if spec.generic:
            from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

            return OpenAIGenericClient(config, client=sdk, max_tokens=spec.max_tokens)
        from graphiti_core.llm_client.openai_client import OpenAIClient

        return OpenAIClient(config, client=sdk, max_tokens=spec.max_tokens)
    if spec.provider == "anthropic":
        anthropic = _module("anthropic", "anthropic", "anthropic")
        from graphiti_core.llm_client.anthropic_client import AnthropicClient

        sdk = anthropic.AsyncAnthropic(api_key=spec.api_key, timeout=spec.timeout, max_retries=0)
        return AnthropicClient(config, client=sdk, max_tokens=spec.max_tokens)
    if spec.provider == "groq":
        groq = _module("groq", "groq", "groq")
        from graphiti_core.llm_client.groq_client import GroqClient

        llm = GroqClient(config)
        llm.client = groq.AsyncGroq(api_key=spec.api_key, timeout=spec.timeout, max_retries=0)
        return llm
    genai = _module("google.genai", "gemini", "google-genai")
    from graphiti_core.llm_client.gemini_client import GeminiClient

    sdk = genai.Client(api_key=spec.api_key)
    return GeminiClient(config, client=sdk, max_tokens=spec.max_tokens)
