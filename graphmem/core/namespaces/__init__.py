"""Namespaces as things to manage: every namespace listed with its counts
(:mod:`~graphmem.core.namespaces.listing`), one exported with its whole history to a documented,
streamed format (:mod:`~graphmem.core.namespaces.export`,
:mod:`~graphmem.core.namespaces.document`, :mod:`~graphmem.core.namespaces.records`), imported
exactly into an empty namespace, all or nothing (:mod:`~graphmem.core.namespaces.importer`),
and dropped whole (:mod:`~graphmem.core.namespaces.drop`)."""
