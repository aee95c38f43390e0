"""Quick fixes: a diagnostic's `did you mean`, and declaring a missing state key."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types as lsp

from agentspec.lsp.analysis import Analysis
from agentspec.lsp.features import lines_of
from agentspec.lsp.positions import pos_of, range_of
from agentspec.source import Pos, Span

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
            where = _misspelled(lines_of(analysis, path), diag)
            edit = lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(where, match.group(1))]})
            actions.append(lsp.CodeAction(f"Change to `{match.group(1)}`",
                                          kind=lsp.CodeActionKind.QuickFix,
                                          diagnostics=[diag], edit=edit, is_preferred=True))
        if diag.code == "AS223":
            key = re.search(r"`\{([^}?]+)\??\}`", str(data.get("message") or diag.message))
            declare = _declare_state(analysis, path, uri, key.group(1), diag) if key else None
            if declare is not None:
                actions.append(declare)
    return actions


def _misspelled(lines: list[str], diag: lsp.Diagnostic) -> lsp.Range:
    """The misspelled name in the diagnostic's range: the first name its message quotes that
    the range holds (`compny` in `${vars.compny}`, which replacing whole made the placeholder
    plain text), else the whole range."""
    start, end = pos_of(diag.range.start, lines), pos_of(diag.range.end, lines)
    if start.line != end.line or not 0 < start.line <= len(lines):
        return diag.range
    text = lines[start.line - 1][start.col - 1:end.col - 1]
    for name in re.findall(r"`([^`\n]+)`", diag.message):
        at = text.find(name)
        if at >= 0 and name != text:
            col = start.col + at
            return range_of(Span("", Pos(start.line, col), Pos(start.line, col + len(name))),
                            lines)
        if at >= 0:
            break
    return diag.range


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
