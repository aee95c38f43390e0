"""Review tools: the graph of a spec (and, later, its diff)."""
