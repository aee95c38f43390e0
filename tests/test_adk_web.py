"""`adk web` in a real browser: Debian's Chromium, driven by Playwright, against `adk web`
serving a generated package whose model is the fake Gemini API (tests/fakegemini).

The app is listed, a message round-trips, an `interrupt_on` tool shows ADK's confirmation
card, and approving runs the tool while rejecting does not (read from the tool's side effect:
a file it writes). On failure a screenshot, the page's HTML and adk web's log are saved under
test-artifacts/adk_web/ (git-ignored), named in the failure message.

Without Chromium the test is skipped, except where AGENTSPEC_REQUIRE_BROWSER=1 (.ci/run sets
it): there a missing browser fails it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentspec.cli import cli
from tests.buildkit import ROOT
from tests.fakegemini import FakeGemini, serve
from tests.test_wire import adk_server

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("AGENTSPEC_CHROMIUM", "/usr/bin/chromium")
#: flags that run Chromium headless in a container, offline
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "test-artifacts" / "adk_web"
WAIT = 60_000  # ms: a generous deadline for the page to show what it must, not a measurement

SPEC = """\
    agentspec: 1
    name: ledger
    agents:
      clerk:
        model: gemini-2.5-flash
        description: Keeps the ledger.
        instruction: Keep the ledger; mark it when asked.
        tools: [mark]
        interrupt_on: {mark: true}
    tools:
      mark: {python: ledger_marks:mark}
    """
TOOLS = '''\
    import os
    from pathlib import Path


    def mark(label: str) -> dict:
        """Marks the ledger (its side effect: a file named after the label)."""
        (Path(os.environ["LEDGER_MARKS"]) / label).write_text(label)
        return {"marked": label}
    '''
REPLIES = {"clerk": [
    {"text": "The ledger is open."},
    {"call": "mark", "args": {"label": "approved"}},
    {"text": "Marked it approved."},
    {"call": "mark", "args": {"label": "rejected"}},
    {"text": "Left it unmarked."},
]}


def _browser() -> Any:
    """Playwright's sync API, or a skip (a failure under AGENTSPEC_REQUIRE_BROWSER)."""
    required = os.environ.get("AGENTSPEC_REQUIRE_BROWSER") == "1"
    missing = None
    if not Path(CHROMIUM).is_file():
        missing = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        from playwright import sync_api
    except ImportError:
        missing = missing or "the playwright package is not installed (the dev extra has it)"
    if missing:
        if required:
            pytest.fail(f"AGENTSPEC_REQUIRE_BROWSER=1 and {missing}")
        pytest.skip(missing)
    return sync_api


@contextlib.contextmanager
def artifacts_on_failure(page: Any, log: Path) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        shutil.rmtree(ARTIFACTS, ignore_errors=True)
        ARTIFACTS.mkdir(parents=True)
        with contextlib.suppress(Exception):
            page.screenshot(path=str(ARTIFACTS / "failure.png"), full_page=True)
            (ARTIFACTS / "page.html").write_text(page.content())
        shutil.copy(log, ARTIFACTS / "adk_web.log")
        pytest.fail(f"{type(exc).__name__}: {exc}\n(screenshot, page and adk web's log in "
                    f"{ARTIFACTS})")


def test_adk_web_lists_the_app_chats_and_asks_for_approval(tmp_path: Path) -> None:
    sync_api = _browser()
    project, out, marks, home = (tmp_path / name for name in ("project", "out", "marks",
                                                              "home"))
    for folder in (project, marks, home / ".adk"):
        folder.mkdir(parents=True)
    (home / ".adk" / "config.json").write_text(json.dumps({"telemetry": False}))  # no dialog
    (project / "ledger_marks.py").write_text(textwrap.dedent(TOOLS))
    (project / "spec.yaml").write_text(textwrap.dedent(SPEC))
    built = CliRunner().invoke(cli, ["build", str(project / "spec.yaml"), "-o", str(out)])
    assert built.exit_code == 0, built.output

    with serve(FakeGemini(replies={k: list(v) for k, v in REPLIES.items()})) as fake:
        env = {"GOOGLE_GEMINI_BASE_URL": fake.url, "GOOGLE_API_KEY": "fake-key",
               "ADK_DISABLE_LOAD_DOTENV": "1", "HOME": str(home), "LEDGER_MARKS": str(marks)}
        log = tmp_path / "adk_web.log"
        with adk_server("web", out, env, log) as url, sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            expect = sync_api.expect
            with artifacts_on_failure(page, log):
                # the app is listed: the dev UI, opened without one, picks it from the list
                page.goto(f"{url}/dev-ui/")
                expect(page).to_have_url(re.compile(r"[?&]app=ledger\b"), timeout=WAIT)
                picker = page.locator("button[mattooltip='Select an app'] .selector-label")
                expect(picker).to_have_text("ledger", timeout=WAIT)

                def say(text: str) -> None:
                    box = page.locator("textarea.chat-input-box")
                    expect(box).to_be_editable(timeout=WAIT)
                    box.fill(text)
                    box.press("Enter")

                def bot_says(text: str) -> None:
                    bubble = page.locator(".content-bubble.role-bot", has_text=text)
                    expect(bubble.first).to_be_visible(timeout=WAIT)

                def decide(label: str, *, approve: bool) -> None:
                    card = page.locator("app-long-running-response").filter(
                        has_text=f'mark(label="{label}")')
                    expect(card).to_be_visible(timeout=WAIT)
                    if approve:
                        card.get_by_label("Confirmed").check()
                    card.get_by_role("button", name="Submit").click()

                say("Open the ledger")
                bot_says("The ledger is open.")

                say("Mark it approved")
                decide("approved", approve=True)
                bot_says("Marked it approved.")
                assert (marks / "approved").read_text() == "approved"  # the tool ran

                say("Mark it rejected")
                decide("rejected", approve=False)
                bot_says("Left it unmarked.")
                assert not (marks / "rejected").exists()  # the tool did not run

                assert fake.violations == [] and fake.script_problems == []
                assert fake.replies == {"clerk": []}
            browser.close()
