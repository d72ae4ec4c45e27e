"""Consolidation: the gate, the clusters, the proposers' plans, their validation, the apply
and undo (see :mod:`graphmem.core.consolidate.plan`)."""
