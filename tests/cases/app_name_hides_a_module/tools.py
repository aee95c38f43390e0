def search(query: str) -> str:
    """Search."""
    return query
