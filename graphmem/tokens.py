"""Token counting for ``context``: a real tokenizer, never a characters-per-token guess.

The default is the WordPiece tokenizer shipped with the default embedding model (it loads
offline from site-packages). Any Hugging Face ``tokenizer.json`` can be configured with
``GRAPHMEM_CONTEXT_TOKENIZER``, for example the one of the LLM the context is written for, and
``tiktoken:<encoding>`` uses tiktoken when it is installed and its encoding is cached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from graphmem.errors import ConfigurationError


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text the way a model's tokenizer splits it."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


class HFTokenizerCounter:
    """Counts with a Hugging Face ``tokenizers`` tokenizer (no special tokens, no truncation)."""

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        from tokenizers import Tokenizer

        path = Path(path).expanduser()
        if path.is_dir():
            path = path / "tokenizer.json"
        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises its own exception types
            raise ConfigurationError(f"cannot load a tokenizer from {path}: {exc}") from exc
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._name = name or str(path)

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


class TiktokenCounter:
    """Counts with a tiktoken encoding (``pip install tiktoken``; the encoding must be cached)."""

    def __init__(self, encoding: str) -> None:
        try:
            import tiktoken  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            raise ConfigurationError(
                f"the tokenizer 'tiktoken:{encoding}' needs the tiktoken package"
            ) from exc
        try:
            self._encoding: Any = tiktoken.get_encoding(encoding)
        except Exception as exc:  # network or unknown-encoding errors
            raise ConfigurationError(
                f"cannot load the tiktoken encoding {encoding!r}: {exc}"
            ) from exc
        self._name = f"tiktoken:{encoding}"

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


def default_counter() -> HFTokenizerCounter:
    """The tokenizer of the packaged all-MiniLM-L6-v2 model."""
    from graphmem.embeddings import DEFAULT_MODEL_ID, packaged_model_path

    return HFTokenizerCounter(packaged_model_path(), name=f"{DEFAULT_MODEL_ID} (WordPiece)")


def counter_from_setting(value: str | None) -> TokenCounter:
    """``None``: the default; ``tiktoken:NAME``; otherwise a path to a ``tokenizer.json``."""
    if not value:
        return default_counter()
    if value.startswith("tiktoken:"):
        return TiktokenCounter(value.removeprefix("tiktoken:"))
    return HFTokenizerCounter(value)
