def make(size: int):
    """Makes a tool."""
    return None
