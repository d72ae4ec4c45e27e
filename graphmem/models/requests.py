"""The bodies of the REST API of ``graphmem serve`` (``/v1``): what the remote clients send
and the server reads, one model per flow. Facts and messages are the clients' own
:class:`~graphmem.models.FactInput` (its lists as arrays) and
:class:`~graphmem.models.Message`; the options of recall, context and forget are their keyword
arguments as fields (times as text: ISO 8601 with a zone, a date, or ``3 days ago``). The
server checks every value as the library does, and takes each as the JSON type it is, with no
coercion (``true`` is not 1, ``"5"`` not 5, a lone string not a list)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool

from graphmem._text import brief
from graphmem.models import inputs
from graphmem.models.fields import Ids, Kind, Tags
from graphmem.models.inputs import Message


class RequestModel(BaseModel):
    """A request body: unknown fields are refused, as the library refuses unknown keywords,
    and so is a value of the wrong JSON type (strict: ``true`` is not the number 1, ``"5"``
    not the number 5)."""

    model_config = ConfigDict(extra="forbid", strict=True)


def _array(value: Any) -> Any:
    """A JSON array, as it is: anything else, a lone string too, is refused (the library
    takes a lone string as one item; a request names its list)."""
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected an array, got {brief(value)}")
    return value


#: Tags and ids as a request carries them: an array, never a lone string.
ArrayTags = Annotated[Tags, BeforeValidator(_array)]
ArrayIds = Annotated[Ids, BeforeValidator(_array)]


# Named as the library's model, which it narrows, so that the OpenAPI schema keeps the name.
class FactInput(inputs.FactInput):
    """One fact to remember (the batch form takes a list of them), its tags and ids given as
    arrays."""

    tags: ArrayTags = ()
    supersedes: ArrayIds = ()
    references: ArrayIds = ()
    contradicts: ArrayIds = ()


class RememberRequest(FactInput):
    """``POST /v1/namespaces/{ns}/facts``: one fact, as :meth:`Memory.remember` takes it."""

    allow_forgotten: StrictBool = False


class RememberManyRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/facts/batch``: facts written in one transaction (at most
    1,000 facts and 4 MB of text a call)."""

    facts: list[FactInput]
    allow_forgotten: bool = False


class IngestRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/messages``: messages stored verbatim, each once (at most
    1,000 messages and 4 MB of text a call)."""

    messages: list[Message]
    session_id: str | None = None
    batch_size: int | None = None
    extract: bool | None = None
    allow_forgotten: bool = False


class RecallRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/search``: :meth:`Memory.recall`'s query and options."""

    query: str
    k: int | None = None
    kinds: list[Kind] | None = None
    as_of: str | None = None
    valid_at: str | None = None
    include_retired: bool | None = None
    tags: list[str] | None = None
    speakers: list[str] | None = None
    since: str | None = None
    until: str | None = None
    expand_references: bool | None = None
    min_score: float | None = None
    config: dict[str, Any] | None = None
    track_access: bool | None = None

    def options(self) -> dict[str, Any]:
        """The options given, as the library's keyword arguments (absent ones left out)."""
        return self.model_dump(exclude_unset=True, exclude={"query", "budget_tokens"})


class ContextRequest(RecallRequest):
    """``POST /v1/namespaces/{ns}/context``: :meth:`Memory.context`'s query, budget and
    options."""

    budget_tokens: int
    pinned_limit: int | None = None
    timezone: str | None = None
    short_ids: bool | None = None
    include_cold: bool | None = None


class ReasonRequest(RequestModel):
    """A change with an optional reason: retract, confirm a review flag."""

    reason: str | None = None


class ContradictRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/contradictions``: mark two facts as contradicting."""

    a: str
    b: str
    reason: str | None = None


class ResolveRequest(ContradictRequest):
    """``POST /v1/namespaces/{ns}/contradictions/resolve``: settle one, keeping ``keep``."""

    keep: str


class ForgetRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/forget``: erase for good. A dry run unless ``confirm``."""

    reason: str
    ids: list[str] | None = None
    source: str | None = None
    session: str | None = None
    everything: bool | None = None
    confirm: bool = Field(False, description="false (default): only report what would go.")
    batch_size: int | None = None


class ConsolidateRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/consolidate``: a consolidation run. A dry run unless
    ``confirm``."""

    force: bool = False
    confirm: bool = Field(False, description="false (default): a dry run that writes nothing.")
    tiers: bool | None = Field(
        None,
        description="Run the tier pass (promotions and demotions; default: the server's setting).",
    )
    summaries: bool | None = Field(
        None, description="Summarise coherent clusters (default: the server's setting)."
    )


class VerifyRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/forget/verify``: check that an erasure left no trace."""

    target: str
    text: str | None = None


class PinRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/memories/{id}/pin``: pin or unpin a fact."""

    pinned: bool = True


class DropRequest(RequestModel):
    """``POST /v1/namespaces/{ns}/drop``: remove the namespace for good (admin), or count what
    would go."""

    confirm: bool = Field(
        False,
        description="must be true to remove anything; without it (and without `dry_run`) the "
        "drop is refused with 409 `ConfirmationRequiredError`.",
    )
    dry_run: bool = Field(False, description="count what would be removed; remove nothing.")


class QueryModel(BaseModel):
    """The query parameters of a GET: text in the URL, read as their types (``limit=5``)."""

    model_config = ConfigDict(extra="forbid")


#: How many items a listing answers at most.
Limit = Annotated[int, Field(ge=1, le=1000)]


class ReviewQuery(QueryModel):
    """``GET /v1/namespaces/{ns}/review``: the review flags, of one fact or all."""

    fact_id: str | None = None
    open_only: bool = True
    limit: Limit = 100


class RunsQuery(QueryModel):
    """``GET /v1/namespaces/{ns}/consolidation/runs``: the newest runs, or those of ``ids``."""

    limit: Limit = 20
    ids: list[str] | None = None


class BeliefsQuery(QueryModel):
    """``GET /v1/namespaces/{ns}/audit/beliefs``: what was believed at ``as_of``."""

    as_of: str | None = None
    query: str | None = None
    limit: Limit = 100


class TruthsQuery(QueryModel):
    """``GET /v1/namespaces/{ns}/audit/truths``: what was true at ``valid_at``."""

    valid_at: str
    as_of: str | None = None
    query: str | None = None
    limit: Limit = 100


class DiffQuery(QueryModel):
    """``GET /v1/namespaces/{ns}/audit/diff``: what changed between two times."""

    since: str
    until: str | None = None


class ContradictionsQuery(QueryModel):
    """``GET /v1/namespaces/{ns}/audit/contradictions``: the contradictions."""

    open_only: bool = True
    limit: Limit = 100


__all__ = [
    "BeliefsQuery",
    "ConsolidateRequest",
    "ContextRequest",
    "ContradictRequest",
    "ContradictionsQuery",
    "DiffQuery",
    "DropRequest",
    "FactInput",
    "ForgetRequest",
    "IngestRequest",
    "PinRequest",
    "QueryModel",
    "ReasonRequest",
    "RecallRequest",
    "RememberManyRequest",
    "RememberRequest",
    "RequestModel",
    "ResolveRequest",
    "ReviewQuery",
    "RunsQuery",
    "TruthsQuery",
    "VerifyRequest",
]
