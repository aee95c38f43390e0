"""An `openapi` tool: ADK's `OpenAPIToolset` over a document read from the project when the
app is loaded (the generated package names it by its path from the spec's directory, and
`build --bundle` copies it), with the spec's filter, prefix, server and credential."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from google.adk.auth.auth_credential import AuthCredential
from google.adk.auth.auth_schemes import AuthScheme
from google.adk.tools.openapi_tool import OpenAPIToolset
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from agentspec.contract.openapi import MAX_EXPANDED, expanded_size

__all__ = ["OpenApiDocumentError", "openapi_toolset"]


class OpenApiDocumentError(RuntimeError):
    """The document changed or went missing since the spec was checked: the project's
    files, not agentspec, are at fault."""


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)  # JSON first: fast, and a YAML document is rarely JSON
    except ValueError:  # validate read it as YAML (JSON is YAML), whatever its name
        return YAML(typ="safe", pure=True).load(text)


def _read(document: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(document)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise OpenApiDocumentError(f"cannot read the OpenAPI document `{path}`: {error}; "
                                   "run `agentspec validate` on the spec") from None
    try:
        data = _parsed(text)
        size = expanded_size(data) if isinstance(data, dict) else 0
    except YAMLError as error:
        raise OpenApiDocumentError(f"the OpenAPI document `{path}` is not valid YAML or "
                                   f"JSON: {error}") from None
    except RecursionError:
        raise OpenApiDocumentError(f"the OpenAPI document `{path}` nests too deeply; run "
                                   "`agentspec validate` on the spec") from None
    if not isinstance(data, dict):
        raise OpenApiDocumentError(f"the OpenAPI document `{path}` is not a mapping")
    if size > MAX_EXPANDED:
        raise OpenApiDocumentError(
            f"the OpenAPI document `{path}` expands to more than {MAX_EXPANDED:,} values "
            "once each `$ref` is replaced by what it points at; run `agentspec validate` "
            "on the spec")
    return data


def openapi_toolset(document: str | os.PathLike[str], *, operations: list[str] | None,
                    prefix: str | None, server: str | None, private_network: bool,
                    auth_scheme: AuthScheme | None,
                    auth_credential: AuthCredential | None) -> OpenAPIToolset:
    """One tool per operation of `document` (or of those named in `operations`), called at
    `server` (else the document's first `servers` URL)."""
    data = _read(document)
    if server is not None:
        data["servers"] = [{"url": server}]
    try:
        return OpenAPIToolset(spec_dict=data, tool_filter=operations, tool_name_prefix=prefix,
                              allow_private_network_access=private_network,
                              auth_scheme=auth_scheme, auth_credential=auth_credential)
    except (ValueError, TypeError, KeyError, AttributeError) as error:  # the document's shape
        raise OpenApiDocumentError(
            f"ADK cannot turn the OpenAPI document `{document}` into tools: "
            f"{type(error).__name__}: {error}") from error
