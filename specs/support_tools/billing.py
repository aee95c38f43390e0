"""Billing tools: invoices and refund requests."""

from __future__ import annotations

from typing import Any

from .store import append_record, load_records

__all__ = ["list_invoices", "lookup_invoice", "request_refund"]


def lookup_invoice(invoice_id: str) -> dict[str, Any]:
    """Look up one invoice by its id (for example "INV-2025-0142").

    Returns the invoice with customer email, plan, amount, currency, status (paid, open,
    overdue or refunded), issue and due dates and its line items, or an error when no invoice
    has that id.
    """
    wanted = invoice_id.strip().upper()
    for invoice in load_records("invoices"):
        if invoice["invoice_id"].upper() == wanted:
            return {"status": "success", "invoice": invoice}
    return {"status": "error", "error": f"No invoice with id {invoice_id!r}. Ask the customer "
            "to check the id on the invoice email, or look it up by their email address."}


def list_invoices(customer_email: str) -> dict[str, Any]:
    """List all invoices of the customer with this account email address, newest first.

    Use this when the customer does not know an invoice id, or to see their payment history.
    """
    email = customer_email.strip().lower()
    invoices = [i for i in load_records("invoices") if i["customer_email"].lower() == email]
    if not invoices:
        return {"status": "error", "error": f"No invoices for {customer_email!r}. Check the "
                "spelling, or ask for the email address the account was created with."}
    invoices.sort(key=lambda i: i["issued"], reverse=True)
    return {"status": "success", "invoices": invoices}


def request_refund(invoice_id: str, amount: float, reason: str) -> dict[str, Any]:
    """File a refund request for a paid invoice; a billing specialist processes it.

    Only call this after confirming the invoice and the amount with the customer. The amount
    must be positive and at most the invoice total, and the invoice must be paid.

    Args:
        invoice_id: The invoice to refund, for example "INV-2025-0142".
        amount: The amount to refund, in the invoice's currency.
        reason: One or two sentences on why the customer should get the refund.

    Returns:
        The filed request with its id (for example "RF-1A2B3C4D") and status "pending", or an
        error explaining why the request cannot be filed.
    """
    found = lookup_invoice(invoice_id)
    if found["status"] != "success":
        return found
    invoice = found["invoice"]
    if invoice["status"] != "paid":
        return {"status": "error", "error": f"Invoice {invoice['invoice_id']} is "
                f"{invoice['status']}; only paid invoices can be refunded."}
    if not 0 < amount <= invoice["amount"]:
        return {"status": "error", "error": f"The refund must be between 0 and "
                f"{invoice['amount']} {invoice['currency']}."}
    if not reason.strip():
        return {"status": "error", "error": "Give the reason for the refund."}
    entry = append_record("refunds", "RF", {
        "invoice_id": invoice["invoice_id"], "customer_email": invoice["customer_email"],
        "amount": round(float(amount), 2), "currency": invoice["currency"],
        "reason": reason.strip(), "status": "pending"})
    return {"status": "success", "refund_request": entry,
            "note": "Refunds are reviewed within 2 business days and paid to the original "
                    "payment method."}
