"""Unit tests of `agentspec.parse`: data, 1-based positions, and every read/YAML diagnostic."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from agentspec.parse import MAX_BYTES, MAX_NODES, Parsed, load, load_text
from agentspec.parse import compose as yaml_compose
from agentspec.parse import loader as yaml_loader
from agentspec.source import Span

Where = tuple[str, int, int]


def parse(text: str, name: str = "spec.yaml") -> Parsed:
    return load_text(text, path=Path(name))


def start(span: Span | None) -> tuple[int, int] | None:
    return (span.start.line, span.start.col) if span else None


def codes_at(parsed: Parsed) -> list[tuple[str, tuple[int, int] | None]]:
    """Diagnostics as (code, (line, col)): what these tests assert, never the wording."""
    return [(d.code, start(d.span)) for d in parsed.diagnostics]


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """What parsing did, counted: documents composed and values converted (aliases
    expanded). Tests of hostile input assert that this stays bounded, never how long it took;
    a parse that hangs fails by the test's timeout."""
    counts = {"composed": 0, "converted": 0}
    compose, convert = yaml_loader.compose, yaml_loader._Converter.convert

    def counting_compose(text: str, limit: int) -> list[object]:
        counts["composed"] += 1
        return compose(text, limit)

    def counting_convert(self: yaml_loader._Converter, node: object) -> object:
        counts["converted"] += 1
        return convert(self, node)  # type: ignore[arg-type]

    monkeypatch.setattr(yaml_loader, "compose", counting_compose)
    monkeypatch.setattr(yaml_loader._Converter, "convert", counting_convert)
    return counts


def assert_failed(parsed: Parsed) -> None:
    assert parsed.value is None
    assert parsed.positions is None
    assert not parsed.ok


# --- data and positions ---------------------------------------------------------------------


def test_plain_mapping_is_plain_data() -> None:
    parsed = parse("a: 1\nb:\n  c: [x, y]\n  d: {e: true, f: null, g: 1.5}\n")
    assert parsed.ok
    assert parsed.diagnostics == []
    assert parsed.value == {"a": 1, "b": {"c": ["x", "y"], "d": {"e": True, "f": None, "g": 1.5}}}
    assert type(parsed.value) is dict
    assert type(parsed.value["b"]["c"]) is list


def test_scalar_types() -> None:
    parsed = parse(
        "i: 42\nneg: -7\nhex: 0x1f\noct: 0o17\nf: 2.5\nexp: 1e3\ninf: .inf\nninf: -.inf\n"
        "nan: .nan\nt: true\nf2: False\nn: ~\ns: 'text'\nq: \"1\"\n"
    )
    value = parsed.value
    assert value["i"] == 42 and type(value["i"]) is int
    assert value["neg"] == -7
    assert value["hex"] == 31
    assert value["oct"] == 15
    assert value["f"] == 2.5
    assert value["exp"] == 1000.0
    assert value["inf"] == float("inf")
    assert value["ninf"] == float("-inf")
    assert value["nan"] != value["nan"]
    assert value["t"] is True and value["f2"] is False
    assert value["n"] is None
    assert value["s"] == "text"
    assert value["q"] == "1"


def test_value_positions_are_one_based() -> None:
    parsed = parse("a: 1\nb:\n  c: [x, y]\n")
    pos = parsed.positions
    assert pos is not None
    assert start(pos.find(("a",)).value) == (1, 4)  # type: ignore[union-attr]
    assert start(pos.find(("b", "c")).value) == (3, 6)  # type: ignore[union-attr]
    assert start(pos.find(("b", "c", 0)).value) == (3, 7)  # type: ignore[union-attr]
    assert start(pos.find(("b", "c", 1)).value) == (3, 10)  # type: ignore[union-attr]
    assert pos.find(("b", "c", 1)).value.file == "spec.yaml"  # type: ignore[union-attr]


