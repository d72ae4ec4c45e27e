"""What the server tells a host besides its tools: instructions, the prompt on updating
memory without overwriting it, and the resources (the graph model, the analyst library)."""

from __future__ import annotations

from collections.abc import Collection

from graphmem._files import bundled_resource


def instructions(tools: Collection[str]) -> str:
    """The server's instructions to a host, naming only the ``tools`` it exposes."""
    parts = ["graphmem is a memory with history."]
    if "search_memories" in tools and "add_memory" in tools:
        parts.append("Search before you remember.")
    if "add_memory" in tools:
        parts.append(
            "When something you remember changes, add the new fact with `supersedes` set to "
            "the old one's id: never store both as if both were true, and never try to remove "
            "the old one. When two facts conflict and you cannot tell which is right, add the "
            "new one with `contradicts`"
            + ("; resolve it once you know." if "resolve_contradiction" in tools else ".")
        )
    if "get_history" in tools:
        parts.append("get_history explains why a belief changed.")
    if "search_memories" in tools:
        parts.append("search_memories with `as_of` shows what was believed then.")
    if "retract_memory" in tools:
        parts.append("retract_memory stops believing a fact that was wrong (it stays in history).")
    if "forget" in tools:
        parts.append("forget erases for good, on a privacy request (a dry run first).")
    return " ".join(parts)


def memory_guidelines(tools: Collection[str]) -> str:
    """The prompt on keeping memory true, naming only the ``tools`` the server exposes."""
    steps: list[str] = []
    if "search_memories" in tools:
        steps.append(
            "Before remembering, search_memories for the topic. Remember one self-contained "
            'fact per call ("Alice lives in Berlin", not "she moved").'
        )
    if "add_memory" in tools:
        steps.append(
            "When a new fact replaces one you found (the user moved, changed job, changed "
            "their mind), call add_memory with `supersedes: [old id]` and a short `reason`. The "
            "old fact stays in the history, no longer believed. Do not remove it and do not "
            "store the new one beside it."
        )
        settle = (
            " When the user settles it, call resolve_contradiction with the one to keep."
            if "resolve_contradiction" in tools
            else ""
        )
        steps.append(
            "When a new fact conflicts with one you found and you cannot tell which is right, "
            "call add_memory with `contradicts: [old id]`. Both stay believed and marked." + settle
        )
    if "retract_memory" in tools:
        steps.append(
            "When a memory was simply wrong, retract_memory stops believing it (it stays in "
            "the history)."
        )
    if "forget" in tools:
        steps.append(
            "Only when the user asks for something to be erased (privacy), call forget: first "
            "without `confirm` to see what would go, then with `confirm: true`. Forgetting is "
            "the only way to remove words; it cannot be undone."
        )
    asks = [t for t in ("search_memories", "get_history") if t in tools]
    if asks:
        steps.append(
            'To answer "what did you know then?" or "why did this change?", use '
            + " and ".join(
                "search_memories with `as_of`" if t == "search_memories" else t for t in asks
            )
            + "."
        )
    numbered = "\n".join(f"{n}. {step}" for n, step in enumerate(steps, 1))
    return (
        "You have a long-term memory through the graphmem tools. Keep it true over time:\n\n"
        + numbered
        + "\n"
    )


def schema_text() -> str:
    """The graph model for someone who knows only Cypher (the analyst library's README)."""
    return (bundled_resource("cypher", "_analyst") / "README.md").read_text(encoding="utf-8")
