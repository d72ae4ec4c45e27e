"""Adapters that plug graphmem into agent frameworks' memory interfaces: LangGraph's store,
LangChain's retriever and tools, LlamaIndex's memory block, CrewAI's storage, the OpenAI
Agents SDK's tools and Google ADK's memory service.

Each adapter is a module of its own behind an extra of its own (``pip install
'graphmem[langgraph]'``), thin over the public ``Memory``/``AsyncMemory`` API, so it works the
same against ``graphmem serve`` through ``RemoteMemory``/``AsyncRemoteMemory``. Importing this
package imports no framework; importing an adapter without its extra raises an ImportError
that names the extra. See ``docs/guides/integrations/``.
"""
