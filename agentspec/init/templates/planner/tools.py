"""Tools of the __NAME__ planner's workers."""

from __future__ import annotations

FACTS = {"lisbon": "Lisbon is the capital of Portugal.",
         "porto": "Porto is Portugal's second city."}


def lookup_fact(topic: str) -> dict[str, str]:
    """A known fact about a topic.

    Args:
        topic: One word, such as "Lisbon".
    """
    fact = FACTS.get(topic.strip().lower())
    return {"fact": fact} if fact else {"error": f"No fact about {topic!r}."}
