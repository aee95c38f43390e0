"""Module sources read without import (`agentspec.pysource`): the names a top level binds,
and hostile files that must neither hang nor crash validate."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from agentspec.pysource import MAX_SOURCE, SyntaxProblem, parsed, top_names

SOURCE = '''\
import os.path
from a import b as c, d
from .rel import e
x, (y, z) = 1, (2, 3)
w: int = 1
for loop_var in range(2):
    pass
with open("f") as handle:
    pass
if (walrus := 3):
    from f import conditional
try:
    import g as h
except ImportError:
    h = None
match w:
    case {"k": bound, **rest}:
        pass
    case [first, *others]:
        pass
type Alias = int
def f() -> None:
    global late
    late = 1
    inner = 2
class K:
    attribute = 1
async def g() -> None:
    pass
'''


def test_top_level_names(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE if hasattr(ast, "TypeAlias") else
                                   SOURCE.replace("type Alias = int\n", "Alias = int\n"))
    tree = parsed(str(tmp_path / "m.py"))
    assert isinstance(tree, ast.Module)
    names = top_names(tree)
    assert {"os", "c", "d", "e", "x", "y", "z", "w", "loop_var", "handle", "walrus",
            "conditional", "h", "bound", "rest", "first", "others", "Alias", "f", "late",
            "K", "g"} <= names.bound
    assert not {"b", "inner", "attribute", "path"} & names.bound
    assert not names.open


@pytest.mark.parametrize("text", ["from elsewhere import *\n", "def __getattr__(name): ...\n"])
def test_a_module_that_may_bind_any_name_is_open(tmp_path: Path, text: str) -> None:
    (tmp_path / "m.py").write_text(text)
    tree = parsed(str(tmp_path / "m.py"))
    assert isinstance(tree, ast.Module) and top_names(tree).open


def test_hostile_sources(tmp_path: Path) -> None:
    (tmp_path / "nul.py").write_bytes(b"x = 1\0\n")
    (tmp_path / "deep.py").write_text("x = " + "(" * 5000 + ")" * 5000 + "\n")
    (tmp_path / "bad.py").write_text("def run(:\n    pass\n")
    (tmp_path / "big.py").write_text("#" * (MAX_SOURCE + 1))
    for name in ("nul.py", "deep.py"):
        assert isinstance(parsed(str(tmp_path / name)), SyntaxProblem), name
    problem = parsed(str(tmp_path / "bad.py"))
    assert isinstance(problem, SyntaxProblem) and problem.line == 1
    assert parsed(str(tmp_path / "big.py")) is None  # left to build
    assert parsed(str(tmp_path / "missing.py")) is None
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.py")
        assert parsed(str(tmp_path / "fifo.py")) is None  # not read, so never blocks
