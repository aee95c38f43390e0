"""Quick fixes: a diagnostic's `did you mean`, and declaring a missing state key."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp

from agentspec.lsp.analysis import Analysis
from agentspec.lsp.features import lines_of

__all__ = ["code_actions"]

_DID_YOU_MEAN = re.compile(r"[Dd]id you mean `([^`]+)`\?")


def code_actions(analysis: Analysis, path: Path, params: lsp.CodeActionParams
                 ) -> list[lsp.CodeAction]:
    actions: list[lsp.CodeAction] = []
    uri = params.text_document.uri
    for diag in params.context.diagnostics:
        data = diag.data if isinstance(diag.data, dict) else {}
        hint = str(data.get("hint") or "")
        match = _DID_YOU_MEAN.search(hint)
        if match:
            edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(diag.range, match.group(1))]})
            actions.append(lsp.CodeAction(f"Change to `{match.group(1)}`",
                                          kind=lsp.CodeActionKind.QuickFix,
                                          diagnostics=[diag], edit=edit, is_preferred=True))
        if diag.code == "AS223":
            key = re.search(r"`\{([^}?]+)\??\}`", str(data.get("message") or diag.message))
            if key:
                actions.append(_declare_state(analysis, path, uri, key.group(1), diag))
    return actions


def _declare_state(analysis: Analysis, path: Path, uri: str, key: str,
                   diag: lsp.Diagnostic) -> lsp.CodeAction:
    """Add `key: ""` under the top-level `state:` (made when there is none)."""
    lines = lines_of(analysis, path)
    row = next((i for i, line in enumerate(lines) if re.match(r"state\s*:\s*(#.*)?$", line)),
               None)
    if row is not None:
        at = lsp.Position(row + 1, 0)
        text = f'  {key}: ""\n'
    else:
        at = lsp.Position(len(lines), 0)
        text = f'{"" if not lines or lines[-1] == "" else chr(10)}state:\n  {key}: ""\n'
    edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(lsp.Range(at, at), text)]})
    return lsp.CodeAction(f"Declare `{key}` under `state:`", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[diag], edit=edit)
