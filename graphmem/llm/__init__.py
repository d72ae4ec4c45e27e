"""The optional LLM layer, on graphiti-core's clients (the ``llm`` extra:
``pip install '<graphmem checkout or wheel>[llm]'``)."""
