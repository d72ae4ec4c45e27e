"""The LLM layer without a server: settings, providers, error mapping, prompts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from graphmem.errors import (
    ConfigurationError,
    LLMConfigurationError,
    LLMRefusedError,
    LLMUnavailableError,
)
from graphmem.llm.client import _Invalid, _mapped, _Transient
from graphmem.llm.prompts import cluster_prompt, messages_prompt
from graphmem.llm.providers import LLMSpec, spec_from_settings
from graphmem.llm.roles import _valid_from
from graphmem.models import Episode
from graphmem.models.consolidation import Cluster, ClusterEdge, ClusterFact
from graphmem.settings import load_settings
from graphmem.settings.llm import parse_llm

SPEC = LLMSpec(provider="vllm", model="m", base_url="http://localhost:8000/v1", timeout=5.0)


def test_the_llm_setting_is_provider_and_model() -> None:
    assert parse_llm("ollama:llama3.1") == ("ollama", "llama3.1")
    assert parse_llm("openai-compatible:org/model:7b") == ("openai-compatible", "org/model:7b")
    for bad in ("gpt-4", "nobody:model", "openai:"):
        with pytest.raises(ValueError, match="provider"):
            parse_llm(bad)
    with pytest.raises(ConfigurationError, match="GRAPHMEM_LLM"):
        load_settings(llm="gpt-4")


def test_a_hosted_provider_needs_a_key_and_a_local_server_gets_its_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigurationError, match="GRAPHMEM_LLM_API_KEY") as missing:
        spec_from_settings(load_settings(llm="openai:gpt-4.1-mini"))
    assert missing.value.provider == "openai"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert spec_from_settings(load_settings(llm="openai:gpt-4.1-mini")).api_key == "sk-test"
    local = spec_from_settings(load_settings(llm="ollama:llama3.1"))
    assert local.generic and local.base_url == "http://localhost:11434/v1"
    with pytest.raises(LLMConfigurationError, match="GRAPHMEM_LLM_BASE_URL"):
        spec_from_settings(load_settings(llm="openai-compatible:m"))
    with pytest.raises(LLMConfigurationError, match="no LLM is configured"):
        spec_from_settings(load_settings())


class _Status(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status


class APIConnectionError(Exception):
    pass


class RateLimitError(Exception):
    pass


def test_failures_map_to_typed_errors_or_retries() -> None:
    assert isinstance(_mapped(json.JSONDecodeError("x", "doc", 0), SPEC), _Invalid)
    assert isinstance(_mapped(TimeoutError(), SPEC), _Transient)
    assert isinstance(_mapped(RateLimitError(), SPEC), _Transient)
    assert isinstance(_mapped(_Status(503), SPEC), _Transient)
    unreachable = _mapped(APIConnectionError("refused"), SPEC)
    assert isinstance(unreachable, LLMUnavailableError) and "localhost:8000" in str(unreachable)
    key = _mapped(_Status(401), SPEC)
    assert isinstance(key, LLMRefusedError) and "API key" in str(key)
    assert "no model 'm'" in str(_mapped(_Status(404), SPEC))
    assert isinstance(_mapped(_Status(400), SPEC), LLMRefusedError)


def test_the_cluster_prompt_numbers_facts_with_both_clocks_and_edges() -> None:
    at = datetime(2026, 1, 2, tzinfo=UTC)
    facts = tuple(
        ClusterFact(
            number=n, id=f"f{n}", ns="ns", text=t, status="active", recorded_at=at, new=n == 2
        )
        for n, t in ((1, "The user works at Google."), (2, "The user can't eat prawns."))
    )
    edges = (ClusterEdge(type="CONTRADICTS", source=1, target=2, open=True),)
    text = cluster_prompt(Cluster(index=1, facts=facts, edges=edges))
    assert "[1] 'The user works at Google.' (valid open to open; recorded 2026-01-02" in text
    assert '[2] "The user can\'t eat prawns."' in text and "; new)" in text
    assert "1 CONTRADICTS 2 (open)" in text


def test_extraction_takes_a_date_from_the_model_or_the_message_time() -> None:
    sent = datetime(2026, 3, 5, 10, tzinfo=UTC)
    episode = Episode(
        id="e1",
        ns="ns",
        content="I moved here in March.",
        role="user",
        recorded_at=sent,
        occurred_at=sent,
        content_hash="h",
    )
    assert _valid_from("2026-03-01", [episode]) == datetime(2026, 3, 1, tzinfo=UTC)
    assert _valid_from("in March", [episode]) == sent
    assert _valid_from(None, [episode]) == sent
    assert "[1] 2026-03-05T10:00:00+00:00 user: I moved here in March." in messages_prompt(
        [episode]
    )


class _TupleClient:
    """Answers as graphiti-core's OpenAI, Anthropic and Gemini clients do: (dict, in, out)."""

    client = None

    async def _generate_response(self, *args: object, **kwargs: object) -> object:
        return {"reasoning": "r", "operations": []}, 120, 7


class _DictClient:
    """Answers as graphiti-core's generic and Groq clients do: the dict alone."""

    client = None

    async def _generate_response(self, *args: object, **kwargs: object) -> object:
        return {"reasoning": "r", "operations": [{"op": "KEEP", "facts": [1]}]}


def test_both_shapes_of_graphiti_answers_are_read_with_their_token_counts() -> None:
    from graphmem.llm.client import LLM
    from graphmem.models.consolidation import ProposedPlan

    for client, ops, prompt in ((_TupleClient(), 0, 120), (_DictClient(), 1, 0)):
        llm = LLM(SPEC, retries=0, client=client)
        try:
            answer = llm.ask("system", "user", ProposedPlan)
        finally:
            llm.close()
        assert len(answer.value.operations) == ops
        assert answer.usage.calls == 1 and answer.usage.prompt_tokens == prompt