def test_key_positions_are_one_based() -> None:
    parsed = parse("a: 1\nb:\n  c: [x, y]\n")
    pos = parsed.positions
    assert pos is not None
    assert start(pos.find(("a",)).key) == (1, 1)  # type: ignore[union-attr]
    assert start(pos.find(("b",)).key) == (2, 1)  # type: ignore[union-attr]
    assert start(pos.find(("b", "c")).key) == (3, 3)  # type: ignore[union-attr]
    assert pos.key_span(("b", "c")).start.col == 3
    # list items have no key: key_span falls back to the value
    assert start(pos.key_span(("b", "c", 1))) == (3, 10)


def test_block_list_and_block_scalar_positions() -> None:
    text = "agents:\n  x:\n    tools:\n      - one\n      - two\n    instruction: |\n      hi\n"
    pos = parse(text).positions
    assert pos is not None
    assert start(pos.value_span(("agents", "x", "tools", 0))) == (4, 9)
    assert start(pos.value_span(("agents", "x", "tools", 1))) == (5, 9)
    assert start(pos.key_span(("agents", "x", "instruction"))) == (6, 5)
    assert start(pos.value_span(("agents", "x", "instruction"))) == (6, 18)


def test_nearest_falls_back_to_ancestor() -> None:
    pos = parse("a:\n  b: 1\n").positions
    assert pos is not None
    assert pos.find(("a", "missing")) is None
    assert start(pos.value_span(("a", "missing", "deeper"))) == (2, 3)


def test_root_span_and_display_name() -> None:
    parsed = load_text("a: 1\n", path=Path("/abs/spec.yaml"), display="shown.yaml")
    assert parsed.source.name == "shown.yaml"
    assert parsed.positions is not None
    assert parsed.positions.value.file == "shown.yaml"
    assert start(parsed.positions.value) == (1, 1)


def test_anchor_and_alias_copy_the_value() -> None:
    parsed = parse("base: &b [1, 2]\nother: *b\n")
    assert parsed.ok
    assert parsed.value == {"base": [1, 2], "other": [1, 2]}
    pos = parsed.positions
    assert pos is not None
    # an alias points at where the anchored value was written
    assert start(pos.value_span(("other", 0))) == (1, 11)


def test_reused_anchor_name_refers_to_the_latest() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = parse("x: &a 1\ny: &a 2\nz: *a\n")
    assert parsed.ok
    assert parsed.value == {"x": 1, "y": 2, "z": 2}


def test_reused_anchor_emits_no_python_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse("x: &a 1\ny: &a 2\nz: *a\n")


def test_merge_key_does_not_override_explicit_keys() -> None:
    parsed = parse("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n")
    assert parsed.ok
    assert parsed.value["d"] == {"x": 1, "y": 3}
    assert "<<" not in parsed.value["d"]
    pos = parsed.positions
    assert pos is not None
    assert start(pos.value_span(("d", "y"))) == (4, 6)
    # a merged key keeps the position of its definition in the anchor
    assert start(pos.value_span(("d", "x"))) == (1, 14)
    assert start(pos.key_span(("d", "x"))) == (1, 11)


def test_merge_key_list_of_mappings() -> None:
    parsed = parse("a: &r {x: 1}\nb:\n  <<: [*r, {y: 2}]\n  z: 3\n")
    assert parsed.ok
    assert parsed.value["b"] == {"x": 1, "y": 2, "z": 3}


def test_merge_key_of_a_scalar_is_a_wrong_type() -> None:
    parsed = parse("a: 1\n<<: 5\n")
    assert codes_at(parsed) == [("AS103", (2, 5))]


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbfagentspec: 1\nname: x\n")
    parsed = load(path)
    assert parsed.ok, parsed.diagnostics
    assert parsed.value == {"agentspec": 1, "name": "x"}
    assert start(parsed.positions.find(("name",)).key) == (2, 1)  # type: ignore[union-attr]


