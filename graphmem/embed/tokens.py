"""Token counting for ``context``: a real tokenizer, never a characters-per-token guess.

The default is the WordPiece tokenizer shipped with the default embedding model (it loads
offline from site-packages), made safe for LLM prompts by :class:`WordPieceBudgetCounter`: text
that WordPiece cannot see (``[UNK]`` spans, characters its normaliser deletes) is counted by its
UTF-8 bytes. Any Hugging Face ``tokenizer.json`` can be configured with
``GRAPHMEM_CONTEXT_TOKENIZER``, for example the one of the LLM the context is written for
(counted exactly as that tokenizer splits the text), and ``tiktoken:<encoding>`` uses tiktoken
when it is installed and its encoding is cached.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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


class WordPieceBudgetCounter(HFTokenizerCounter):
    """A WordPiece count that is a safe budget for LLM prompts on text WordPiece cannot see.

    WordPiece turns a word it cannot spell from its vocabulary into one ``[UNK]`` token (any
    word over ``max_input_chars_per_word``, 100 characters: a base64 key, a hash, a long URL; a
    whole Thai sentence; a run of emoji) and its normaliser deletes some characters outright
    (control and format characters such as zero-width spaces, private-use characters, combining
    marks), where an LLM's byte-level BPE spends up to one token per UTF-8 byte. The rule:

    - every token other than ``[UNK]`` counts 1, exactly as plain WordPiece;
    - each ``[UNK]`` token counts the UTF-8 bytes of the text it stands for (its span in the
      fast tokenizer's offsets) instead of 1;
    - outside those spans, each maximal run of characters that the normaliser deletes (a
      character normalised alone gives the empty string; whitespace becomes a space, so it is not
      deleted) counts its UTF-8 bytes plus 1, the 1 because deleting the run can join the words on
      either side into one WordPiece token (``"a\\u200bb"`` is the single token ``ab``).

    Bytes, not one token a character: cl100k_base spends 2 tokens on each U+200D, U+2060 or
    U+202E, 3 on a private-use character and 3 or 4 on a tag character, so only bytes, a
    byte-level BPE's worst case, bound them. Text WordPiece tokenizes normally, ordinary English
    included, counts exactly as plain WordPiece (accents it strips count as the stripped word:
    ``café`` as ``cafe``).
    """

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        super().__init__(path, name=name)
        unk = getattr(self._tokenizer.model, "unk_token", None)
        unk_id = self._tokenizer.token_to_id(unk) if isinstance(unk, str) else None
        self._unk_id = -1 if unk_id is None else unk_id
        #: The characters looked at so far, and those of them that the normaliser deletes.
        self._seen: set[str] = set()
        self._deleted: set[str] = set()
        ascii_deleted = self._deleted_among(set(map(chr, range(128))))
        self._ascii_runs = self._runs_of(ascii_deleted)
        #: The ASCII bytes the normaliser keeps: deleting them from an ASCII text leaves nothing
        #: unless the text has one it deletes (far faster than a regular expression search).
        self._ascii_kept = bytes(c for c in range(128) if chr(c) not in ascii_deleted)

    def _deleted_among(self, chars: set[str]) -> set[str]:
        """The characters of ``chars`` that the normaliser deletes (normalised alone: "")."""
        normalizer = self._tokenizer.normalizer
        for char in chars - self._seen:
            if normalizer is not None and normalizer.normalize_str(char) == "":
                self._deleted.add(char)
            self._seen.add(char)
        return chars & self._deleted

    @staticmethod
    def _runs_of(chars: set[str]) -> re.Pattern[str] | None:
        """A pattern for runs of ``chars`` (``None`` for no characters)."""
        pattern = "".join(sorted(chars))
        return re.compile(f"[{re.escape(pattern)}]+") if pattern else None

    def _deleted_tokens(self, text: str) -> int:
        """The UTF-8 bytes of the characters in ``text`` that the normaliser deletes, plus one
        for each run of them (deleting a run can join two words into one token)."""
        if text.isascii():  # O(1) in CPython; ordinary English takes this path
            runs = self._ascii_runs
            if runs is None or not text.encode("ascii").translate(None, self._ascii_kept):
                return 0
        else:
            runs = self._runs_of(self._deleted_among(set(text)))
            if runs is None:
                return 0
        return sum(len(run.encode("utf-8")) + 1 for run in runs.findall(text))

    def count(self, text: str) -> int:
        if not text:
            return 0
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        ids = encoding.ids
        total = len(ids) + self._deleted_tokens(text)
        if self._unk_id in ids:
            unknown = [o for i, o in zip(ids, encoding.offsets, strict=True) if i == self._unk_id]
            total -= len(unknown)
            for start, end in _merged(unknown):
                span = text[start:end]
                total += len(span.encode("utf-8")) - self._deleted_tokens(span)
        return total


def _merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (start, end) sorted and merged where they overlap."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


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


def default_counter() -> WordPieceBudgetCounter:
    """The tokenizer of the packaged all-MiniLM-L6-v2 model, ``[UNK]`` and deleted text by bytes."""
    from graphmem.embed.identity import DEFAULT_MODEL_ID, packaged_model_path

    return WordPieceBudgetCounter(
        packaged_model_path(),
        name=f"{DEFAULT_MODEL_ID} (WordPiece; [UNK] spans and deleted characters as UTF-8 bytes)",
    )


def counter_from_setting(value: str | None) -> TokenCounter:
    """``None``: the default; ``tiktoken:NAME``; otherwise a path to a ``tokenizer.json``."""
    if not value:
        return default_counter()
    if value.startswith("tiktoken:"):
        return TiktokenCounter(value.removeprefix("tiktoken:"))
    return HFTokenizerCounter(value)
