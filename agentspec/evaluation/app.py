"""The app a case runs on: the spec compiled and built as `agentspec run` builds it (the
spec's real models), or with the case's scripted replies, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentspec.evaluation.cases import Case

__all__ = ["SpecError", "app_factory"]


class SpecError(Exception):
    """The spec does not compile or build; its diagnostics, as lines."""


def app_factory(spec: Path, environment: str | None) -> Any:
    """A function that builds a fresh app of `spec` for a case (raises SpecError)."""

    def build(case: Case) -> Any:
        from agentspec.testing.scenarios import StubTools, offline_mcp
        from agentspec.testing.scripted import install_script
        from agentspec.testing.turns import spec_app

        app, stopped = spec_app(spec, environment, scripted=case.replies is not None)
        if app is None:
            raise SpecError("; ".join(stopped))
        if case.replies is not None:
            offline_mcp(app.root_agent)
            install_script(app.root_agent, case.replies, app.events_compaction_config)
        if case.stubs:
            app.plugins.append(StubTools(case.stubs))
        return app

    return build
