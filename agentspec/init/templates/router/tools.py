"""Tools of the __NAME__ help desk."""

from __future__ import annotations

ORDERS = {"A-100": "shipped", "A-101": "being packed"}


def order_status(order_id: str) -> dict[str, str]:
    """The status of an order.

    Args:
        order_id: The order id, such as "A-100".
    """
    status = ORDERS.get(order_id.strip().upper())
    if status is None:
        return {"status": "error", "error": f"There is no order {order_id!r}."}
    return {"status": "success", "order_id": order_id, "order_status": status}
