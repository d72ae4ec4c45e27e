"""Embedding models and tokenizers: the sentence-transformers embedder, its identity, and
the token counting of context budgets."""
