"""Help-center search, known technical issues, and support tickets."""

from __future__ import annotations

from typing import Any, Literal

from .store import append_record, load_records, rank

__all__ = ["open_ticket", "search_help_center", "search_known_issues"]


def search_help_center(query: str) -> dict[str, Any]:
    """Search the help-center articles (accounts, plans, security, data export, policies).

    Args:
        query: The customer's question in a few words, for example "change account owner".

    Returns:
        Up to three matching articles with id, title, body and URL, best match first. An empty
        list means the help center has nothing on the topic.
    """
    articles = rank(query, load_records("help_center"), {"title": 3, "tags": 3, "body": 1})
    return {"status": "success", "articles": articles}


def search_known_issues(query: str) -> dict[str, Any]:
    """Search the known technical issues: outages, bugs and their workarounds.

    Args:
        query: Symptoms in a few words, for example "sync stuck desktop app" or an error code
            such as "E1042".

    Returns:
        Up to three matching issues with id, title, affected product and versions, status
        (investigating, workaround, fixed), the workaround and the fixed version if any.
    """
    issues = rank(query, load_records("known_issues"),
                  {"title": 3, "error_codes": 5, "symptoms": 2, "product": 1})
    return {"status": "success", "issues": issues}


def open_ticket(customer_email: str, subject: str, details: str,
                priority: Literal["low", "normal", "high", "urgent"] = "normal",
                team: Literal["billing", "tech", "general"] = "general") -> dict[str, Any]:
    """Open a support ticket for a person to follow up when you cannot resolve the request.

    Include everything a colleague needs without re-asking the customer: what they tried,
    error messages, invoice or order ids, and what they want.

    Args:
        customer_email: The customer's account email address.
        subject: One line describing the problem.
        details: The full description.
        priority: "urgent" only for outages or security issues affecting the customer now.
        team: The team that should handle the ticket.

    Returns:
        The ticket with its id (for example "TK-1A2B3C4D"), to give to the customer.
    """
    if "@" not in customer_email:
        return {"status": "error", "error": "Ask the customer for their account email address."}
    entry = append_record("tickets", "TK", {
        "customer_email": customer_email.strip().lower(), "subject": subject.strip(),
        "details": details.strip(), "priority": priority, "team": team, "status": "open"})
    return {"status": "success", "ticket": entry}
