// The agentspec extension: starts `agentspec lsp` over stdio for spec files. Everything else
// (diagnostics, completion, hover, definitions, rename, quick fixes) comes from the server.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

const DEFAULT_COMMAND = "agentspec";
const DEFAULT_ARGS = ["lsp"];
const DEFAULT_FILES = ["**/*.agentspec.yaml", "**/specs/**/*.yaml", "**/agents/**/*.yaml"];

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("agentspec");
  const command = config.get("server.command", DEFAULT_COMMAND);
  const args = config.get("server.args", DEFAULT_ARGS);
  const files = config.get("files", DEFAULT_FILES);
  const serverOptions = { command, args, transport: TransportKind.stdio };
  const clientOptions = {
    documentSelector: files.map((pattern) => ({ scheme: "file", language: "yaml", pattern })),
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.{yaml,yml,py}") },
  };
  client = new LanguageClient("agentspec", "agentspec", serverOptions, clientOptions);
  client.start().catch((error) => {
    vscode.window.showErrorMessage(
      `agentspec: cannot start \`${command} ${args.join(" ")}\` (${error.message}). ` +
      "Install it with: pip install 'agentspec-adk[lsp]'");
  });
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
