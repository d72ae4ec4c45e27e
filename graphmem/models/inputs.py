"""What the clients take: facts to remember and messages to ingest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, TypedDict

from pydantic import (
    AfterValidator,
    BeforeValidator,
    StrictBool,
    model_validator,
)

from graphmem._text import brief
from graphmem.models.fields import (
    MAX_TEXT_CHARS,
    AbsoluteDatetime,
    AwareDatetime,
    EpisodeText,
    FactText,
    Id,
    Ids,
    Importance,
    InputModel,
    Label,
    Metadata,
    Tags,
    Text,
    text_type,
)

#: Who wrote a message: the roles of the chat formats graphmem reads.
ROLES = ("user", "assistant", "system", "tool")


def _known_role(value: str) -> str:
    if value not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}; got {brief(value)}")
    return value


#: A message's role: one of :data:`ROLES`; ``None`` (a JSON null) means the default, ``user``.
Role = Annotated[
    Label,
    AfterValidator(_known_role),
    BeforeValidator(lambda value: "user" if value is None else value),
]

#: Why a fact supersedes, references or contradicts others, or why a fact is contradicted,
#: resolved or retracted: kept on the edge or the fact.
Reason = Annotated[Text, text_type(MAX_TEXT_CHARS, "reason")]


# --- inputs -------------------------------------------------------------------------------------
class FactInput(InputModel):
    """One fact to remember (the batch form of :meth:`Memory.remember` takes a list of them)."""

    text: FactText
    source: Label | None = None
    tags: Tags = ()
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    supersedes: Ids = ()
    references: Ids = ()
    contradicts: Ids = ()
    metadata: Metadata = None
    pinned: StrictBool = False
    reason: Reason | None = None
    importance: Importance | None = None

    @model_validator(mode="after")
    def _check(self) -> FactInput:
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError(
                f"valid_to ({self.valid_to.isoformat()}) must be after valid_from "
                f"({self.valid_from.isoformat()})"
            )
        links = {
            "supersedes": self.supersedes,
            "references": self.references,
            "contradicts": self.contradicts,
        }
        for name, ids in links.items():
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name} lists the same id twice")
        named = [i for ids in links.values() for i in ids]
        if len(set(named)) != len(named):
            raise ValueError(
                "an id appears in more than one of supersedes, references and contradicts"
            )
        if self.reason is not None and not named:
            raise ValueError(
                "reason is kept on the SUPERSEDES, REFERENCES and CONTRADICTS edges: give "
                "supersedes, references or contradicts with it"
            )
        return self


class FactFields(TypedDict, total=False):
    """The keyword arguments of ``remember`` besides the text: :class:`FactInput`'s fields."""

    #: Where the fact comes from (a label of the caller's choice).
    source: str | None
    #: Tags for filtering recall (at most 32).
    tags: Sequence[str]
    #: When it became true in the world (valid time; ISO 8601 with a zone).
    valid_from: datetime | str | None
    #: When it stopped being true (valid time; after ``valid_from``).
    valid_to: datetime | str | None
    #: Ids of believed facts this one replaces: retired in the same transaction.
    supersedes: Sequence[str]
    #: Ids of related facts (``REFERENCES`` edges).
    references: Sequence[str]
    #: Ids of believed facts this one conflicts with: an open ``CONTRADICTS`` edge to each;
    #: both stay believed until :meth:`Memory.resolve` settles it.
    contradicts: Sequence[str]
    #: A JSON object stored with the fact.
    metadata: Mapping[str, Any] | None
    #: Pinned facts open every ``context`` block.
    pinned: bool
    #: Why it supersedes, references or contradicts the others (kept on the edges).
    reason: str | None
    #: How much it matters, from 0 to 1 (stored as given; absent: the ``importance_default``
    #: setting counts). It feeds the importance score (``docs/guides/importance.md``).
    importance: float | None


class Message(InputModel):
    """One verbatim message for :meth:`Memory.ingest`.

    ``content`` is stored as given; ``role`` is ``user`` (the default), ``assistant``,
    ``system`` or ``tool``. ``external_id`` is the caller's own id of the message;
    re-sending a message with the same namespace, session and external id (or the same content
    hash, unless both carry external ids, which then tell them apart) does not store it twice.
    """

    content: EpisodeText
    role: Role = "user"
    speaker: Label | None = None
    occurred_at: AbsoluteDatetime | None = None
    external_id: Id | None = None
    session_id: Id | None = None
    metadata: Metadata = None
