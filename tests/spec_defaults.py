"""Runtime objects built the way a generated package builds them: every setting the spec owns
from the spec model's defaults (their one home), unless a test gives it. The runtime's own
constructors take those settings without defaults (`tests/test_contract.py`). Plain imports
only: scripts run as another user import this too."""

from __future__ import annotations

from typing import Any


def spec_job_settings(store: str, **given: Any) -> Any:
    """The runtime's job settings for `store`, the spec model's defaults (their one home)
    where `given` says nothing."""
    from agentspec.language.document import Jobs
    from agentspec.runtime.jobs.delegation import JobSettings

    spec = Jobs()
    return JobSettings(store, **{"max_attempts": spec.max_attempts,
                                 "lease_seconds": spec.lease_seconds,
                                 "on_done": spec.on_done, **given})


def _spec_sandbox() -> Any:
    """A sandbox as the spec model defines it when it says nothing but its root."""
    from agentspec.contract.backends import from_data
    from agentspec.language.backends import SandboxBackend as SandboxSpec

    return from_data(SandboxSpec.model_validate({"type": "sandbox", "root": "."})
                     .model_dump(exclude_none=True))


def spec_sandbox_data(root: Any) -> dict[str, Any]:
    """A sandbox's definition as generated code passes it: the spec model's defaults."""
    from agentspec.language.backends import SandboxBackend as SandboxSpec

    return SandboxSpec.model_validate({"type": "sandbox", "root": str(root)}).model_dump(
        exclude_none=True)


def spec_limits(**given: Any) -> Any:
    """A sandbox's limits: the spec model's defaults (their one home), `given` replaced."""
    import dataclasses

    from agentspec.runtime.backends.sandbox import sandbox_limits

    return dataclasses.replace(sandbox_limits(_spec_sandbox()), **given)


def spec_shell(root: Any, **given: Any) -> Any:
    """A shell backend with the spec model's defaults where `given` says nothing."""
    from agentspec.runtime.backends.shell import ShellBackend

    spec = _spec_sandbox()
    return ShellBackend(root, **{"timeout": spec.timeout,
                                 "max_output_bytes": spec.max_output_bytes, **given})


def spec_sandbox(root: Any, **given: Any) -> Any:
    """A sandbox backend with the spec model's defaults where `given` says nothing."""
    from agentspec.runtime.backends.sandbox import SandboxBackend

    spec = _spec_sandbox()
    return SandboxBackend(root, **{"timeout": spec.timeout,
                                   "max_output_bytes": spec.max_output_bytes,
                                   "limits": spec_limits(), **given})


def spec_job_request(**given: Any) -> Any:
    """A job request with the spec model's `max_attempts` and `on_done` where `given` says
    nothing."""
    from agentspec.language.document import Jobs
    from agentspec.runtime.jobs import JobRequest

    spec = Jobs()
    return JobRequest(**{"max_attempts": spec.max_attempts, "on_done": spec.on_done, **given})


def spec_openapi_toolset(document: Any, **given: Any) -> Any:
    """The toolset of an OpenAPI tool written with only `openapi: FILE` (every operation, no
    prefix, the document's server, no private network, no auth), `given` replaced."""
    from agentspec.runtime.openapi import openapi_toolset

    return openapi_toolset(document, **{"operations": None, "prefix": None, "server": None,
                                        "private_network": False, "auth_scheme": None,
                                        "auth_credential": None, **given})
