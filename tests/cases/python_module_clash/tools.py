def alpha(q: str) -> str:
    """A."""
    return q


def gamma(q: str) -> str:
    """G."""
    return q
