"""What the server tells a host besides its tools: instructions, the prompt on updating
memory without overwriting it, and the resources (the graph model, the analyst library)."""

from __future__ import annotations

from graphmem._files import bundled_resource

INSTRUCTIONS = """\
graphmem is a memory with history. Search before you remember. When something you remember \
changes, add the new fact with `supersedes` set to the old one's id: never store both as \
if both were true, and never try to remove the old one. When two facts conflict and you \
cannot tell which is right, add or mark them with `contradicts`; resolve it once you know. \
get_history explains why a belief changed; search with `as_of` shows what was believed then. \
forget erases for good (a dry run first)."""

UPDATING_MEMORY = """\
You have a long-term memory through the graphmem tools. Keep it true over time:

1. Before remembering, search_memories for the topic. Remember one self-contained fact per \
call ("Alice lives in Berlin", not "she moved").
2. When a new fact replaces one you found (the user moved, changed job, changed their mind), \
call add_memory with `supersedes: [old id]` and a short `reason`. The old fact stays in the \
history, no longer believed. Do not remove it and do not store the new one beside it.
3. When a new fact conflicts with one you found and you cannot tell which is right, call \
add_memory with `contradicts: [old id]`. Both stay believed and marked. When the user settles \
it, call resolve_contradiction with the one to keep.
4. When a memory was simply wrong, delete_memory retracts it (it stays in the history).
5. Only when the user asks for something to be erased (privacy), call forget: first without \
`confirm` to see what would go, then with `confirm: true`.
6. To answer "what did you know then?" or "why did this change?", use search_memories with \
`as_of` and get_history.
"""


def schema_text() -> str:
    """The graph model for someone who knows only Cypher (the analyst library's README)."""
    return (bundled_resource("cypher", "_analyst") / "README.md").read_text(encoding="utf-8")
