"""The pygls wiring: documents in, diagnostics out (debounced), every request answered from
`features`. A request that fails answers nothing and says why in the editor's log (never a
traceback on stderr, which editors show as the server crashing)."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from agentspec.lsp import actions, features, outline
from agentspec.lsp.analysis import Analysis
from agentspec.lsp.positions import path_of, uri_of
from agentspec.project_files import resolved

if TYPE_CHECKING:
    from pygls.server import ServerErrors

__all__ = ["DEBOUNCE", "make_server"]

#: seconds of quiet after a change before the spec is checked again
DEBOUNCE = 0.15
T = TypeVar("T")


class _Protocol(LanguageServerProtocol):
    """pygls's, but a request whose parameters do not fit the protocol's types (a negative
    line, a position past 2**31) is answered with an error: pygls answered nothing, so the
    editor waited for it forever."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as error:
            if "id" in data and "method" in data:
                self._send_response(data["id"], None, error.to_response_error())
            raise


class SpecServer(LanguageServer):
    def __init__(self) -> None:
        from agentspec.contract.extras import DISTRIBUTION

        super().__init__("agentspec", _version(DISTRIBUTION), protocol_cls=_Protocol)
        self.analysis = Analysis()
        self.pending: asyncio.TimerHandle | None = None
        self.dirty: set[Path] = set()
        self.published: dict[Path, set[Path]] = {}  # root -> files it published on
        self.folders: list[Path] = []

    def inside(self, path: Path) -> bool:
        """A file of the workspace (every file, when the editor named no folder)."""
        return not self.folders or any(path.is_relative_to(f) for f in self.folders)

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        """A notification pygls could not apply (a change to a document the editor never
        opened, a message it cannot read) goes to the editor's log: pygls's own report is an
        error pop-up, which reads as the server failing. A failed request is answered."""
        if source is not FeatureRequestError:
            self.window_log_message(lsp.LogMessageParams(
                lsp.MessageType.Warning,
                f"agentspec: a message from the editor was not applied ({error})"))

    def safely(self, what: str, run: Callable[[], T], fallback: T) -> T:
        try:
            return run()
        except Exception as exc:  # noqa: BLE001 - a failed request must not end the server
            self.window_log_message(lsp.LogMessageParams(
                lsp.MessageType.Error, f"agentspec: internal error in {what}: "
                f"{type(exc).__name__}: {exc} (a bug in agentspec; please report it)"))
            return fallback

    def schedule(self, path: Path, delay: float) -> None:
        self.dirty.add(path)
        if self.pending is not None:
            self.pending.cancel()
        self.pending = asyncio.get_running_loop().call_later(delay, self.flush)

    def flush(self) -> None:
        self.pending = None
        dirty, self.dirty = self.dirty, set()
        roots: dict[Path, None] = {}
        for path in dirty:
            for root in self.analysis.roots_of(path):
                roots[root] = None
        for root in roots:
            self.safely("diagnostics", functools.partial(self.publish, root), None)

    def publish(self, root: Path) -> None:
        if not self.inside(root) or (root not in self.analysis.buffers and not root.is_file()):
            return
        done = self.analysis.check(root)
        files = {p for p in done.by_file if self.inside(p)}
        # the root last: a client that waits for it has the imported files' already
        for path in sorted(files | self.published.get(root, set()), key=lambda p: p == root):
            shown = features.diagnostics_of(self.analysis, path, done.by_file.get(path, []),
                                            done.summaries if path == root else None)
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri_of(path), shown))
        self.published[root] = files


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "0"


def _path(uri: str) -> Path | None:
    """The file `uri` names, resolved; None for another scheme or a name no file can have
    (a NUL byte, a lone surrogate the file system cannot encode)."""
    path = path_of(uri)
    if path is None or "\x00" in str(path):
        return None
    try:
        os.fsencode(path)
        return resolved(path)
    except (ValueError, OSError):
        return None


def make_server() -> SpecServer:
    server = SpecServer()

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: SpecServer, params: lsp.InitializedParams) -> None:
        folders = ls.workspace.folders.values()
        ls.folders = [p for f in folders if (p := _path(f.uri)) is not None]
        if not ls.folders and ls.workspace.root_uri and (p := _path(ls.workspace.root_uri)):
            ls.folders = [p]

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SpecServer, params: lsp.DidOpenTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.analysis.buffers[path] = params.text_document.text
            if ls.inside(path) and ls.folders:
                ls.safely("finding importers", lambda: ls.analysis.find_importers(
                    path, [f for f in ls.folders if path.is_relative_to(f)]), None)
            ls.schedule(path, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SpecServer, params: lsp.DidChangeTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            text = ls.safely("a change", lambda: ls.workspace.get_text_document(
                params.text_document.uri).source, None)
            if text is not None:
                ls.analysis.buffers[path] = text
                ls.schedule(path, DEBOUNCE)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SpecServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.schedule(path, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SpecServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.analysis.buffers.pop(path, None)
            for file in ls.published.pop(path, set()):
                ls.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri_of(file), []))
            ls.analysis.checks.pop(path, None)

    def request(name: str, run: Callable[[SpecServer, Path, Any], Any], fallback: Any
                ) -> Callable[[SpecServer, Any], Any]:
        def handler(ls: SpecServer, params: Any) -> Any:
            path = _path(params.text_document.uri)
            if path is None or not ls.inside(path):
                return fallback
            for root in ls.analysis.roots_of(path):  # answer from an up-to-date check
                ls.safely(name, functools.partial(ls.analysis.check, root), None)
            return ls.safely(name, lambda: run(ls, path, params), fallback)
        return handler

    server.feature(lsp.TEXT_DOCUMENT_DEFINITION)(request(
        "definition", lambda ls, p, q: features.definition(ls.analysis, p, q.position), []))
    server.feature(lsp.TEXT_DOCUMENT_REFERENCES)(request(
        "references", lambda ls, p, q: features.references(
            ls.analysis, p, q.position, q.context.include_declaration), []))
    server.feature(lsp.TEXT_DOCUMENT_RENAME)(request(
        "rename", lambda ls, p, q: features.rename(ls.analysis, p, q.position, q.new_name),
        None))
    server.feature(lsp.TEXT_DOCUMENT_HOVER)(request(
        "hover", lambda ls, p, q: features.hover(ls.analysis, p, q.position), None))
    server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(
        trigger_characters=[".", "[", " ", "{", ",", ":"]))(request(
            "completion", lambda ls, p, q: features.completion(ls.analysis, p, q.position), []))
    server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix]))(request(
            "code action", lambda ls, p, q: actions.code_actions(ls.analysis, p, q), []))
    server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(request(
        "document symbols", lambda ls, p, q: outline.document_symbols(ls.analysis, p), []))
    return server
