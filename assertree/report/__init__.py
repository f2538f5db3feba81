"""Reporters: one module per output format. Each only formats a `ScanResult`."""

from __future__ import annotations

import importlib

from assertree.report.options import ReportOptions
from assertree.results import ScanResult

FORMATS = ("text", "json", "sarif", "junit", "github")
__all__ = ["FORMATS", "ReportOptions", "render"]


def render(format_name: str, result: ScanResult, options: ReportOptions | None = None) -> str:
    """The whole report of `result` in `format_name` (text, json, sarif, junit, github)."""
    if format_name not in FORMATS:
        raise ValueError(f"unknown output format {format_name!r} (choose from: {', '.join(FORMATS)})")
    return importlib.import_module(f"assertree.report.{format_name}").render(result, options)
