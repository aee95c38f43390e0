"""A tool's `auth:`: ADK's auth scheme and credential for an MCP toolset or a function tool.
The secrets arrive already read from the environment (`${env.X}`, expanded when the app is
loaded); nothing here prints them (ADK's credential models hide them from `repr`)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping, Sequence
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
    ServiceAccount,
    ServiceAccountCredential,
)
from google.adk.auth.auth_schemes import AuthScheme, OpenIdConnectWithConfig
from google.adk.auth.auth_tool import AuthConfig
from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool
from google.adk.tools.openapi_tool.auth.auth_helpers import service_account_scheme_credential

__all__ = ["auth_credential", "auth_scheme", "authenticated"]


def auth_scheme(kind: str, *, header: str | None = None,
                authorization_url: str | None = None, token_url: str | None = None,
                scopes: Mapping[str, str] | Sequence[str] | None = None) -> AuthScheme:
    """`api_key` (in a header), `bearer` (HTTP bearer), `oauth` (OAuth 2.0 authorization
    code), `service_account` (ADK's scheme for a Google service account, exchanged for a
    bearer token) or `openid_connect` (with the provider's endpoints written out)."""
    if kind == "service_account":
        return service_account_scheme_credential(ServiceAccount(use_default_credential=True))[0]
    if kind == "openid_connect":
        return OpenIdConnectWithConfig(authorization_endpoint=authorization_url or "",
                                       token_endpoint=token_url or "",
                                       scopes=list(scopes or ()))
    if isinstance(scopes, Sequence):
        raise TypeError(f"`{kind}` takes scopes as a mapping")
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
                    client_secret: str | None = None, key: str | None = None,
                    default: bool = False, scopes: Sequence[str] | None = None,
                    audience: str | None = None) -> AuthCredential:
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
    if kind == "openid_connect":
        return AuthCredential(auth_type=AuthCredentialTypes.OPEN_ID_CONNECT, oauth2=OAuth2Auth(
            client_id=client_id, client_secret=client_secret))
    if kind == "service_account":
        account = ServiceAccount(
            service_account_credential=None if default else _service_account_key(key),
            scopes=list(scopes) if scopes else None, use_default_credential=default,
            use_id_token=audience is not None, audience=audience)
        return service_account_scheme_credential(account)[1]
    raise ValueError(f"unknown auth kind {kind!r}")


#: what google-auth reads of a key to sign in (a key file has more)
_KEY_FIELDS = ("private_key", "client_email", "token_uri")


def _service_account_key(key: str | None) -> ServiceAccountCredential:
    """The JSON key a `${env.X}` holds (built as ADK's own helper builds it); what is wrong
    with it is said without its content."""
    try:
        data = json.loads(key or "")
    except ValueError:
        data, reason = None, "it is not JSON"
    else:
        missing = [f"`{f}`" for f in _KEY_FIELDS
                   if not isinstance(data, dict) or not isinstance(data.get(f), str)]
        reason = "it is not a service account's key (no `\"type\": \"service_account\"`)" \
            if not isinstance(data, dict) or data.get("type") != "service_account" else \
            f"it lacks {', '.join(missing)}" if missing else ""
    if reason:
        raise ValueError(f"the `service_account` key of a tool's `auth` is unusable: "
                         f"{reason}; set its variable to the JSON key file's content")
    return ServiceAccountCredential.model_construct(**data)


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