def test_load_reads_file_and_uses_display(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("a: [1, 2]\n")
    parsed = load(path, display="nice.yaml")
    assert parsed.ok
    assert parsed.value == {"a": [1, 2]}
    assert parsed.source.name == "nice.yaml"
    assert parsed.source.text == "a: [1, 2]\n"


def test_document_end_marker_is_one_document() -> None:
    parsed = parse("---\na: 1\n...\n")
    assert parsed.ok
    assert parsed.value == {"a": 1}


# --- failures -------------------------------------------------------------------------------


def test_yaml_syntax_error() -> None:
    parsed = parse("a: 1\nb: [1, 2\n")
    assert_failed(parsed)
    assert [d.code for d in parsed.diagnostics] == ["AS004"]
    assert parsed.diagnostics[0].span.file == "spec.yaml"  # type: ignore[union-attr]
    assert start(parsed.diagnostics[0].span) == (3, 1)


def test_yaml_syntax_error_position_inside_line() -> None:
    parsed = parse("a: 1\nb: 'open\n")
    assert [d.code for d in parsed.diagnostics] == ["AS004"]
    parsed = parse("a: b: c\n")
    assert codes_at(parsed) == [("AS004", (1, 5))]


AGENT = "agents:\n  main:\n    instruction: Hi\n"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # a key between two levels: the parser's own mark is right, its words are not
        (AGENT + "   model: x\n", ("AS014", (4, 4))),
        (AGENT + "    # a comment\n   model: x\n", ("AS014", (5, 4))),
        # indented more than the key above: read as more of its value
        (AGENT + "     model: x\n    tools: []\n", ("AS014", (4, 6))),
        ("name: a\n agents: {}\n", ("AS014", (2, 2))),
        # a list item lined up with no list
        (AGENT + "    tools:\n      - a\n     - b\n", ("AS014", (6, 6))),
        (AGENT + "    tools:\n      - a\n  - b\n", ("AS014", (6, 3))),
        (AGENT + "    tools:\n    - python: a:b\n     args: {}\n", ("AS014", (6, 6))),
        (AGENT + "    tools:\n   - a\n", ("AS014", (5, 4))),
        # the first line indented, the rest not
        ("  a: 1\nb: 2\n", ("AS014", (1, 1))),
        # a line of a block scalar indented less than the text above it
        ("a:\n  b: |\n      one\n     two\n", ("AS014", (4, 6))),
        # no colon: ruamel stops on the next line; the diagnostic is on this one
        (AGENT + "    model x\n    tools: []\n", ("AS004", (4, 5))),
        (AGENT + "    model x\n", ("AS004", (4, 5))),
        (AGENT + "  model\n    tools: []\n", ("AS004", (4, 3))),
        ("a:\n- x\n-y\n", ("AS004", (3, 1))),
        # a colon inside a plain value
        ("a: b: c\n", ("AS004", (1, 5))),
    ],
)
def test_indentation_mistakes_point_at_the_line_to_fix(
        text: str, where: tuple[str, tuple[int, int]]) -> None:
    parsed = parse(text)
    assert_failed(parsed)
    assert codes_at(parsed) == [where]
    assert parsed.diagnostics[0].hint, parsed.diagnostics[0]


def test_tab_inside_a_value_is_not_tab_indentation() -> None:
    # YAML 1.2 allows a tab inside a plain scalar (ruamel's pure parser alone refuses it)
    parsed = parse("a: b\tc\n")
    assert parsed.ok and parsed.value == {"a": "b\tc"}


def test_tab_inside_a_block_scalar_is_content() -> None:
    parsed = parse("a: |\n  make:\n  \techo hi\nb: 1\n")
    assert parsed.ok, parsed.diagnostics
    assert parsed.value == {"a": "make:\n\techo hi\n", "b": 1}


def test_tab_in_a_block_scalar_does_not_hide_the_real_error() -> None:
    parsed = parse("a: |\n  make:\n  \techo hi\nb: [1\n")
    assert [d.code for d in parsed.diagnostics] == ["AS004"]


