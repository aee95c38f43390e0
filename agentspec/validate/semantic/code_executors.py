"""`code_executor`: a sandbox executor names a `type: sandbox` backend; the built-in one
needs a Gemini model."""

from __future__ import annotations

from agentspec.diagnostics import codes, did_you_mean
from agentspec.language.adk_settings import SandboxExecutor
from agentspec.language.backends import SandboxBackend
from agentspec.language.models import ModelDef
from agentspec.validate.semantic.context import Context

__all__ = ["check_code_executors", "known_model_id"]


def known_model_id(ctx: Context, model: str) -> str | None:
    """The id a model name stands for (ADK's registry or LiteLLM's); None for a chain or a
    route, or an id read from the environment."""
    definition = (ctx.spec.models or {}).get(model, model)
    found = definition.id if isinstance(definition, ModelDef) else definition
    if not isinstance(found, str) or "${" in found:
        return None
    return found


def _is_gemini(model_id: str) -> bool:
    return model_id.removeprefix("models/").split("/")[-1].startswith("gemini-")


def check_code_executors(ctx: Context) -> None:
    backends = ctx.spec.backends or {}
    for name, agent in ctx.llm_agents():
        setting = agent.code_executor
        if isinstance(setting, SandboxExecutor):
            backend = backends.get(setting.backend)
            if isinstance(backend, SandboxBackend):
                continue
            sandboxes = [n for n, b in backends.items() if isinstance(b, SandboxBackend)]
            what = "is not defined" if backend is None else \
                f"is a `{backend.type}` backend, not a sandbox"
            ctx.report(codes.CODE_EXECUTOR_BACKEND(
                f"`code_executor` runs the model's code in the backend `{setting.backend}`, "
                f"which {what}", ctx.at("agents", name, "code_executor", "backend"),
                hint=did_you_mean(setting.backend, sandboxes) if backend is None and sandboxes
                else "define a `type: sandbox` backend under `backends` and name it here; "
                "code a model writes runs only where a sandbox confines it"))
        elif setting == "builtin" and agent.model is not None:
            model_id = known_model_id(ctx, agent.model)
            if model_id is not None and not _is_gemini(model_id):
                ctx.report(codes.BUILTIN_CODE_EXECUTOR_MODEL(
                    f"`code_executor: builtin` is Gemini's code execution, and the model "
                    f"`{model_id}` is not a Gemini model",
                    ctx.at("agents", name, "code_executor"),
                    hint="give the agent a `gemini-*` model, or run the code in a sandbox "
                    "backend: `code_executor: {backend: NAME}`"))
