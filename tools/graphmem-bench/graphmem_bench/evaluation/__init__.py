"""Retrieval-quality evaluation: a neutral dataset format, metrics, baselines and a runner."""
