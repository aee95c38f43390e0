"""Module sources read without import (`agentspec.pysource`): the names a top level binds,
and hostile files that must neither hang nor crash validate."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from agentspec.pysource import (
    MAX_SOURCE,
    SyntaxProblem,
    imports_submodule,
    module_file,
    parsed,
    top_names,
)

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


def _names(tmp_path: Path, text: str) -> tuple[frozenset[str], bool]:
    (tmp_path / "m.py").write_text(text)
    tree = parsed(str(tmp_path / "m.py"))
    assert isinstance(tree, ast.Module)
    names = top_names(tree)
    return names.bound, names.open


@pytest.mark.parametrize(("text", "bound", "unbound"), [
    ("lookup: int\n", set(), {"lookup"}),  # an annotation alone binds nothing
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from h import a\nelse:\n"
     "    b = 1\n", {"b", "TYPE_CHECKING"}, {"a"}),
    ("import typing\nif typing.TYPE_CHECKING:\n    a = 1\n", {"typing"}, {"a"}),
    ("a = 1\ndel a\n", set(), {"a"}),
    ("a = 1\ndel a\na = 2\n", {"a"}, set()),  # bound again after the del
    ("a = 1\nif len(__name__) > 99:\n    del a\n", {"a"}, set()),  # may still be bound
    ("try:\n    from x import y\nexcept ImportError:\n    y = None\n", {"y"}, set()),
    ("try:\n    pass\nexcept ImportError as error:\n    pass\n", set(), {"error"}),
    ("if len(__name__) > 9:\n    def a() -> None: ...\nelse:\n    class B: ...\n",
     {"a", "B"}, set()),
    ("class K:\n    method = 1\n", {"K"}, {"method"}),
])
def test_names_bound_when_the_module_runs(tmp_path: Path, text: str, bound: set[str],
                                          unbound: set[str]) -> None:
    names, opened = _names(tmp_path, text)
    assert bound <= names and not unbound & names and not opened


@pytest.mark.parametrize("text", [
    'globals()["lookup"] = len\n',
    'exec("lookup = len")\n',
    'import sys\nsetattr(sys.modules[__name__], "lookup", len)\n',
    'import sys\nsys.modules[__name__].lookup = len\n',
    'vars()["lookup"] = len\n',
    'locals()["lookup"] = len\n',
    'import importlib\nsetattr(importlib.import_module(__name__), "lookup", len)\n',
    'def setup() -> None:\n    globals()["lookup"] = len\nsetup()\n',
])
def test_a_module_that_binds_names_dynamically_is_open(tmp_path: Path, text: str) -> None:
    assert _names(tmp_path, text)[1]


def test_a_logger_named_after_the_module_is_no_dynamic_binding(tmp_path: Path) -> None:
    names, opened = _names(tmp_path, "import logging\nlog = logging.getLogger(__name__)\n")
    assert names == {"logging", "log"} and not opened


def test_a_package_wins_over_a_module_of_its_name(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools.py").write_text("")
    assert module_file("tools", (str(tmp_path),)) == (str(tmp_path / "tools" / "__init__.py"),
                                                      True)
    (tmp_path / "only.py").write_text("")
    assert module_file("only", (str(tmp_path),)) == (str(tmp_path / "only.py"), False)
    (tmp_path / "fast.py").write_text("")
    (tmp_path / "fast.so").write_text("")  # an extension module is imported first
    assert module_file("fast", (str(tmp_path),)) is None


@pytest.mark.parametrize(("init", "imported"), [
    ("", False),
    ("from . import sub\n", True),
    ("from .sub import VALUE\n", True),
    ("from pkg.sub import VALUE\n", True),
    ("import pkg.sub\n", True),
    ("from pkg import sub\n", True),
    ("from . import other\n", False),
    ("from .subtle import VALUE\n", False),
])
def test_a_submodule_is_an_attribute_once_imported(tmp_path: Path, init: str,
                                                   imported: bool) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(init)
    for name in ("sub", "other", "subtle"):
        (package / f"{name}.py").write_text("VALUE = 1\n")
    assert imports_submodule(str(package), "pkg", "sub") is imported


def test_a_sibling_module_importing_the_submodule_counts(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .other import x\n")
    (package / "other.py").write_text("from . import sub\nx = 1\n")
    (package / "sub.py").write_text("")
    assert imports_submodule(str(package), "pkg", "sub")


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
