def lookup(query: str, credential=None) -> dict:
    """Looks a query up."""
    return {}
