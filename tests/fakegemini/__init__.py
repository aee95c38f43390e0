"""A fake Gemini API for the wire tests: a loopback server that checks each request against
the API's rules and answers from a scenario's script."""

import pytest

from tests.fakegemini.server import FakeGemini, Recorded, Rule, serve

__all__ = ["FakeGemini", "Recorded", "Rule", "serve", "use_fake"]


def use_fake(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """google-genai pointed at the fake at `url`: any key, the Gemini API (not Vertex)."""
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-key")
    for name in ("GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"):
        monkeypatch.delenv(name, raising=False)
