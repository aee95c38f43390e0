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
            declare = _declare_state(analysis, path, uri, key.group(1), diag) if key else None
            if declare is not None:
                actions.append(declare)
    return actions


def _declare_state(analysis: Analysis, path: Path, uri: str, key: str,
                   diag: lsp.Diagnostic) -> lsp.CodeAction | None:
    """Add `key: ""` to the top-level `state:` (a block, at its entries' indent, or a flow
    mapping), or a `state:` made when there is none; None when `state:` is written some
    other way (an alias, say)."""
    lines = lines_of(analysis, path)
    row = next((i for i, line in enumerate(lines) if re.match(r"state\s*:", line)), None)
    entry = f'{key}: ""'
    if row is None:
        at = lsp.Position(len(lines), 0)
        text = f'{"" if not lines or lines[-1] == "" else chr(10)}state:\n  {entry}\n'
    elif (flow := re.match(r"state\s*:\s*\{\s*", lines[row])) is not None:
        at = lsp.Position(row, len(lines[row][:flow.end()].encode("utf-16-le")) // 2)
        text = entry if lines[row][flow.end():].startswith("}") else f"{entry}, "
    elif re.match(r"state\s*:\s*(#.*)?$", lines[row]):
        below = next((line for line in lines[row + 1:]
                      if line.strip() and not line.lstrip().startswith("#")), "")
        indent = below[:len(below) - len(below.lstrip(" "))] or "  "
        at = lsp.Position(row + 1, 0)
        text = f"{indent}{entry}\n"
    else:
        return None
    edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(lsp.Range(at, at), text)]})
    return lsp.CodeAction(f"Declare `{key}` under `state:`", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[diag], edit=edit)
