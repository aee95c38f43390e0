"""The app a case runs on: the spec compiled and built as `agentspec run` builds it (the
spec's real models), or with the case's scripted replies, offline."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentspec.evaluation.cases import Case
from agentspec.testing.turns import isolated

__all__ = ["SpecError", "app_factory", "case_environment"]


class SpecError(Exception):
    """The spec does not compile or build; its diagnostics, as lines."""


@contextlib.contextmanager
def case_environment(case: Case) -> Iterator[None]:
    """The case's environment variables, and a job store and a database for `type: store`
    files of its own (never the project's), during one run."""
    with isolated(case.env, "eval"):
        yield


def app_factory(spec: Path, environment: str | None) -> Any:
    """A function that builds a fresh app of `spec` for a case (raises SpecError)."""

    def build(case: Case) -> Any:
        from agentspec.compiler import build_objects, compile_spec
        from agentspec.runtime.models import SCRIPTED
        from agentspec.testing.scenarios import StubTools, offline_mcp
        from agentspec.testing.scripted import install_script

        compiled = compile_spec(spec, environment=environment)
        if not compiled.ok:
            raise SpecError("; ".join(f"{d.code} {d.message}" for d in compiled.diagnostics
                                      if d.is_error))
        token = SCRIPTED.set(case.replies is not None)
        try:
            app, problems = build_objects(compiled)
        finally:
            SCRIPTED.reset(token)
        if problems:
            raise SpecError("; ".join(f"{p.code} {p.message}" for p in problems))
        if case.replies is not None:
            offline_mcp(app.root_agent)
            install_script(app.root_agent, case.replies, app.events_compaction_config)
        if case.stubs:
            app.plugins.append(StubTools(case.stubs))
        return app

    return build
