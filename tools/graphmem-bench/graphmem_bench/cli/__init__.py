"""The commands graphmem-bench adds to ``graphmem``: ``bench`` and ``eval``."""
