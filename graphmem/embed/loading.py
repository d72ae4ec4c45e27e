"""The embedder a run uses: the one it was given, or the one the settings name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphmem.embed.embedder import Embedder
    from graphmem.settings import GraphmemSettings


def load_embedder(
    settings: GraphmemSettings, embedder: Embedder | None, say: Callable[[str], None]
) -> Embedder:
    """``embedder``, or the one the settings name, loaded now (it may take a while)."""
    if embedder is not None:
        return embedder
    from graphmem.embed.embedder import SentenceTransformerEmbedder

    say(f"loading the embedder ({settings.embedding_model or 'default model'})")
    return SentenceTransformerEmbedder.from_settings(settings)


__all__ = ["load_embedder"]
