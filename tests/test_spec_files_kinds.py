"""A path the spec names that holds the wrong kind of thing is reported as what it is
(agentspec/validate/semantic/files.py), not as missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentspec.validate.check import check

SPEC = "agentspec: 1\nname: x\nagents:\n  a: {model: gemini-2.5-flash, instruction_file: FILE}\n"


@pytest.mark.parametrize(("make", "said"), [
    (lambda p: None, "does not exist"),
    (lambda p: p.mkdir(), "is a directory, not a regular file"),
    (lambda p: os.mkfifo(p), "is a FIFO, socket or device, not a regular file"),
])
def test_an_instruction_file_of_the_wrong_kind_says_what_it_is(
        tmp_path: Path, make: object, said: str) -> None:
    if said.startswith("is a FIFO") and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    make(tmp_path / "prompt.md")  # type: ignore[operator]
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("FILE", "prompt.md"))
    found = [d for d in check(spec).diagnostics if d.code == "AS218"]
    assert [said in d.message for d in found] == [True], [d.message for d in found]
