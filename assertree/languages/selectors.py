"""Kubernetes label selectors, for ``--labels``: which policies to run.

The syntax is kubectl's: comma-separated requirements that must all hold,
each ``key=value``, ``key==value``, ``key!=value``, ``key in (a,b)``,
``key notin (a,b)``, ``key`` (exists) or ``!key`` (does not exist). As in
Kubernetes, ``!=`` and ``notin`` also hold when the label is absent. Small
enough to write here; the only libraries implementing it are Kubernetes
clients, far too heavy for this.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from assertree.errors import UsageError

_NAME = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_REQUIREMENT = re.compile(
    rf"\s*(?:(?P<not>!)\s*(?P<absent>{_NAME})"
    rf"|(?P<key>{_NAME})\s*(?:(?P<op>==|=|!=)\s*(?P<value>{_VALUE})"
    rf"|\s+(?P<set>in|notin)\s*\((?P<values>[^()]*)\))?)\s*(?:,|$)"
)

Selector = Callable[[Mapping[str, str]], bool]


def parse_selector(text: str) -> Selector:
    """A predicate over a label map; UsageError (naming the bad part) if `text` is not a selector."""
    requirements: list[Selector] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _REQUIREMENT.match(text, position)
        if match is None or match.end() == position:
            raise UsageError(f"invalid label selector {text!r} at {text[position:]!r}")
        requirements.append(_requirement(match, text))
        position = match.end()
    if text.endswith(","):
        raise UsageError(f"invalid label selector {text!r}: it ends with ','")
    return lambda labels: all(requirement(labels) for requirement in requirements)


def _requirement(match: re.Match, text: str) -> Selector:
    if match.group("not"):
        key = match.group("absent")
        return lambda labels: key not in labels
    key = match.group("key")
    operator = match.group("op")
    if operator in ("=", "=="):
        value = match.group("value")
        return lambda labels: labels.get(key) == value
    if operator == "!=":
        value = match.group("value")
        return lambda labels: labels.get(key) != value
    if match.group("set"):
        values = {v.strip() for v in match.group("values").split(",")}
        if not all(re.fullmatch(_VALUE, v) for v in values):
            raise UsageError(f"invalid label selector {text!r}: bad value in {match.group(0).strip()!r}")
        if match.group("set") == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: labels.get(key) not in values
    return lambda labels: key in labels


def selector_from(texts: list[str]) -> Selector | None:
    """One selector from repeated ``--labels`` options (joined like kyverno-json), or None."""
    if not texts:
        return None
    return parse_selector(",".join(texts))
