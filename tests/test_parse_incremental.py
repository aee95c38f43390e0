"""The Reparser (a re-parse after an edit parses the edited piece only) gives exactly what
a parse of the whole text gives: values (with their key order), every position (ends
included) and diagnostics, on every spec of the repository, on texts built to cross its
cuts, and on seeded random edits of them; and it does reuse what an edit left alone."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

from agentspec.parse import PosNode, incremental, load_text
from agentspec.parse.incremental import MAX_PIECES, Reparser
from agentspec.parse.loader import load_piece
from agentspec.source import Span

REPO = Path(__file__).resolve().parent.parent


def _utf8(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # a case of the loader's own errors
        return None


#: the repository's specs, but the alias bombs (each takes a second to refuse, whole)
CORPUS = [text for folder in ("specs", "examples", "tests/cases")
          for path in sorted((REPO / folder).rglob("*.y*ml"))
          if (text := _utf8(path)) and text.count("*") < 20]
FILE = Path("/project/spec.yaml")

AGENTS = "".join(f"""\
  agent_{i}:
    description: Agent {i}.
    instruction: |
      Do step {i} for ${{vars.company}}.
      Read {{step_{i}?}}.
    tools: [search]
""" for i in range(12))
BIG = f"""\
# a header comment
agentspec: 1
name: many
vars: {{company: Acme}}
agents:
{AGENTS}
environments:
  prod: {{models: {{fast: gemini-2.5-pro}}}}
