def lookup(q: str) -> str:
    """Look up."""
    return "found " + q


def refund(q: str) -> str:
    """Refund."""
    return "refunded " + q
