"""A tool's `auth:`: ADK's auth scheme and credential for an MCP toolset or a function tool.
The secrets arrive already read from the environment (`${env.X}`, expanded when the app is
loaded); nothing here prints them (ADK's credential models hide them from `repr`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from fastapi.openapi.models import (
    APIKey,
    APIKeyIn,
    HTTPBearer,
    OAuth2,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
)
from google.adk.auth.auth_credential import (
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    OAuth2Auth,
)
from google.adk.auth.auth_schemes import AuthScheme
from google.adk.auth.auth_tool import AuthConfig
from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool

__all__ = ["auth_credential", "auth_scheme", "authenticated"]


def auth_scheme(kind: str, *, header: str | None = None,
                authorization_url: str | None = None, token_url: str | None = None,
                scopes: Mapping[str, str] | None = None) -> AuthScheme:
    """`api_key` (in a header), `bearer` (HTTP bearer) or `oauth` (OAuth 2.0 authorization code)."""
    if kind == "api_key":
        return APIKey(**{"in": APIKeyIn.header, "name": header or ""})
    if kind == "bearer":
        return HTTPBearer()
    if kind == "oauth":
        return OAuth2(flows=OAuthFlows(authorizationCode=OAuthFlowAuthorizationCode(
            authorizationUrl=authorization_url or "", tokenUrl=token_url or "",
            scopes=dict(scopes or {}))))
    raise ValueError(f"unknown auth kind {kind!r}")


def auth_credential(kind: str, *, value: str | None = None, client_id: str | None = None,
                    client_secret: str | None = None) -> AuthCredential:
    """The credential that goes with `auth_scheme(kind)`: a key or token, or (OAuth) the
    client the person signs in through; ADK asks the front end (`adk web`) for the sign-in
    and exchanges the code for a token. An empty secret (its variable set to "") is refused
    here, where the app is loaded, rather than by ADK at the first call with a message that
    names neither the tool nor the variable."""
    if kind in ("api_key", "bearer") and not value:
        raise ValueError(f"the `{kind}` credential of a tool's `auth` is empty: its "
                         "environment variable is set to an empty string")
    if kind == "api_key":
        return AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=value)
    if kind == "bearer":
        return AuthCredential(auth_type=AuthCredentialTypes.HTTP, http=HttpAuth(
            scheme="bearer", credentials=HttpCredentials(token=value)))
    if kind == "oauth":
        return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
            client_id=client_id, client_secret=client_secret))
    raise ValueError(f"unknown auth kind {kind!r}")


def authenticated(function: Callable[..., Any], scheme: AuthScheme,
                  credential: AuthCredential) -> AuthenticatedFunctionTool:
    """A function tool that receives the credential as its `credential` argument (which
    the model never sees)."""
    if not callable(function) or isinstance(function, type):
        raise TypeError(f"`auth` applies to a function; {function!r} is not one")
    with warnings.catch_warnings():  # ADK's credential manager is marked experimental
        warnings.filterwarnings("ignore", message=r".*EXPERIMENTAL.*")
        return AuthenticatedFunctionTool(func=function, auth_config=AuthConfig(
            auth_scheme=scheme, raw_auth_credential=credential))