def test_duplicate_key_points_at_second_and_relates_to_first() -> None:
    parsed = parse("a: 1\nb: 2\na: 3\n")
    assert codes_at(parsed) == [("AS005", (3, 1))]
    (diag,) = parsed.diagnostics
    assert [start(r.span) for r in diag.related] == [(1, 1)]
    assert diag.related[0].span.file == "spec.yaml"
    assert parsed.value == {"a": 1, "b": 2}  # the first value is kept


def test_duplicate_key_nested_in_flow_and_list() -> None:
    parsed = parse("a: 1\nb: {c: 1, c: 2}\n")
    assert codes_at(parsed) == [("AS005", (2, 11))]
    assert [start(r.span) for r in parsed.diagnostics[0].related] == [(2, 5)]
    parsed = parse("a:\n  - x\n  - y: 1\n    y: 2\n")
    assert codes_at(parsed) == [("AS005", (4, 5))]
    assert [start(r.span) for r in parsed.diagnostics[0].related] == [(3, 5)]


def test_tab_indentation() -> None:
    parsed = parse("a:\n\tb: 1\n")
    assert_failed(parsed)
    assert codes_at(parsed) == [("AS006", (2, 1))]


def test_tab_after_spaces_points_at_the_tab() -> None:
    parsed = parse("a:\n  b:\n  \tc: 1\n")
    assert codes_at(parsed) == [("AS006", (3, 3))]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "# one\n\n# two\n"])
def test_empty_and_comment_only(text: str) -> None:
    parsed = parse(text)
    assert_failed(parsed)
    assert codes_at(parsed) == [("AS007", (1, 1))]


@pytest.mark.parametrize("text", ["- a\n- b\n", "hello\n", "42\n", "true\n", "null\n", "[1]\n"])
def test_top_level_not_a_mapping(text: str) -> None:
    parsed = parse(text)
    assert_failed(parsed)
    assert codes_at(parsed) == [("AS008", (1, 1))]


def test_explicit_empty_document_is_an_empty_file() -> None:
    # `---` with nothing after it holds no content: the file is empty, not "not a mapping"
    parsed = parse("---\n")
    assert_failed(parsed)
    assert [d.code for d in parsed.diagnostics] == ["AS007"]


def test_trailing_document_marker_is_not_a_second_document() -> None:
    parsed = parse("a: 1\n---\n")
    assert parsed.ok and parsed.value == {"a": 1}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("a: !!python/object/apply:os.system [ls]\n", (1, 4)),
        ("a: !!python/object/apply:os.system\n  args: [echo hi]\n", (1, 4)),
        ("a: 1\nb: !include other.yaml\n", (2, 4)),
        ("a: !!binary aGVsbG8=\n", (1, 4)),
        ("a: !!set {x, y}\n", (1, 4)),
        ("a:\n  b: !custom {x: 1}\n", (2, 6)),
    ],
)
def test_custom_tags_are_refused(text: str, where: tuple[int, int]) -> None:
    parsed = parse(text)
    assert codes_at(parsed) == [("AS009", where)]
    assert not parsed.ok


def test_python_object_apply_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    parsed = parse(f"a: !!python/object/apply:os.system ['touch {marker}']\n")
    assert [d.code for d in parsed.diagnostics] == ["AS009"]
    assert not marker.exists()


def test_custom_tag_on_the_root() -> None:
    parsed = parse("!!python/object:builtins.dict {a: 1}\n")
    assert "AS009" in [d.code for d in parsed.diagnostics]
    assert not parsed.ok


@pytest.mark.timeout(120)
def test_file_too_large(tmp_path: Path, work: dict[str, int]) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * MAX_BYTES + "\n")
    parsed = load(path, display="big.yaml")
    assert work == {"composed": 0, "converted": 0}  # refused before any YAML is read
    assert_failed(parsed)
    assert [(d.code, d.span.file if d.span else None, start(d.span))
            for d in parsed.diagnostics] == [("AS010", "big.yaml", (1, 1))]


