"""`code_executor: {backend: name}`: the Python blocks a model writes run inside the spec's
`type: sandbox` backend, with its root, mounts, network and limits."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from google.adk.code_executors import BaseCodeExecutor
from google.adk.code_executors.code_execution_utils import (
    CodeExecutionInput,
    CodeExecutionResult,
)
from pydantic import PrivateAttr

from agentspec.runtime.backends import BackendError
from agentspec.runtime.backends.sandbox import SandboxBackend
from agentspec.runtime.harness.filesystem import sandbox_backend

if TYPE_CHECKING:
    from google.adk.agents.invocation_context import InvocationContext

__all__ = ["MAX_CODE_BYTES", "SandboxCodeExecutor", "sandbox_executor"]

#: a code block is one argument of the sandbox's shell, which the kernel caps at 128 KiB
MAX_CODE_BYTES = 120_000


class SandboxCodeExecutor(BaseCodeExecutor):
    """Runs each code block with `python3` in a bubblewrap sandbox (`type: sandbox`): the
    backend's root is the working directory (`/workspace`), nothing else is writable, no
    network unless the backend allows it. Stateless: each block is a fresh process."""

    backend: str
    definitions: dict[str, dict[str, Any]]
    _box: SandboxBackend | None = PrivateAttr(default=None)

    def execute_code(self, invocation_context: InvocationContext,
                     code_execution_input: CodeExecutionInput) -> CodeExecutionResult:
        if self._box is None:
            self._box = sandbox_backend(self.backend, self.definitions)
        command = "python3 -c " + shlex.quote(code_execution_input.code)
        if len(command.encode("utf-8", "surrogatepass")) > MAX_CODE_BYTES:
            return CodeExecutionResult(stderr=(
                f"The code block is too long to run ({len(command)} characters; the limit "
                f"is about {MAX_CODE_BYTES} bytes). Write it to a file with your file tools "
                "and run a short block that imports it."))
        try:
            result = self._box.execute(command)
        except BackendError as error:  # the model's code, refused: the model should see why
            return CodeExecutionResult(stderr=str(error))
        if result.exit_code == 0 and not result.timed_out:
            return CodeExecutionResult(stdout=result.output, exit_code=0)
        # the sandbox merges both streams; a failed run must mark the result as failed
        return CodeExecutionResult(
            stderr=result.output or f"The code exited with status {result.exit_code}.",
            exit_code=result.exit_code)


def sandbox_executor(backend: str,
                     definitions: Mapping[str, Mapping[str, Any]]) -> SandboxCodeExecutor:
    """The executor of an agent's `code_executor: {backend: name}`."""
    return SandboxCodeExecutor(backend=backend, definitions={
        name: dict(definition) for name, definition in definitions.items()})
