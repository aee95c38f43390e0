"""`agentspec lsp`: the language server, over stdio (needs the `lsp` extra)."""

from __future__ import annotations

import importlib.util
import logging
import os

import click

from agentspec.contract.extras import install


@click.command(name="lsp")
@click.option("--stdio", is_flag=True, help="Talk over stdin and stdout (the default and only "
              "transport; accepted because editors pass it).")
def command(stdio: bool) -> None:
    """Run the language server for spec files over stdio: diagnostics as `validate` gives
    them, hover, completion, definitions, references, rename, quick fixes and symbols."""
    if importlib.util.find_spec("pygls") is None or importlib.util.find_spec(
            "lsprotocol") is None:
        raise click.ClickException("the language server needs the `lsp` extra: "
                                   f"{install('lsp')}")
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # pygls logs a client's bad message with a traceback; the editor shows stderr as a crash
    logging.getLogger("pygls").setLevel(logging.CRITICAL)
    from agentspec.lsp.server import make_server

    make_server().start_io()
