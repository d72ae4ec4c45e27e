"""The tools that write: remember, store messages, retract, forget, contradictions,
consolidation and review."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from graphmem.mcp.base import (
    TIMES,
    Ids,
    MessageArg,
    Namespace,
    Reason,
    ToolBase,
    tool,
)
from graphmem.mcp.shape import plain
from graphmem.models.bounds import check_items


class WriteTools(ToolBase):
    """Remembering, changing and forgetting, each in graphmem's own transactions."""

    # --- remembering --------------------------------------------------------------------------
    @tool
    async def add_memory(
        self,
        text: Annotated[str, Field(description="The fact, one self-contained statement.")],
        supersedes: Annotated[
            list[str] | None,
            Field(
                description="Ids of memories this one replaces (an update: they are kept "
                "in the history, no longer believed)."
            ),
        ] = None,
        contradicts: Annotated[
            list[str] | None,
            Field(
                description="Ids of memories this one conflicts with, when it is not clear "
                "which is right: both stay believed, marked, until resolved."
            ),
        ] = None,
        references: Ids = None,
        reason: Reason = None,
        valid_from: Annotated[
            str | None, Field(description="When it became true in the world: " + TIMES)
        ] = None,
        valid_to: Annotated[
            str | None, Field(description="When it stopped being true, if it has: " + TIMES)
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Labels to filter by.")] = None,
        source: Annotated[str | None, Field(description="Where it comes from.")] = None,
        importance: Annotated[
            float | None,
            Field(
                strict=True,
                ge=0.0,
                le=1.0,
                allow_inf_nan=False,
                description="How much it matters, from 0 (trivia) to 1 (essential); leave "
                "it out when unsure.",
            ),
        ] = None,
        namespace: Namespace = None,
    ) -> str:
        """Remember one fact. When it updates something already remembered, search first
        and pass the old memory's id in `supersedes` instead of leaving both: the old one
        stays in the history (get_history shows it) but is no longer believed. When it
        conflicts and you cannot tell which is right, pass `contradicts`. `valid_from` and
        `valid_to` say when it is or was true in the world."""
        ns = self._ns(namespace)
        given = {"supersedes": supersedes, "contradicts": contradicts, "references": references}
        resolved = iter(await self._ids([i for ids in given.values() for i in ids or []], ns))
        fields: dict[str, Any] = {
            **{key: [next(resolved) for _ in ids or []] for key, ids in given.items()},
            "reason": reason,
            "valid_from": self._time("valid_from", valid_from),
            "valid_to": self._time("valid_to", valid_to),
            "tags": tags or [],
            "source": source,
            "importance": importance,
        }
        fact = await self.memory.remember(text, ns=ns, **fields)
        data = {"memory": plain(fact)}
        if fields["supersedes"]:
            data["superseded"] = fields["supersedes"]
        return await self._out(data, ns)

    @tool
    async def add_messages(
        self,
        messages: Annotated[list[MessageArg], Field(description="The messages, in order.")],
        session_id: Annotated[str | None, Field(description="The conversation's id.")] = None,
        extract: Annotated[
            bool | None,
            Field(
                description="Also extract facts with the server's LLM (default: the "
                "server's setting)."
            ),
        ] = None,
        namespace: Namespace = None,
    ) -> str:
        """Store conversation messages verbatim (searchable as kind "message"); a message
        sent again with the same id or content is not stored twice. At most 1,000 messages
        and 4 MB of text a call: send a longer conversation in several calls."""
        ns = self._ns(namespace)
        check_items(messages, "content")
        given = [
            {
                "content": m.content,
                "role": m.role,
                "speaker": m.speaker,
                "occurred_at": m.occurred_at,
                "external_id": m.id,
            }
            for m in messages
        ]
        result = await self.memory.ingest(given, ns=ns, session_id=session_id, extract=extract)
        data = {
            "stored": [e.id for e in result.episodes],
            "duplicates": list(result.duplicates),
            "facts": [plain(f) for f in result.facts],
        }
        return await self._out(data, ns, "facts")

    # --- changing and forgetting --------------------------------------------------------------
    @tool
    async def retract_memory(
        self,
        id: Annotated[str, Field(description="The memory's id.")],
        reason: Reason = None,
        namespace: Namespace = None,
    ) -> str:
        """Stop believing a memory that was wrong ("that was never true"): it leaves search
        and context but stays in the history. To erase it for good, use forget."""
        ns = self._ns(namespace)
        fact = await self.memory.retract(await self._one(id, ns), reason=reason, ns=ns)
        return await self._out({"retracted": plain(fact)}, ns)

    @tool
    async def forget(
        self,
        reason: Annotated[str, Field(description="Why it must be erased (kept, without content).")],
        ids: Ids = None,
        source: Annotated[
            str | None, Field(description="Forget every fact from this source.")
        ] = None,
        session_id: Annotated[
            str | None, Field(description="Forget this conversation's messages.")
        ] = None,
        confirm: Annotated[
            bool, Field(description="false (default): only report what would be erased.")
        ] = False,
        namespace: Namespace = None,
    ) -> str:
        """Erase memories for good (a privacy request): their words leave every index and
        only a tombstone without content stays; the same words cannot be remembered again by
        accident. Give exactly one of `ids`, `source`, `session_id`. Without `confirm: true`
        this is a dry run that reports what would go; call again with confirm to erase (as
        over REST; graphmem's Python API erases unless it asks for a dry run)."""
        ns = self._ns(namespace)
        chosen = [ids is not None, source is not None, session_id is not None]
        if sum(chosen) != 1:
            raise ToolError("give exactly one of ids, source and session_id")
        target = None if ids is None else await self._ids(ids, ns)
        result = await self.memory.forget(
            target,
            reason=reason,
            ns=ns,
            source=source,
            session=session_id,
            # The actor is the call's: the API key's name, or the MCP client's.
            dry_run=not confirm,
        )
        data: dict[str, Any] = {
            "dry_run": result.dry_run,
            "facts": list(result.facts),
            "messages": list(result.episodes),
            "derived": list(result.derived),
            "already_forgotten": list(result.already_forgotten),
            "flagged_for_review": [f.flagged for f in result.flagged],
            "words_kept_elsewhere": {**result.messages_kept, **result.same_text_kept},
        }
        if result.dry_run:
            data["next"] = "nothing was erased; call forget again with confirm: true to erase"
        else:
            data["erasure"] = result.erasure
        return await self._out(data, ns, "facts")

    @tool
    async def mark_contradiction(
        self,
        id_a: Annotated[str, Field(description="One memory's id.")],
        id_b: Annotated[str, Field(description="The other memory's id.")],
        reason: Reason = None,
        namespace: Namespace = None,
    ) -> str:
        """Mark two believed memories as contradicting each other when it is not yet clear
        which is right; both stay believed, each marked with the other, until resolved."""
        ns = self._ns(namespace)
        a, b = await self._ids([id_a, id_b], ns)
        facts = await self.memory.contradict(a, b, reason=reason, ns=ns)
        return await self._out({"marked": [plain(f) for f in facts]}, ns)

    @tool
    async def resolve_contradiction(
        self,
        keep: Annotated[str, Field(description="The id of the memory that is right.")],
        other: Annotated[str, Field(description="The id of the one that is not.")],
        reason: Reason = None,
        namespace: Namespace = None,
    ) -> str:
        """Settle an open contradiction: `keep` stays believed and supersedes `other`, with
        the reason kept in the history."""
        ns = self._ns(namespace)
        kept, dropped = await self._ids([keep, other], ns)
        facts = await self.memory.resolve(kept, dropped, keep=kept, reason=reason, ns=ns)
        return await self._out({"kept": plain(facts[0]), "superseded": plain(facts[1])}, ns)

    @tool
    async def consolidate(
        self,
        confirm: Annotated[
            bool, Field(description="false (default): a dry run that writes nothing.")
        ] = False,
        tiers: Annotated[
            bool | None,
            Field(
                description="Also move facts between the hot, warm and cold tiers (default: "
                "the server's setting)."
            ),
        ] = None,
        namespace: Namespace = None,
    ) -> str:
        """Tidy memory: merge duplicates and supersede outdated facts among what was added
        since the last run (proposed by the server's LLM or heuristic, checked, applied in
        one transaction, undoable), summarise coherent clusters (with an LLM), and promote
        or demote facts by importance. A dry run unless `confirm` is true (as over REST;
        graphmem's Python API applies unless it asks for a dry run); the confirmed run asks the
        proposer again, so what it applies can differ from the dry run's report."""
        ns = self._ns(namespace)
        result = await self.memory.consolidate(ns=ns, force=True, dry_run=not confirm, tiers=tiers)
        data = {
            "status": result.status,
            "run": result.run_id,
            "applied": [plain(op) for op in result.applied],
            "rejected": [plain(op) for op in result.rejected],
            "review": [plain(op) for op in result.review],
        }
        return await self._out(data, ns, "applied")

    @tool
    async def confirm_review(
        self,
        id: Annotated[str, Field(description="The flagged memory's id.")],
        reason: Reason = None,
        namespace: Namespace = None,
    ) -> str:
        """Close a memory's review flags: it was checked and still holds."""
        ns = self._ns(namespace)
        flags = await self.memory.confirm(await self._one(id, ns), reason=reason, ns=ns)
        return await self._out({"closed": list(flags)}, ns, "closed")
