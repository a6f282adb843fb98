"""Orders: placing an order reserves stock and records the total.

An order is a numbered record of what was bought and what it cost. Numbers
come from a module-level counter, so they grow one by one in the order the
calls to place_order happen in this process.
"""

from .inventory import Inventory, OutOfStock

_COUNTER = [0]
PRICES = {"apple": 3, "pear": 4}


def price_total(cart):
    """Sum of price times quantity over the cart; an unknown SKU costs nothing here."""
    return sum(PRICES.get(sku, 0) * qty for sku, qty in cart)


def place_order(cart, inventory=None):
    """Reserve every line of ``cart`` in ``inventory`` and return the order.

    Each line is reserved with Inventory.reserve in cart order; if one raises
    OutOfStock the lines reserved before it stay reserved (there is no
    rollback), which callers must know about. The order is a dict with the
    number, the cart and the total from price_total().
    """
    inventory = inventory or Inventory({"apple": 10, "pear": 10})
    for sku, qty in cart:
        inventory.reserve(sku, qty)
    _COUNTER[0] += 1
    return {"number": _COUNTER[0], "cart": list(cart), "total": price_total(cart)}


__all__ = ["OutOfStock", "place_order", "price_total"]
