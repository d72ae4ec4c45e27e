"""Embedding models and tokenizers: the embedder protocol and its two backends (ONNX and
sentence-transformers), the identity of their models, and the token counting of context
budgets."""