def test_text_too_large() -> None:
    parsed = parse("a: " + "x" * MAX_BYTES + "\n")
    assert codes_at(parsed) == [("AS010", (1, 1))]


def test_file_exactly_at_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "limit.yaml"
    body = "a: "
    path.write_text(body + "x" * (MAX_BYTES - len(body) - 1) + "\n")
    assert path.stat().st_size == MAX_BYTES
    parsed = load(path)
    assert parsed.ok


def billion_laughs(levels: int = 9, width: int = 10) -> str:
    text = "a: &a [" + ", ".join(["lol"] * width) + "]\n"
    previous = "a"
    for index in range(levels):
        name = f"l{index}"
        text += f"{name}: &{name} [" + ", ".join([f"*{previous}"] * width) + "]\n"
        previous = name
    return text


@pytest.mark.timeout(120)
def test_billion_laughs_is_stopped_quickly(work: dict[str, int]) -> None:
    parsed = parse(billion_laughs())
    assert work["converted"] == MAX_NODES + 1  # stopped at the budget, not at 10**10 values
    assert_failed(parsed)
    assert [d.code for d in parsed.diagnostics] == ["AS011"]
    assert parsed.diagnostics[0].span is not None


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_billion_laughs_with_mappings_is_stopped_quickly(work: dict[str, int]) -> None:
    text = "a: &a {k0: x, k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x}\n"
    previous = "a"
    for index in range(9):
        name = f"m{index}"
        text += f"{name}: &{name} {{" + ", ".join(f"k{i}: *{previous}" for i in range(8)) + "}\n"
        previous = name
    parsed = parse(text)
    assert work["converted"] == MAX_NODES + 1
    assert [d.code for d in parsed.diagnostics] == ["AS011"]


def test_small_alias_fan_out_is_fine() -> None:
    parsed = parse(billion_laughs(levels=2, width=10))
    assert parsed.ok


@pytest.mark.timeout(120)
def test_recursive_alias(work: dict[str, int]) -> None:
    parsed = parse("a: &x [*x]\n")
    assert work["converted"] == 3  # the document, the list, the list again: refused
    assert_failed(parsed)
    assert codes_at(parsed) == [("AS011", (1, 4))]


def test_recursive_alias_through_mapping() -> None:
    parsed = parse("a: &x\n  b: 1\n  c: *x\n")
    assert [d.code for d in parsed.diagnostics] == ["AS011"]
    assert_failed(parsed)


def test_recursive_merge_key() -> None:
    parsed = parse("a: &x\n  b: 1\n  <<: *x\n")
    assert [d.code for d in parsed.diagnostics] == ["AS011"]


def test_multiple_documents() -> None:
    parsed = parse("a: 1\n---\nb: 2\n")
    assert codes_at(parsed) == [("AS012", (3, 1))]
    assert parsed.value == {"a": 1}  # the first document is still read
    assert not parsed.ok


def test_three_documents_report_once() -> None:
    parsed = parse("a: 1\n---\nb: 2\n---\nc: 3\n")
    assert codes_at(parsed) == [("AS012", (3, 1))]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("1: a\nb: 2\n", (1, 1)),
        ("a: 1\nnull: x\n", (2, 1)),
        ("a: 1\ntrue: x\n", (2, 1)),
        ("a:\n  1.5: x\n", (2, 3)),
        ("? [a, b]\n: c\n", (1, 3)),
        ("? {a: 1}\n: c\n", (1, 3)),
    ],
)
def test_non_string_keys(text: str, where: tuple[int, int]) -> None:
    parsed = parse(text)
    assert codes_at(parsed) == [("AS013", where)]
    assert not parsed.ok


