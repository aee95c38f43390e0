def beta(q: str) -> str:
    """B."""
    return q
