"""Client constructor arguments of the wrong kind are refused at once, with a typed error."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.client import AsyncMemory, Memory
from graphmem.core.recall.ranking import RecallConfig
from graphmem.errors import ClientUsageError, InvalidInputError
from graphmem.settings import load_settings
from tests.helpers import FakeEmbedder


class NoDimension:
    def embed(self, texts: Any) -> Any:
        raise AssertionError("never called")


@pytest.mark.parametrize("client", [Memory, AsyncMemory])
@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("user-42",), {}, "settings must be a GraphmemSettings, got str .*ns="),
        ((), {"settings": {"neo4j_uri": "local"}}, "settings must be a GraphmemSettings"),
        ((), {"embedder": "all-MiniLM-L6-v2"}, r"embedder must be an object with embed\(\)"),
        ((), {"extractor": object()}, r"extractor must be an object with extract\(\)"),
        ((), {"token_counter": object()}, r"token_counter must be an object with count\(\)"),
        ((), {"recall_config": 5}, "recall_config must be a RecallConfig or a mapping"),
        ((), {"embedder": NoDimension()}, "embedder must be an object with a positive int"),
    ],
)
def test_wrong_arguments_are_refused(
    client: type[Memory | AsyncMemory], args: tuple[Any, ...], kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ClientUsageError, match=match):
        client(*args, **kwargs)


@pytest.mark.parametrize("client", [Memory, AsyncMemory])
def test_a_recall_config_may_be_a_mapping(client: type[Memory | AsyncMemory]) -> None:
    settings = load_settings(recall_min_score=0.35)
    made = client(settings, embedder=FakeEmbedder(), recall_config={"fusion": "linear"})
    # The mapping changes some fields of the configuration the settings give.
    assert made.recall_config == RecallConfig(fusion="linear", min_score=0.35)
    given = RecallConfig(pool_min=40)
    assert client(settings, embedder=FakeEmbedder(), recall_config=given).recall_config == given
    # A config changed with model_copy skipped pydantic's checks: it is checked here.
    unchecked = given.model_copy(update={"pool_factor": 0})
    with pytest.raises(InvalidInputError, match="pool_factor"):
        client(settings, embedder=FakeEmbedder(), recall_config=unchecked)
    with pytest.raises(InvalidInputError, match="fusion"):
        client(settings, embedder=FakeEmbedder(), recall_config={"fusion": "bogus"})
    # No value is converted between types, as for every other argument; lists are tuples.
    for wrong, field in (
        ({"recency": "false"}, "recency: Input should be a valid boolean, got 'false'"),
        ({"recency": 0}, "recency: Input should be a valid boolean"),
        ({"rrf_k": "60"}, "rrf_k: Input should be a valid integer"),
        ({"rrf_k": 60.0}, "rrf_k: Input should be a valid integer"),
        ({"pool_factor": True}, "pool_factor: Input should be a valid integer, got True"),
        ({"min_score": "0.3"}, "min_score: Input should be a valid number"),
        ({"vector_widen": [True]}, "vector_widen.0: Input should be a valid integer"),
    ):
        with pytest.raises(InvalidInputError, match=field):
            client(settings, embedder=FakeEmbedder(), recall_config=wrong)
        with pytest.raises(InvalidInputError, match=field):
            client(settings, embedder=FakeEmbedder(), recall_config=given.model_copy(update=wrong))
    listed = {"retrievers": ["vector"], "vector_widen": [], "vector_weight": 1}
    made = client(settings, embedder=FakeEmbedder(), recall_config=listed)
    assert made.recall_config.retrievers == ("vector",) and made.recall_config.vector_widen == ()
    assert made.recall_config.vector_weight == 1.0


@pytest.mark.parametrize("client", [Memory, AsyncMemory])
def test_the_default_embedder_loads_its_model_on_first_use(
    client: type[Memory | AsyncMemory],
) -> None:
    from graphmem.embed.identity import DEFAULT_MODEL_ID
    from graphmem.embed.onnx_embedder import OnnxEmbedder

    made = client(load_settings())
    assert isinstance(made.embedder, OnnxEmbedder)
    assert (made.embedder.model_id, made.embedder.dimension) == (f"{DEFAULT_MODEL_ID}@int8", 384)
    assert not made.embedder.loaded
