"""The I/O-free plans of every flow: remember, ingest, recall, context and the reads.

Each operation is a generator that yields what it needs done (embed these texts, run this
transaction) and receives the answer; the clients in :mod:`graphmem.client` carry the steps
out, synchronously or with asyncio. Nothing here opens a connection or a file.
"""