"""

#: an entry nested 200 deep: alone it is parsed by libyaml, the whole text (one deeper) by the
#: pure-Python parser; without a final line break the two end the top level differently
DEEP = "agentspec: 1\nagents:\n  a:\n" + "".join(
    f"{' ' * (4 + 2 * depth)}k{depth}:\n" for depth in range(199)) + f"{' ' * 402}k: 1\n  b: 1"

#: texts where a cut between pieces could be read differently from the whole text
TRICKY = [
    DEEP,
    DEEP + "\n",
    BIG,
    BIG.rstrip("\n"),  # no final line break
    "agents:\n  a:\n    instruction: |\n      text\n  b:\n    instruction: x\n",
    "agents:\n  a:\n    instruction: >-\n      folded\n\n  # comment\n\n  b: {kind: llm}\n",
    "agents:\n  a:\n    tools:\n    - x\n    - y\n  b:\n  - 1\nname: n\n",
    "agents:\n  a: [1,\n2]\n  b: 1\n",  # a flow list continued at column 0
    "agents:\n  a: {x: 1,\n  b: 2}\n",  # ... continued on a line that looks like a key
    'agents:\n  a: "two\n  b: lines"\n',
    "agents:\n  a: &x {k: 1}\n  b: *x\n",  # an alias to another piece
    "agents:\n  a: &x {k: 1}\n  b:\n    <<: *x\n",
    "agents:\n  a: 1\n  a: 2\n",  # a duplicate across pieces
    "a: 1\nb: 2\na: 3\n",
    "agentspec: 1\n---\nagentspec: 1\n",
    "%YAML 1.2\n---\nagentspec: 1\n",
    "  indented: 1\nname: x\n",
    "- a\nname: x\n",
    "name: x\n- a\n",
    "imports:\n- a.yaml\n- b.yaml\nname: x\n",
    "agents:\n\ta: 1\n",
    "agents:\r\n  a: 1\r\n",
    "agents:\n  a: 1\n b: 2\n",  # a line less indented than the entries
    "agents:\n  a: 1\n    b: 2\n",
    'agents:\n  a: 1\n  "b": 2\n',
    "agents:\n  a: 1\n  true: 2\n",
    "agents:  # comment\n  # comment\n  a: 1\n\n# trailing\n",
    "agents:\n  a:\n    x: !!int nope\n",
    "agents:\n  a: {b: [[[[1]]]]}\nname: x\n",
    "a: |\n  text\n# comment at column 0\n  more\nb: 1\n",
    "a: 'it''s'\nb: \"\\u00e9\"\nc: .nan\nd: 0x1F\ne: ~\n",
    "agents: {}\ntools:\n",
    "",
    "# only a comment\n",
]


def same_span(a: Span | None, b: Span | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.file, a.start, a.end) == (b.file, b.start, b.end)  # `end` is not in Span's ==


def differences(a: PosNode, b: PosNode, path: tuple[object, ...] = ()) -> list[str]:
    if not same_span(a.value, b.value) or not same_span(a.key, b.key):
        return [f"{path}: {a.value} {a.key} != {b.value} {b.key}"]
    if list(a.children) != list(b.children):
        return [f"{path}: children {list(a.children)} != {list(b.children)}"]
    return [d for k in a.children for d in differences(a.children[k], b.children[k],
                                                        (*path, k))]


def identical(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def assert_as_whole(reparser: Reparser, text: str) -> None:
    whole = load_text(text, path=FILE, display="spec.yaml")
    got = reparser.load_text(text, path=FILE, display="spec.yaml")
    assert [repr(d) for d in got.diagnostics] == [repr(d) for d in whole.diagnostics], text
    assert identical(got.value, whole.value), text
    assert (got.positions is None) == (whole.positions is None), text
    if whole.positions is not None and got.positions is not None:
        assert differences(got.positions, whole.positions) == [], text
    assert got.source.text == text and got.readable == whole.readable


def primed() -> Reparser:
    """A Reparser that has seen the file before: the next text is parsed piece by piece
    (a file seen for the first time is parsed whole, and cut into pieces)."""
    reparser = Reparser()
    reparser.load_text("other: 1\n", path=FILE, display="spec.yaml")
    return reparser


def test_every_spec_of_the_repository_parses_as_whole() -> None:
    assert len(CORPUS) > 100
    reparser = primed()
    for text in CORPUS:
        assert_as_whole(reparser, text)  # piece by piece


def test_pieces_cut_from_a_whole_parse_are_what_they_parse_to_alone() -> None:
    for text in CORPUS:
        cut = Reparser()
        assert_as_whole(cut, text)  # whole, and cut
        for (piece, name, next_col), kept in cut._pieces.items():
            # a piece cut from the whole parse is what parsing it alone gives
            alone = load_piece(piece, name, next_col, kept.line)
            assert alone is not None, piece
            assert identical(alone[0], kept.value) and alone[2] == kept.count, piece
            assert differences(alone[1], kept.pos) == [], piece
        assert_as_whole(cut, text + "# an edit\n")  # with the pieces cut


#: a first text, then an edit of it, through one Reparser: what was cut from the first
#: text's whole parse must not stand for a piece that parses differently alone
SEQUENCES = [
    ("agents:\n  a: &x {k: 1}\n  b: *x\n", "agents:\n  a: &y {k: 1}\n  b: *x\n"),
    ("root: r\n<x>: 1\nname: n\n", "root: r\n<x>: 2\nname: n\n"),
    ('state:\n  a: 1\n  "user:b": 2\n', 'state:\n  a: 1\n  "user:b": 3\n'),
    (BIG, BIG.rstrip("\n")),
    (BIG, BIG.replace("  agent_5:\n", "  agent_4:\n")),
    (BIG, "# moved\n" + BIG.replace("Do step 3", "Do step three")),
]


@pytest.mark.parametrize(("first", "then"), SEQUENCES)
def test_an_edit_after_the_first_text_parses_as_whole(first: str, then: str) -> None:
    reparser = Reparser()
    assert_as_whole(reparser, first)
    assert_as_whole(reparser, then)


@pytest.mark.parametrize("text", TRICKY)
def test_texts_that_cross_the_cuts_parse_as_whole(text: str) -> None:
    assert_as_whole(primed(), text)


#: what the random edits insert: YAML's structure characters and lines
INSERTS = ["|", "|-", ">", '"', "'", "[", "]", "{", "}", "&a ", "*a", "<<: *a", "---", ": ",
           "#", "- ", "\n", "\n  ", "\n    ", "  ", "x: 1\n", "\n  y:\n    z: 1\n",
           "\nagents:\n", "\t", "!!int ", "? ", ",", "\n# c\n", "\n\n", "b: |\n  t\n",
           "\nq: [1,\n2]\n", '"\n', "\n...\n"]


def edited(rng: random.Random, text: str) -> str:
    at = rng.randint(0, len(text))
    roll = rng.random()
    if roll < 0.5:
        return text[:at] + rng.choice(INSERTS) + text[at:]
    if roll < 0.75:
        return text[:at] + text[at + rng.randint(1, 6):]
    lines = text.split("\n")
    if roll < 0.9:
        lines.insert(rng.randrange(len(lines)), rng.choice(lines))
    else:
        del lines[rng.randrange(len(lines))]
    return "\n".join(lines)


def test_random_edits_parse_as_whole() -> None:
    """Edits in a row through one Reparser, as keystrokes arrive: what it kept from the
    texts before never shows through."""
    rng = random.Random(26)
    small = [text for text in CORPUS if len(text) < 6000]
    for _ in range(80):
        reparser = Reparser()
        text = rng.choice([*small, BIG])
        for _ in range(4):
            text = edited(rng, text)
            assert_as_whole(reparser, text)


def test_an_edit_parses_the_edited_piece_only() -> None:
    reparser = primed()
    reparser.load_text(BIG, path=FILE, display="spec.yaml")
    first = reparser.parsed_pieces
    assert first == 12 + 4  # each agent, and the other top-level keys
    reparser.load_text(BIG.replace("Do step 7", "Do step seven"), path=FILE, display="spec.yaml")
    assert reparser.parsed_pieces == first + 1
    # a line added above every piece: they move, none is parsed again
    moved = reparser.load_text("# one more line\n" + BIG, path=FILE, display="spec.yaml")
    assert reparser.parsed_pieces == first + 1
    assert moved.positions is not None
    assert moved.positions.find(("agents", "agent_3", "tools")) is not None
    reparser.load_text(BIG, path=FILE, display="spec.yaml")  # the same text: nothing parsed
    assert reparser.parsed_pieces == first + 1


def test_a_file_seen_first_is_cut_from_its_whole_parse() -> None:
    """Opening a file parses it whole (one parser set-up, not one per piece), and cuts it
    into the pieces the next keystroke reuses."""
    reparser = Reparser()
    reparser.load_text(BIG, path=FILE, display="spec.yaml")
    assert reparser.parsed_pieces == 0 and len(reparser._pieces) == 12 + 4
    reparser.load_text(BIG.replace("Do step 7", "Do step seven"), path=FILE, display="spec.yaml")
    assert reparser.parsed_pieces == 1


def test_what_it_hands_out_can_be_merged_into() -> None:
    """load_tree merges imported sections into the root file's mappings: a kept parse must
    not see what an earlier caller added to it."""
    reparser = primed()
    first = reparser.load_text(BIG, path=FILE, display="spec.yaml")
    first.value["agents"]["imported"] = {}
    first.value["tools"] = {"added": {}}
    again = reparser.load_text(BIG, path=FILE, display="spec.yaml")
    assert "imported" not in again.value["agents"] and "tools" not in again.value


def test_a_file_of_too_many_pieces_is_parsed_whole() -> None:
    """Each piece costs a parser's set-up, and more than the Reparser keeps would be parsed
    again at every keystroke: such a file is parsed as one."""
    text = "agents:\n" + "".join(f"  a{i}: {{}}\n" for i in range(MAX_PIECES + 1))
    reparser = primed()
    assert_as_whole(reparser, text)
    assert reparser.parsed_pieces <= 2


def test_what_it_keeps_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keystrokes in a large piece make a new piece each: the oldest go, by count and by
    size, and each file keeps one last text."""
    monkeypatch.setattr(incremental, "_PIECE_CHARS", 2000)
    reparser = primed()
    for index in range(60):
        reparser.load_text(BIG.replace("Do step 7", f"Do step {index}"), path=FILE,
                           display="spec.yaml")
    assert 0 < reparser._chars <= 2000
    assert sum(len(key[0]) for key in reparser._pieces) == reparser._chars
    assert len(reparser._files) == 1
