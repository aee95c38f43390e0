"""Golden failing cases: tests/cases/<case>/spec.yaml and expected.txt.

expected.txt lists one diagnostic per line as `file:line:col CODE`, in the order the
validator reports them (sorted by file, line, column, code). Comment lines start with `#`;
two directives set up the run: `# --env NAME` checks with that overlay, and
`# environ KEY=VALUE` sets an environment variable (the environment is otherwise empty).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentspec.validate.check import check
from tests.conftest import located

CASES = Path(__file__).parent / "cases"


def _expectations(case: Path) -> tuple[list[tuple[str, int, int, str]], str | None, dict[str, str]]:
    expected, environment, environ = [], None, {}
    for raw in (case / "expected.txt").read_text().splitlines():
        line = raw.strip()
        if line.startswith("# --env "):
            environment = line.removeprefix("# --env ").strip()
        elif line.startswith("# environ "):
            key, _, value = line.removeprefix("# environ ").partition("=")
            environ[key.strip()] = value
        elif line and not line.startswith("#"):
            where, code = line.rsplit(" ", 1)
            file, row, col = where.rsplit(":", 2)
            expected.append((file, int(row), int(col), code))
    return expected, environment, environ


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_golden_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = CASES / case
    monkeypatch.chdir(directory)
    expected, environment, environ = _expectations(directory)
    result = check(Path("spec.yaml"), environment=environment, environ=environ)
    assert located(result) == expected


def test_there_are_enough_cases() -> None:
    assert len([p for p in CASES.iterdir() if p.is_dir()]) >= 40
