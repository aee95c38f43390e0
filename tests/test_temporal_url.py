"""The `temporal://` job store URL: validate's checks (AS312-AS314) and the plain install."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agentspec.api import check_text
from agentspec.contract.temporal_url import TemporalUrlError, parse_temporal_url
from agentspec.validate.semantic import temporal

SPEC = """\
agentspec: 1
name: demo
agents:
  assistant:
    instruction: Help the user.
jobs:
  store: "{url}"
"""


def _codes(url: str) -> list[str]:
    return [d.code for d in check_text(SPEC.format(url=url)).diagnostics]


def test_a_full_url_is_read() -> None:
    target = parse_temporal_url("temporal://[::1]:7233/prod.jobs?task_queue=deals&timeout=3"
                                "&heartbeat=20")
    assert (target.host, target.port, target.namespace, target.task_queue) == (
        "::1", 7233, "prod.jobs", "deals")
    assert (target.timeout, target.heartbeat, target.address) == (3, 20, "::1:7233")


@pytest.mark.parametrize(("url", "code"), [
    ("temporal://localhost:7233/default?task_queue=jobs", []),
    ("temporal://localhost/default?task_queue=jobs", ["AS312"]),
    ("temporal://localhost:0/default?task_queue=jobs", ["AS312"]),
    ("temporal://localhost:99999/default?task_queue=jobs", ["AS312"]),
    ("temporal://:7233/default?task_queue=jobs", ["AS312"]),
    ("temporal://localhost:7233/?task_queue=jobs", ["AS312"]),
    ("temporal://localhost:7233/a/b?task_queue=jobs", ["AS312"]),
    ("temporal://user:pw@localhost:7233/default?task_queue=jobs", ["AS273", "AS312"]),
    ("temporal://localhost:7233/default#x?task_queue=jobs", ["AS312"]),
    ("temporal://localhost:7233/default", ["AS313"]),
    ("temporal://localhost:7233/default?task_queue=", ["AS313"]),
    ("temporal://localhost:7233/default?task_queue=a b", ["AS313"]),
    ("temporal://localhost:7233/default?task_queue=q&timeout=0", ["AS313"]),
    ("temporal://localhost:7233/default?task_queue=q&heartbeat=nan", ["AS313"]),
    ("temporal://localhost:7233/default?task_queue=q&tls=1", ["AS313"]),
])
def test_validate_names_what_is_wrong_with_the_url(url: str, code: list[str]) -> None:
    assert _codes(url) == code


def test_errors_say_what_to_write() -> None:
    with pytest.raises(TemporalUrlError) as error:
        parse_temporal_url("temporal://localhost:7233/default")
    assert "no task queue" in str(error.value) and "task_queue=" in error.value.hint


def test_without_the_extra_validate_warns_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(temporal, "_installed", lambda: False)
    [found] = check_text(SPEC.format(
        url="temporal://localhost:7233/default?task_queue=jobs")).diagnostics
    assert found.code == "AS314" and "agentspec-adk[temporal]" in (found.hint or "")


def test_without_the_extra_the_store_names_it() -> None:
    """A plain install (temporalio hidden): opening a temporal:// store is a StoreError
    naming the extra, not an ImportError."""
    program = textwrap.dedent("""\
        import sys

        class Blocked:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "temporalio":
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Blocked())
        from agentspec.runtime.jobs import StoreError
        from agentspec.runtime.jobs.stores import open_store
        try:
            open_store("temporal://localhost:7233/default?task_queue=q")
        except StoreError as error:
            print(error)
        """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "needs the `temporal` extra: pip install 'agentspec-adk[temporal]'" in done.stdout
