"""The `tool_result_limit` harness field: a large tool result is saved, the model gets its
location and a preview, and reads the rest when it needs it."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from agentspec.contract.backends import LARGE_RESULTS
from agentspec.runtime.harness.callbacks import AfterTool
from agentspec.runtime.harness.files import BackendFactory
from agentspec.runtime.user_folders import path_segment

__all__ = ["CHARS_PER_TOKEN", "result_limit_callback"]

CHARS_PER_TOKEN = 4
PREVIEW_CHARS = 1000
#: tools that page their own output; evicting it would only send the model in circles
EXEMPT = frozenset({"read_file"})



def _text(result: Any) -> str:
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                             default=str)
    # lone surrogates (from undecodable file names, say) cannot be stored as UTF-8
    return text.encode("utf-8", "replace").decode("utf-8")


def result_limit_callback(tokens: int, backend: BackendFactory | None = None) -> AfterTool:
    """An `after_tool_callback` replacing results longer than `tokens` (about 4 characters
    each): saved to `/large_tool_results/<user>/` on `backend` (read back with `read_file`;
    other users' file tools cannot reach it, see `scope`), or as a
    session artifact when the agent has no file tools (read back with `load_artifacts`)."""
    limit = tokens * CHARS_PER_TOKEN

    async def after_tool_callback(tool: BaseTool, args: dict[str, Any],
                                  tool_context: ToolContext,
                                  tool_response: Any) -> dict[str, Any] | None:
        text = _text(tool_response)
        if tool.name in EXEMPT or len(text) <= limit:
            return None
        call = re.sub(r"[^A-Za-z0-9_.-]", "_", tool_context.function_call_id or uuid.uuid4().hex)
        summary = {"result_too_large": (
            f"The result of {tool.name} has {len(text):,} characters (about "
            f"{len(text) // CHARS_PER_TOKEN:,} tokens), more than the {tokens:,}-token limit, "
            "so it was saved instead of shown."), "preview": text[:PREVIEW_CHARS]}
        try:
            if backend is not None:
                user = path_segment(tool_context.user_id)
                path = f"{LARGE_RESULTS}/{user}/{tool.name}_{call}.txt"
                backend(tool_context).write(path, text)
                return {**summary, "saved_to": path, "how_to_read":
                        f"read_file('{path}', offset=..., limit=...) reads it in pages"}
            name = f"large_tool_results_{tool.name}_{call}.txt"
            await tool_context.save_artifact(name, types.Part(text=text))
            return {**summary, "saved_as_artifact": name,
                    "how_to_read": f"load_artifacts with artifact_names=['{name}']"}
        except Exception as exc:  # never raise into ADK: the preview is better than nothing
            return {**summary, "not_saved": (
                f"The full result could not be saved ({type(exc).__name__}: {exc}); only the "
                "preview above is available. Narrow the request to get a smaller result.")}

    return after_tool_callback
