"""Reporters: one module per output format. Each formats a scan, whole or as it goes
(`assertree.report.stream`)."""

from __future__ import annotations

from assertree.report.options import ReportOptions
from assertree.results import ScanResult

FORMATS = ("text", "json", "sarif", "junit", "github")
__all__ = ["FORMATS", "ReportOptions", "render"]


def render(format_name: str, result: ScanResult, options: ReportOptions | None = None) -> str:
    """The whole report of `result` in `format_name` (text, json, sarif, junit, github)."""
    if format_name not in FORMATS:
        raise ValueError(f"unknown output format {format_name!r} (choose from: {', '.join(FORMATS)})")
    from assertree.report.stream import render_whole

    return render_whole(format_name, result, options)
