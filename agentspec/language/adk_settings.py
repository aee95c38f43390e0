"""ADK settings the language exposes as they are: the app's context cache and an LLM
agent's code executor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from agentspec.language.common import Model, keyed_union, one_key_union

__all__ = ["ApiKeyAuth", "BearerAuth", "CodeExecutor", "ContextCache", "OAuthAuth",
           "OpenIdConnectAuth", "SandboxExecutor", "ServiceAccountAuth", "ToolAuth"]


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


class ServiceAccountSettings(Model):
    key: str | None = Field(None, description="The service account's JSON key, written "
                            "`${env.X}`: the variable holds the whole JSON, read when the app "
                            "is loaded (a key file is a secret: it never sits in the project "
                            "or a bundle).", examples=["${env.SEARCH_SA_KEY}"])
    default: bool = Field(False, description="Use Application Default Credentials instead "
                          "of a key: the metadata server where the agent runs on Google "
                          "Cloud, or the key file `GOOGLE_APPLICATION_CREDENTIALS` names.")
    scopes: list[str] | None = Field(None, description="The OAuth scopes the access token "
                                     "is asked for (default with `default`: cloud-platform).",
                                     examples=[["https://www.googleapis.com/auth/cloud-platform"]])
    audience: str | None = Field(None, description="Ask for an ID token for this audience "
                                 "instead of an access token (Cloud Run, Cloud Functions: "
                                 "the receiving service's URL).", pattern=r"^https?://")


class ServiceAccountAuth(Model):
    """A Google service account: ADK signs in as the account and sends the access (or ID)
    token it gets as a bearer token."""

    service_account: ServiceAccountSettings = Field(description="The key or Application "
                                                    "Default Credentials, and the scopes.")


class OpenIdSettings(Model):
    authorization_url: str = Field(description="The provider's authorization endpoint, where "
                                   "the person signs in.", pattern=r"^https?://")
    token_url: str = Field(description="The provider's token endpoint.",
                           pattern=r"^https?://")
    scopes: list[str] | None = Field(None, description="The scopes asked for.",
                                     examples=[["openid", "email"]])
    client_id: str = Field(description="The client's id (may be `${env.X}`).")
    client_secret: str = Field(description=_SECRET, examples=["${env.OIDC_SECRET}"])


class OpenIdConnectAuth(Model):
    """OpenID Connect sign-in: as `oauth`, ADK asks the front end to let the person sign in
    with the provider, then calls the tool with their token. The endpoints are written out
    (agentspec never fetches a discovery document)."""

    openid_connect: OpenIdSettings = Field(description="The provider's endpoints and the "
                                           "client.")


if TYPE_CHECKING:
    ToolAuth = ApiKeyAuth | BearerAuth | OAuthAuth | ServiceAccountAuth | OpenIdConnectAuth
else:
    ToolAuth = one_key_union("tool_auth", "`auth`", {
        "api_key": ApiKeyAuth, "bearer": BearerAuth, "oauth": OAuthAuth,
        "service_account": ServiceAccountAuth, "openid_connect": OpenIdConnectAuth})