def test_quoted_number_key_is_a_string() -> None:
    parsed = parse('"1": a\n')
    assert parsed.ok
    assert parsed.value == {"1": "a"}


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"a: 1\nb: caf\xe9\n", (2, 7)),
        (b"\xff: 1\n", (1, 1)),
        (b"a: 1\n\nccc: \x80\n", (3, 6)),
        (b"\xef\xbb\xbfa: \xff\n", (1, 4)),  # the BOM is not a column
        (b"a: \xc3\xa9\xc3\n", (1, 5)),  # a valid two-byte character, then a broken one
    ],
)
def test_undecodable_bytes(tmp_path: Path, raw: bytes, where: tuple[int, int]) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(raw)
    parsed = load(path, display="latin1.yaml")
    assert_failed(parsed)
    assert [(d.code, d.span.file if d.span else None, start(d.span))
            for d in parsed.diagnostics] == [("AS003", "latin1.yaml", where)]


def test_missing_file(tmp_path: Path) -> None:
    parsed = load(tmp_path / "nope.yaml")
    assert_failed(parsed)
    assert [d.code for d in parsed.diagnostics] == ["AS001"]


def test_directory(tmp_path: Path) -> None:
    parsed = load(tmp_path)
    assert_failed(parsed)
    assert [d.code for d in parsed.diagnostics] == ["AS002"]


@pytest.mark.parametrize("char", ["\x07", "\x1b", "\x0c"])
def test_forbidden_character_is_reported_where_it_is(char: str) -> None:
    parsed = parse(f"a: 1\nb: x{char}y\n")
    assert codes_at(parsed) == [("AS004", (2, 5))]


def test_forbidden_character_is_a_syntax_error() -> None:
    parsed = parse("a: 1\nb: x\x07y\n")
    assert [d.code for d in parsed.diagnostics] == ["AS004"]
    assert_failed(parsed)


@pytest.mark.parametrize("value", ['"x\u2028y"', "x\u2028y", '"x\x85y"', "x\x85y",
                                   '"x\u2029y"'])
def test_unicode_line_separators_do_not_shift_lines(value: str) -> None:
    parsed = parse(f"a: {value}\nb: 1\n")
    assert parsed.ok
    key = parsed.positions.find(("b",)).key  # type: ignore[union-attr]
    assert start(key) == (2, 1)
    assert parsed.source.line(2) == "b: 1"


@pytest.mark.skipif(not Path("/dev/zero").exists() or sys.platform != "linux",
                    reason="needs Linux /dev/zero and RLIMIT_AS")
