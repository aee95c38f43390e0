"""A fake Gemini API for the wire tests: a loopback server that checks each request against
the API's rules and answers from a scenario's script."""

from tests.fakegemini.server import FakeGemini, Recorded, Rule, serve

__all__ = ["FakeGemini", "Recorded", "Rule", "serve"]
