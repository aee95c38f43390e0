"""A real LSP client (pygls') driving `agentspec lsp` in a subprocess over stdio, for the
language server's tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

AGENTSPEC = str(Path(sys.executable).parent / "agentspec")


class Session:
    """One server: open and change documents, wait for their diagnostics, ask requests."""

    def __init__(self, folder: Path, command: tuple[str, ...] = (AGENTSPEC, "lsp")) -> None:
        self.folder = folder
        self.command = command
        self.client = LanguageClient("agentspec-tests", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.counts: dict[str, int] = {}
        self.changed = asyncio.Condition()
        self.logs: list[str] = []
        self.shown: list[str] = []
        self.versions: dict[str, int] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def published(params: lsp.PublishDiagnosticsParams) -> None:
            async with self.changed:
                self.diagnostics[params.uri] = params.diagnostics
                self.counts[params.uri] = self.counts.get(params.uri, 0) + 1
                self.changed.notify_all()

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def shown(params: lsp.ShowMessageParams) -> None:  # a pop-up in the editor
            self.shown.append(params.message)

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def logged(params: lsp.LogMessageParams) -> None:
            self.logs.append(params.message)

    async def __aenter__(self) -> Session:
        await self.client.start_io(*self.command, cwd=str(self.folder))
        self.init = await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            workspace_folders=[lsp.WorkspaceFolder(self.folder.as_uri(), "project")],
            root_uri=self.folder.as_uri()))
        self.client.initialized(lsp.InitializedParams())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), 60)
        self.client.exit(None)
        server = self.client._server
        assert server is not None and server.stderr is not None
        self.stderr = (await asyncio.wait_for(server.stderr.read(), 60)).decode()
        await asyncio.wait_for(server.wait(), 60)
        await self.client.stop()

    def uri(self, path: Path) -> str:
        return path.resolve().as_uri()

    async def _await(self, uri: str, after: int) -> list[lsp.Diagnostic]:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(
                lambda: self.counts.get(uri, 0) > after), 120)
        return self.diagnostics[uri]

    async def open(self, path: Path, text: str | None = None, *, wait_on: Path | None = None
                   ) -> list[lsp.Diagnostic]:
        """Open `path`; its diagnostics (`wait_on`'s, the root of its tree when that is
        another file: the server publishes a tree's root last)."""
        uri = self.uri(path)
        watched = self.uri(wait_on or path)
        before = self.counts.get(watched, 0)
        self.versions[uri] = 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, "yaml", 1, path.read_text() if text is None else text)))
        return await self._await(watched, before)

    async def change(self, path: Path, text: str, *, wait_on: Path | None = None
                     ) -> list[lsp.Diagnostic]:
        uri = self.uri(path)
        watched = self.uri(wait_on or path)
        before = self.counts.get(watched, 0)
        self.versions[uri] += 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(self.versions[uri], uri),
            [lsp.TextDocumentContentChangeWholeDocument(text)]))
        return await self._await(watched, before)

    def doc(self, path: Path) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(self.uri(path))

    async def ask(self, method: str, params: Any) -> Any:
        return await asyncio.wait_for(getattr(self.client, method)(params), 120)
