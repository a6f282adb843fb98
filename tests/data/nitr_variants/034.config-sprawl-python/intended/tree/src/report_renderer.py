from __future__ import annotations

from src.report_types import Item, ReportOptions


def _render_header(items: list[Item], options: ReportOptions) -> str:
    if options.compact_mode:
        return "Inventory Report (compact)\n"
    return f"Inventory Report\nItems: {len(items)}\n"


def _render_row(item: Item, options: ReportOptions) -> str:
    if options.compact_mode:
        return f"{item.id}:{item.name}:{item.quantity}\n"
    return f"- id={item.id}, name={item.name}, qty={item.quantity}\n"


def _total_quantity(items: list[Item]) -> int:
    return sum(item.quantity for item in items)


def _render_footer(items: list[Item], options: ReportOptions) -> str:
    if not options.include_summary:
        return ""
    if options.compact_mode:
        return f"Total quantity: {_total_quantity(items)}\n"
    return f"Summary\nTotal quantity: {_total_quantity(items)}\n"


def render_inventory_report(items: list[Item], options: ReportOptions) -> str:
    output = _render_header(items, options)
    output += "".join(_render_row(item, options) for item in items)
    output += _render_footer(items, options)
    return output
