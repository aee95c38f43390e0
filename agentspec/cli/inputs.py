"""`--state KEY=VALUE`: the state a command creates a session with, and the keys the spec
says the session's creator supplies (`state:` entries with `required: true`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

__all__ = ["parse_state", "state_option", "supplied"]

F = TypeVar("F", bound=Callable[..., Any])
_KEY = re.compile(r"^((app|user):)?[A-Za-z_][A-Za-z0-9_]*$")


def state_option(function: F) -> F:
    return click.option(
        "--state", "state_values", metavar="KEY=VALUE", multiple=True,
        help="Session state to create the session with (the value is text; repeatable); "
        "each key the spec's `state:` marks `required` must be given, or is asked for at "
        "a terminal.")(function)


def parse_state(values: tuple[str, ...]) -> dict[str, str]:
    """`KEY=VALUE` options as a mapping; a usage error for one without `=` or a bad key."""
    state: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not _KEY.match(key):
            raise click.UsageError(
                f"--state takes KEY=VALUE with a state key (a name, optionally after `app:` "
                f"or `user:`), not `{value}`")
        state[key] = text
    return state


def supplied(required: Mapping[str, str | None], given: Mapping[str, Any],
             ask: Callable[[str], str] | None = None) -> dict[str, Any]:
    """`given` with every required key: asked for with `ask` (default: at a terminal, when
    standard input is one); a usage error naming the flag for a key that is not given."""
    if ask is None and sys.stdin.isatty():
        ask = input
    state = dict(given)
    for key, description in required.items():
        if key in state:
            continue
        if ask is None:
            raise click.UsageError(
                f"the spec's `state:` says the session's creator supplies `{key}`"
                + (f" ({description})" if description else "")
                + f": pass --state {key}=VALUE")
        state[key] = ask(f"{key}" + (f" ({description})" if description else "") + ": ")
    return state