def test_endless_special_file_is_bounded() -> None:
    code = textwrap.dedent("""\
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
        from pathlib import Path
        from agentspec.parse import load
        parsed = load(Path("/dev/zero"))
        print([d.code for d in parsed.diagnostics])
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() in ("['AS010']", "['AS002']")


def test_deep_nesting_is_a_diagnostic_not_a_crash() -> None:
    parsed = parse("a: " + "[" * 5000 + "]" * 5000 + "\n")
    assert [d.code for d in parsed.diagnostics] == ["AS004"]
    assert_failed(parsed)


def test_all_diagnostics_are_errors_with_registered_codes() -> None:
    from agentspec.diagnostics import REGISTRY

    for text in ("a: [", "a: 1\na: 2\n", "", "- a\n", "a: !x 1\n", "1: a\n", "a: &x [*x]\n"):
        for diag in parse(text).diagnostics:
            assert diag.code in REGISTRY
            assert diag.is_error


@pytest.mark.slow  # over 5 s of CPU (tests/conftest.py measures it)
@pytest.mark.parametrize("text", ["[" * 30000 + "]" * 30000, "- " * 30000 + "x"])
def test_nesting_the_c_parser_would_crash_on_is_a_diagnostic(text: str) -> None:
    # libyaml's composer recursed in C: 30,000 nested sequences killed the process (SIGSEGV);
    # run in a child so a crash fails this test instead of the whole session
    code = ("from pathlib import Path; from agentspec.parse import load_text; import sys; "
            "p = load_text(sys.stdin.read(), path=Path('s.yaml')); "
            "print([d.code for d in p.diagnostics])")
    done = subprocess.run([sys.executable, "-c", code], input="agentspec: 1\nx: " + text + "\n",
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "AS004" in done.stdout


@pytest.mark.parametrize(("value", "where"), [
    ("!!int offline", (1, 4)), ("!!float abc", (1, 4)), ("!!bool maybe", (1, 4)),
    ("!!null nothing", (1, 4)), ("!!int 1.5", (1, 4)), ("!!int 0x", (1, 4))])
def test_explicit_tag_the_text_does_not_fit_is_a_diagnostic(
        value: str, where: tuple[int, int]) -> None:
    # `!!int offline` made int() raise: validate, graph, build and import adk failed with an
    # internal error (exit 2)
    parsed = parse(f"a: {value}\n")
    assert codes_at(parsed) == [("AS017", where)]
    assert not parsed.ok


@pytest.mark.parametrize(("value", "expected"), [
    ("!!int 0x1F", 31), ("!!int -0b101", -5), ("!!float 1.5", 1.5), ("!!bool True", True),
    ("!!null ~", None), ("!!str 12", "12")])
def test_explicit_tag_the_text_fits_is_read(value: str, expected: object) -> None:
    parsed = parse(f"a: {value}\n")
    assert parsed.diagnostics == [] and parsed.value == {"a": expected}


def _scanner_work(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the simple keys the pure-Python scanner looks at (its work per token grows
    with the number of open flow levels)."""
    from ruamel.yaml.scanner import Scanner

    seen = [0]
    original = Scanner.stale_possible_simple_keys

    def counting(self: Scanner) -> None:
        seen[0] += len(self.possible_simple_keys)
        original(self)

    monkeypatch.setattr(Scanner, "stale_possible_simple_keys", counting)
    return seen


@pytest.mark.parametrize("prefix", ["", "t: {python: mod:attr}\n"])  # libyaml; pure Python
def test_nested_flow_is_refused_at_the_level_past_the_limit(
        monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    # 200 KB of `[` took 99 s: both scanners look at every open flow level at every token
    seen = _scanner_work(monkeypatch)
    work = []
    for depth in (2_000, 8_000):
        seen[0] = 0
        parsed = parse(prefix + "x: " + "[" * depth + "]" * depth + "\n")
        line = prefix.count("\n") + 1
        assert codes_at(parsed) == [("AS004", (line, 4 + yaml_loader.MAX_FLOW_DEPTH))]
        work.append(seen[0])
    assert work[1] <= work[0] + 1_000  # stops at the limit: no more work for a deeper text
    limit = yaml_loader.MAX_FLOW_DEPTH
    at_limit = parse(prefix + "x: " + "[" * limit + "]" * limit + "\n")
    assert at_limit.diagnostics == []


def test_the_pure_parser_stops_composing_past_the_node_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_loader, "MAX_NODES", 50)
    monkeypatch.setattr(yaml_compose, "_compose_c", lambda text: None)  # libyaml reads it
    parsed = parse("t: {python: mod:attr}\nx: [" + "a, " * 100 + "]\n")
    # 7 nodes before the list's items (root, t, its mapping, python, mod:attr, x, the list):
    # the 44th item is the 51st node
    assert codes_at(parsed) == [("AS010", (2, 5 + 3 * 43))]


@pytest.mark.parametrize(("value", "code", "where"), [
    ("!!int offline", "AS017", (3, 14)),
    ("[" * 5_000 + "]" * 5_000, "AS004", (3, 14 + yaml_loader.MAX_FLOW_DEPTH))])
def test_import_adk_reads_through_the_same_bounds(
        tmp_path: Path, value: str, code: str, where: tuple[int, int]) -> None:
    from agentspec.adkimport.loader import load_adk

    (tmp_path / "root_agent.yaml").write_text(
        f"name: root\nmodel: gemini-2.5-flash\ninstruction: {value}\n", encoding="utf-8")
    tree = load_adk(tmp_path)
    assert [(d.code, start(d.span)) for d in tree.diagnostics] == [(code, where)]
