"""Every place in a JSON document, for the tests that break documents at random places."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def places(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """The path of `value` and of everything inside it, parents first (keys and list indexes)."""
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from places(child, (*path, index))
