"""What tests of graphmem, and of an application built on it, use: a local OpenAI-compatible
server that replays scripted LLM answers (:mod:`graphmem.testing.llm_stub`), so that the LLM
paths (extraction, consolidation) run through the real clients with no network and no key."""
