"""forget: erasure with content-free tombstones, and the review flags on what rested on a fact
that was forgotten or replaced."""
