"""The LLM providers ``GRAPHMEM_LLM`` may name, and how its ``provider:model`` is read: the
settings check it when they load, and :mod:`graphmem.llm.providers` builds the client."""

from __future__ import annotations

#: The local OpenAI-compatible servers graphmem knows, with the base URL each listens on.
LOCAL_SERVERS = {
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "llamacpp": "http://localhost:8080/v1",
    "lmstudio": "http://localhost:1234/v1",
}
#: The hosted providers, with the environment variable their own SDK reads the key from.
HOSTED = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GOOGLE_API_KEY",
    "groq": "GROQ_API_KEY",
}
PROVIDERS = (*HOSTED, "openai-compatible", *LOCAL_SERVERS)


def parse_llm(value: str) -> tuple[str, str]:
    """``provider:model`` split and checked; a ValueError says what is wrong."""
    provider, sep, model = value.strip().partition(":")
    provider = provider.strip().lower()
    if not sep or not model.strip():
        raise ValueError(f"{value!r} is not provider:model (for example openai:gpt-4.1-mini)")
    if provider not in PROVIDERS:
        raise ValueError(f"unknown LLM provider {provider!r}; known: {', '.join(PROVIDERS)}")
    return provider, model.strip()


__all__ = ["HOSTED", "LOCAL_SERVERS", "PROVIDERS", "parse_llm"]
