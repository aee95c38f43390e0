"""`agentspec.testing.turns`, what `agentspec test` and `agentspec eval` both play a run
with: a run's own stores, put back after it; a call left waiting is an error naming it; a
person's rejection is no failure; the usage of its model calls summed."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentspec.runtime.backends.store_table import STORE_OVERRIDE as FILES
from agentspec.runtime.harness.approvals import Decision
from agentspec.runtime.jobs.delegation import STORE_OVERRIDE as JOBS
from agentspec.testing.turns import Unanswered, isolated, play, spec_app
from tests.test_failures import APPROVAL


def _app(tmp_path: Path, replies: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
         ) -> Any:
    from agentspec.testing.scripted import install_script

    (tmp_path / "agent.yaml").write_text(textwrap.dedent(APPROVAL))
    (tmp_path / "approval_tools.py").write_text('def wipe() -> str:\n    """Wipes."""\n'
                                            '    return "wiped"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    app, stopped = spec_app(tmp_path / "agent.yaml", None, scripted=True)
    assert stopped == []
    install_script(app.root_agent, {"lead": replies})
    return app


def test_a_run_has_stores_of_its_own_and_the_environment_is_put_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.backends import store_table

    monkeypatch.setenv(JOBS, "sqlite:///project-jobs.db")
    monkeypatch.delenv(FILES, raising=False)
    monkeypatch.delenv("DESK_MODE", raising=False)
    with pytest.raises(RuntimeError), isolated({"DESK_MODE": "test"}, "probe"):
        assert os.environ["DESK_MODE"] == "test"
        assert os.environ[JOBS].startswith("memory://probe-")
        files = os.environ[FILES]
        assert files.startswith("sqlite:///") and files.endswith("/files.db")
        store_table.open_files("sqlite:///ignored.db")  # the run's own, opened
        assert files in store_table._STORES
        raise RuntimeError("the run failed")
    assert os.environ[JOBS] == "sqlite:///project-jobs.db"
    assert FILES not in os.environ and "DESK_MODE" not in os.environ
    assert files not in store_table._STORES  # closed with the run
    assert not Path(files.removeprefix("sqlite:///")).parent.exists()


def test_a_call_left_waiting_is_an_error_naming_it(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(tmp_path, [{"call": "wipe"}, {"text": "Wiped."}], monkeypatch)
    with pytest.raises(Unanswered, match=r"`wipe` of `lead` is still waiting for a "
                                         r"person's approval"):
        play(app, ["Wipe it"], state={}, decide=lambda pending: None)


def test_a_rejection_is_no_failure_and_usage_is_summed(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from agentspec.runtime.usage import Ledger

    app = _app(tmp_path, [{"call": "wipe"}, {"text": "Not wiped."}], monkeypatch)
    usage = Ledger()
    played = play(app, ["Wipe it"], state={"tier": "gold"},
                  decide=lambda pending: Decision("reject", message="no"), usage=usage)
    outcome = played.outcome
    assert (outcome.final, outcome.failures) == ("Not wiped.", [])
    assert outcome.calls == [("wipe", {})] and outcome.state["tier"] == "gold"
    assert any(e.author == "lead" for e in played.events)
    assert usage.total.calls == 2
