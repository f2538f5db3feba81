"""Rows of the admission tier that do not agree yet, each with its reason."""

XFAIL: dict[str, str] = {}
