"""Reporters: one module per output format. Each only formats a `ScanResult`."""

from __future__ import annotations

FORMATS = ("text", "json")


def render(format_name: str, result, **options) -> str:
    """The whole report of `result` in `format_name`."""
    if format_name == "text":
        from assertree.report.text import render as render_text

        return render_text(result, **options)
    if format_name == "json":
        from assertree.report.json import render as render_json

        return render_json(result, **options)
    raise ValueError(f"unknown output format {format_name!r}")
