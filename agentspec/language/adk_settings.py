"""ADK settings the language exposes as they are: the app's context cache and an LLM
agent's code executor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from agentspec.language.common import Model, keyed_union, one_key_union

__all__ = ["ApiKeyAuth", "BearerAuth", "CodeExecutor", "ContextCache", "OAuthAuth",
           "SandboxExecutor", "ToolAuth"]


class ContextCache(Model):
    """ADK's explicit context caching (`App(context_cache_config=ContextCacheConfig(...))`):
    each agent's request prefix (system instruction, tools, earlier turns) is cached by the
    model's API and reused by later requests. Gemini models only; no default (see the
    docs)."""

    cache_intervals: int = Field(10, ge=1, le=100, description="Invocations that reuse one "
                                 "cache before it is refreshed.", examples=[10])
    ttl_seconds: int = Field(1800, ge=1, description="How long the model's API keeps a "
                             "cache, in seconds (storage is billed for this time).",
                             examples=[1800])
    min_tokens: int = Field(0, ge=0, description="Cache only once the previous request had "
                            "at least this many prompt tokens (Gemini's own minimum, 2048 "
                            "or 4096, applies anyway).", examples=[4096])
    create_timeout: float | None = Field(None, gt=0, le=600, description="Seconds to wait "
                                         "for the cache to be created; past it the request "
                                         "goes on uncached. Default: the client's.",
                                         examples=[10])


class SandboxExecutor(Model):
    """Code blocks the model writes run inside a `type: sandbox` backend."""

    backend: str = Field(description="A `type: sandbox` backend from `backends`.",
                         examples=["box"])


def _executor_pick(value: object) -> str | None:
    if value == "builtin":
        return "builtin"
    return "sandbox" if isinstance(value, dict) else None


if TYPE_CHECKING:
    CodeExecutor = Literal["builtin"] | SandboxExecutor
else:
    CodeExecutor = keyed_union("code_executor_setting", "`code_executor` is `builtin` or "
                               "`{backend: name}`",
                               {"builtin": Literal["builtin"], "sandbox": SandboxExecutor},
                               _executor_pick)


_SECRET = "Written `${env.X}`: the secret is read from the environment when the app is " \
    "loaded, never written into the generated package."


class ApiKeySettings(Model):
    header: str = Field(description="The request header that carries the key.",
                        examples=["X-API-Key"], pattern=r"^[A-Za-z0-9-]+$")
    value: str = Field(description=_SECRET, examples=["${env.SEARCH_KEY}"])


class ApiKeyAuth(Model):
    """An API key sent in a header."""

    api_key: ApiKeySettings = Field(description="The header and the key.")


class BearerAuth(Model):
    """A bearer token (`Authorization: Bearer ...`)."""

    bearer: str = Field(description=_SECRET, examples=["${env.GITHUB_TOKEN}"])


class OAuthSettings(Model):
    authorization_url: str = Field(description="Where the person signs in.",
                                   pattern=r"^https?://")
    token_url: str = Field(description="Where ADK exchanges the code for a token.",
                           pattern=r"^https?://")
    scopes: dict[str, str] | None = Field(None, description="Scope -> what it allows.")
    client_id: str = Field(description="The OAuth client's id (may be `${env.X}`).")
    client_secret: str = Field(description=_SECRET, examples=["${env.OAUTH_SECRET}"])


class OAuthAuth(Model):
    """OAuth 2.0 authorization code: ADK asks the front end (`adk web`) to let the person
    sign in, then calls the tool with their token."""

    oauth: OAuthSettings = Field(description="The flow's endpoints and client.")


if TYPE_CHECKING:
    ToolAuth = ApiKeyAuth | BearerAuth | OAuthAuth
else:
    ToolAuth = one_key_union("tool_auth", "`auth`", {
        "api_key": ApiKeyAuth, "bearer": BearerAuth, "oauth": OAuthAuth})
