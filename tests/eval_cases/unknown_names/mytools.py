def lookup(q: str) -> str:
    """Look up."""
    return "found " + q
