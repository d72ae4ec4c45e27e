"""The public models: what the client accepts and returns (pydantic, validated, JSON-ready).

:mod:`~graphmem.models.inputs` holds what the clients take, :mod:`~graphmem.models.results`
what they return, and :mod:`~graphmem.models.fields` the field types and limits both use.

Input limits (each violation is an :class:`~graphmem.errors.InvalidInputError` and writes
nothing):

* a namespace matches :data:`NAMESPACE_PATTERN`: 1 to 128 characters from letters, digits
  and ``. _ - : @``, starting with a letter or digit;
* a fact's text and a recall query are 1 to :data:`MAX_TEXT_CHARS` characters and not only
  whitespace; an episode's content is at most :data:`MAX_EPISODE_CHARS`;
* every datetime carries a time zone (naive datetimes are ambiguous and refused); values are
  stored in UTC;
* ``valid_to`` must be after ``valid_from``;
* at most :data:`MAX_TAGS` tags of at most :data:`MAX_LABEL_CHARS` characters each; sources,
  roles, speakers, session and external ids are at most :data:`MAX_LABEL_CHARS` characters;
* ``metadata`` is a JSON object of at most :data:`MAX_METADATA_BYTES` bytes once encoded,
  nested at most :data:`MAX_METADATA_DEPTH` objects or arrays deep, with string keys at every
  level (lists and tuples are stored as JSON arrays);
* values are not converted between types: texts, labels and ids are ``str`` (valid Unicode,
  with at least one visible character, see :func:`is_blank`), flags are ``bool``, times are
  datetimes or ISO-8601 strings (a bare number is refused: seconds or milliseconds?).
"""

from graphmem.models.fields import (
    MAX_EPISODE_CHARS,
    MAX_IDS,
    MAX_K,
    MAX_LABEL_CHARS,
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    MAX_TAGS,
    MAX_TEXT_CHARS,
    NAMESPACE_PATTERN,
    AwareDatetime,
    EpisodeText,
    FactStatus,
    FactText,
    Id,
    Ids,
    Kind,
    Label,
    Metadata,
    Namespace,
    StoredDatetime,
    Tags,
    Text,
    check_namespace,
    describe_validation_error,
    is_blank,
    native_time,
    one_or_many,
)
from graphmem.models.inputs import FactFields, FactInput, Message
from graphmem.models.results import (
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    Hit,
    IngestResult,
    NamespaceStats,
    OpenContradiction,
    Provenance,
    RecallResult,
    ReviewMark,
    Scores,
    SourceMessage,
    SupersedesEdge,
    Timing,
)

__all__ = [
    "MAX_EPISODE_CHARS",
    "MAX_IDS",
    "MAX_K",
    "MAX_LABEL_CHARS",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "MAX_TAGS",
    "MAX_TEXT_CHARS",
    "NAMESPACE_PATTERN",
    "AwareDatetime",
    "ContextBlock",
    "Episode",
    "EpisodeText",
    "Fact",
    "FactFields",
    "FactHistory",
    "FactInput",
    "FactStatus",
    "FactText",
    "Hit",
    "Id",
    "Ids",
    "IngestResult",
    "Kind",
    "Label",
    "Message",
    "Metadata",
    "Namespace",
    "NamespaceStats",
    "OpenContradiction",
    "Provenance",
    "RecallResult",
    "ReviewMark",
    "Scores",
    "SourceMessage",
    "StoredDatetime",
    "SupersedesEdge",
    "Tags",
    "Text",
    "Timing",
    "check_namespace",
    "describe_validation_error",
    "is_blank",
    "native_time",
    "one_or_many",
]
