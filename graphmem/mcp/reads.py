"""The tools that read: search, context, a memory, its history, and the audits."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from graphmem.mcp.base import (
    TIMES,
    Namespace,
    ToolBase,
    hit_data,
    tool,
)
from graphmem.mcp.shape import plain


class ReadTools(ToolBase):
    """Search, context, history and audits: they change nothing but the access counts that
    searches keep (not on a read-only server)."""

    # --- reading ------------------------------------------------------------------------------
    @tool
    async def search_memories(
        self,
        query: Annotated[str, Field(description="What to look for, in words.")],
        limit: Annotated[int, Field(ge=1, le=50, description="Results at most.")] = 10,
        as_of: Annotated[
            str | None,
            Field(
                description="Answer from what was believed then (transaction time): "
                "superseded memories come back as they were. " + TIMES
            ),
        ] = None,
        valid_at: Annotated[
            str | None,
            Field(description="Only what was true in the world at that time (valid time)."),
        ] = None,
        include_superseded: Annotated[
            bool, Field(description="Also return memories no longer believed.")
        ] = False,
        kinds: Annotated[
            list[Literal["fact", "message"]] | None,
            Field(description="fact (remembered facts) and/or message (stored messages)."),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Only facts with a tag.")] = None,
        speakers: Annotated[
            list[str] | None,
            Field(
                description="Only messages said by one of these people (names, any case; a "
                "message stored without a speaker counts as said by its role, e.g. user)."
            ),
        ] = None,
        namespace: Namespace = None,
    ) -> str:
        """Search memory (hybrid: meaning and words). By default only what is believed now;
        each result has its id, text, status, when it was recorded and when it is valid,
        and the memories it contradicts. Use `as_of` to see what was believed at a past
        time, `include_superseded` to see replaced memories too, and `speakers` for what
        someone said (messages only)."""
        ns = self._ns(namespace)
        chosen = kinds or ["fact", "message"]
        result = await self.memory.recall(
            query,
            ns=ns,
            k=limit,
            as_of=self._time("as_of", as_of),
            valid_at=self._time("valid_at", valid_at),
            include_retired=include_superseded,
            kinds=["episode" if k == "message" else "fact" for k in dict.fromkeys(chosen)],
            tags=tags,
            speakers=speakers,
            track_access=self._counts_access(),
        )
        data: dict[str, Any] = {"results": [hit_data(h) for h in result.hits]}
        if result.as_of is not None:
            data["as_of"] = result.as_of
        if not result.hits:
            data["note"] = result.hint or "nothing found"
        return await self._out(data, ns, "results")

    @tool
    async def get_context(
        self,
        query: Annotated[str, Field(description="The topic or the user's message.")],
        budget_tokens: Annotated[
            int, Field(ge=50, le=32_000, description="Tokens the block may take.")
        ] = 1_500,
        as_of: Annotated[
            str | None, Field(description="From what was believed then: " + TIMES)
        ] = None,
        valid_at: Annotated[
            str | None, Field(description="Only what was true in the world then: " + TIMES)
        ] = None,
        include_cold: Annotated[
            bool, Field(description="Also show faded (cold) facts that match.")
        ] = False,
        namespace: Namespace = None,
    ) -> str:
        """A ready-to-read block of what memory holds on a topic, within a token budget:
        pinned facts first, then the relevant ones, with dates and open contradictions
        marked. Use it to prime an answer; use search_memories for ids. A budget larger than
        the server's result cap allows is lowered to fit it."""
        ns = self._ns(namespace)
        # About 4 characters a token, and room for the ids beside the block.
        budget = min(budget_tokens, max(self.options.max_chars // 6, 50))
        block = await self.memory.context(
            query,
            ns=ns,
            budget_tokens=budget,
            as_of=self._time("as_of", as_of),
            valid_at=self._time("valid_at", valid_at),
            track_access=self._counts_access(),
            short_ids=not self.options.full_ids,
            include_cold=include_cold,
        )
        data = {
            "context": block.text,
            "tokens": block.tokens,
            "facts": list(block.fact_ids),
            "messages": list(block.episode_ids),
            "omitted": block.omitted,
        }
        if budget < budget_tokens:
            data["budget_tokens"] = budget
        if block.warning is not None:
            data["warning"] = block.warning
        return await self._out(data, ns)

    @tool
    async def get_memory(
        self, id: Annotated[str, Field(description="The memory's id.")], namespace: Namespace = None
    ) -> str:
        """One memory (fact or message) by id, whole."""
        ns = self._ns(namespace)
        item = await self.memory.get(await self._one(id, ns), ns=ns)
        return await self._out({"memory": item}, ns)

    @tool
    async def get_history(
        self,
        id: Annotated[str, Field(description="The memory's id (any version of it).")],
        namespace: Namespace = None,
    ) -> str:
        """Why a belief changed: an explanation to quote ("believed from … until …, replaced
        by … because …"), what is believed now, every version with its times, and the
        events (updates, merges, retractions, contradictions, review flags, forgetting)."""
        ns = self._ns(namespace)
        fact_id = await self._one(id, ns)
        timeline = await self.memory.audit.timeline(fact_id, ns=ns)
        explanation = await self.memory.audit.explain(fact_id, ns=ns)
        data = {
            "explanation": explanation.text,
            "believed_now": timeline.head_id,
            "versions": [plain(f) for f in timeline.facts],
            "forgotten": list(timeline.forgotten),
            "events": [{"at": e.at, "event": e.kind, "what": e.words} for e in timeline.events],
        }
        # Over the cap, the newest events stay: they say why the belief is what it is now.
        return await self._out(data, ns, "events", tail=True)

    @tool
    async def list_beliefs(
        self,
        as_of: Annotated[str | None, Field(description="The time (default: now): " + TIMES)] = None,
        query: Annotated[str | None, Field(description="Rank by this topic.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Facts at most.")] = 50,
        namespace: Namespace = None,
    ) -> str:
        """Audit: everything believed at a time (transaction time; default now), newest first
        or ranked by `query`, each with its valid interval; forgotten ones without words."""
        ns = self._ns(namespace)
        beliefs = await self.memory.audit.beliefs(as_of, query=query, limit=limit, ns=ns)
        data = {
            "as_of": beliefs.as_of,
            "beliefs": [plain(f) for f in beliefs.facts],
            "forgotten": list(beliefs.forgotten),
            "truncated": beliefs.truncated,
        }
        return await self._out(data, ns, "beliefs")

    @tool
    async def what_changed(
        self,
        since: Annotated[str, Field(description="From (excluded): " + TIMES)],
        until: Annotated[str | None, Field(description="To (included); default now.")] = None,
        namespace: Namespace = None,
    ) -> str:
        """Audit: what became believed, what was retired and how (superseded, merged,
        retracted, forgotten), and which contradictions opened or were resolved, between
        two times."""
        ns = self._ns(namespace)
        diff = await self.memory.audit.diff(since, until, ns=ns)
        timed: list[tuple[Any, dict[str, Any]]] = [
            *((c.at, {"change": "believed", **plain(c)}) for c in diff.believed),
            *((c.at, plain(c)) for c in diff.retired),
            *((e.erased_at, {"change": "forgotten", **plain(e)}) for e in diff.forgotten),
            *(
                (c.at, {"change": "contradiction opened", **plain(c)})
                for c in diff.contradictions_opened
            ),
            *(
                (c.resolved_at or c.at, {"change": "contradiction resolved", **plain(c)})
                for c in diff.contradictions_resolved
            ),
        ]
        timed.sort(key=lambda pair: pair[0])
        changes = [change for _, change in timed]
        data = {"since": diff.since, "until": diff.until, "changes": changes}
        return await self._out(data, ns, "changes")

    @tool
    async def list_contradictions(
        self,
        include_resolved: Annotated[bool, Field(description="Also resolved ones.")] = False,
        namespace: Namespace = None,
    ) -> str:
        """Contradictions between memories: open ones (both sides still believed) and, if
        asked, resolved ones with which side was kept and why."""
        ns = self._ns(namespace)
        found = await self.memory.audit.contradictions(open_only=not include_resolved, ns=ns)
        return await self._out({"contradictions": list(found)}, ns, "contradictions")

    @tool
    async def list_review_flags(
        self,
        id: Annotated[str | None, Field(description="Only this memory's flags.")] = None,
        include_closed: Annotated[bool, Field(description="Also closed flags.")] = False,
        limit: Annotated[int, Field(ge=1, le=500, description="Flags at most.")] = 50,
        namespace: Namespace = None,
    ) -> str:
        """Memories flagged for review because something they depend on changed (a
        referenced fact was superseded, retracted or forgotten): check each and confirm it
        (confirm_review) or update it (add_memory with supersedes)."""
        ns = self._ns(namespace)
        fact_id = None if id is None else await self._one(id, ns)
        flags = await self.memory.review(
            fact_id=fact_id, open_only=not include_closed, limit=limit, ns=ns
        )
        return await self._out({"flags": list(flags)}, ns, "flags")

    @tool
    async def memory_stats(self, namespace: Namespace = None) -> str:
        """Counts: facts by status, messages, sessions, supersessions, open contradictions,
        open review flags, forgotten facts."""
        ns = self._ns(namespace)
        stats = await self.memory.stats(ns=ns)
        return await self._out({"namespace": ns, **plain(stats)}, ns)
