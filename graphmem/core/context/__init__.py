"""context: a prompt-ready block within a token budget (the plan, and the block's layout)."""
