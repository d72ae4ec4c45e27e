"""The optional LLM layer, on graphiti-core's clients (``pip install 'graphmem[llm]'``)."""
