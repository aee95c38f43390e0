#!/usr/bin/env python
"""What the summarization check costs a model call when it does not fire.

    .venv/bin/python bench/summarization.py [--calls N] [--events 10,100,1000]

With a `tokens` or `fraction` trigger, agentspec's check (`SummaryCheck`, in the place of
ADK's compaction request processor) runs before every model call of every LLM agent: the
prompt token count the model reported for the agent's latest call plus a quarter of the
characters of the events since, or, with no count, a quarter of the characters of the newest
events until the threshold is reached. This script runs it as ADK's flow does, on sessions
of growing length whose size stays under the threshold, and prints the time per call (min
and median of repeated batches), next to ADK's own processor on the same sessions. The aim
is under 100 µs per call. It asserts nothing.

`reported` rows: the agent's latest event carries usage metadata (the usual case).
`estimated` rows: no event does, so the characters of every event are counted (the
threshold here is never reached: the worst case). Each event's size is measured once and
remembered by its id, so only the first call pays for the measuring.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THRESHOLD = 10_000_000  # never reached: the check never fires, so every event is counted
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _session(events: int, reported: bool):  # type: ignore[no-untyped-def]
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session
    from google.genai import types

    session = Session(id="s", app_name="bench", user_id="u")
    for index in range(events):
        user = index % 2 == 0
        text = ("Tell me more about the harbour, the ferries and the weather there. " * 3
                if user else "The ferries leave every hour; the weather is mild. " * 3)
        usage = None if user or not reported else types.GenerateContentResponseUsageMetadata(
            prompt_token_count=100 + index, candidates_token_count=20)
        session.events.append(Event(
            invocation_id=f"i{index // 2}", author="user" if user else "assistant",
            timestamp=float(index), usage_metadata=usage,
            content=types.Content(role="user" if user else "model",
                                  parts=[types.Part(text=text)])))
    return session


async def _measure(events: int, reported: bool, calls: int, batches: int,
                   adk: bool) -> list[float]:
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.flows.llm_flows.context._compaction import CompactionRequestProcessor
    from google.adk.models.llm_request import LlmRequest
    from google.adk.sessions import InMemorySessionService

    from agentspec.runtime.app import compaction
    from agentspec.runtime.summarization import SummaryCheck

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = compaction(token_threshold=THRESHOLD, event_retention_size=6)
    agent = LlmAgent(name="assistant", model="gemini-2.5-flash", instruction="Help.")
    context = InvocationContext(session_service=InMemorySessionService(), invocation_id="i",
                                agent=agent, session=_session(events, reported),
                                events_compaction_config=config)
    processor = CompactionRequestProcessor() if adk else SummaryCheck()
    if adk:  # ADK's own processor measures any settings that are not agentspec's
        from google.adk.apps.app import EventsCompactionConfig

        context.events_compaction_config = EventsCompactionConfig(
            token_threshold=THRESHOLD, event_retention_size=6)
    request = LlmRequest()
    per_call = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            async for _event in processor.run_async(context, request):
                raise AssertionError("the check fired")
        per_call.append((time.perf_counter() - start) / calls)
    return per_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--calls", type=int, default=200, help="calls per batch")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--events", default="10,50,100,500,1000,5000")
    args = parser.parse_args()
    print(f"{'check':>10} {'session events':>15} {'count':>10} {'min µs/call':>12} "
          f"{'median µs/call':>15}")
    for adk in (False, True):
        for reported in (True, False):
            for events in (int(n) for n in args.events.split(",")):
                calls = args.calls if reported and not adk else max(1, args.calls // 20)
                times = asyncio.run(_measure(events, reported, calls, args.batches, adk))
                print(f"{'ADK' if adk else 'agentspec':>10} {events:>15} "
                      f"{'reported' if reported else 'estimated':>10} "
                      f"{min(times) * 1e6:>12.1f} {statistics.median(times) * 1e6:>15.1f}")


if __name__ == "__main__":
    main()
