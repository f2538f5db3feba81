"""Reporters: one module per output format. Each only formats a `ScanResult`."""

from __future__ import annotations

import importlib

FORMATS = ("text", "json", "sarif", "junit", "github")


def render(format_name: str, result, **options) -> str:
    """The whole report of `result` in `format_name` (options a format does not use are ignored)."""
    if format_name not in FORMATS:
        raise ValueError(f"unknown output format {format_name!r}")
    return importlib.import_module(f"assertree.report.{format_name}").render(result, **options)
