"""Kubernetes label selectors: the kubectl text syntax (``--labels``) and the API's ``LabelSelector`` objects.

The text syntax is kubectl's: comma-separated requirements that must all hold,
each ``key=value``, ``key==value``, ``key!=value``, ``key in (a,b)``,
``key notin (a,b)``, ``key`` (exists) or ``!key`` (does not exist). As in
Kubernetes, ``!=`` and ``notin`` also hold when the label is absent.

`selects` evaluates a ``LabelSelector`` (``matchLabels``, ``matchExpressions``)
as apimachinery's ``LabelSelectorAsSelector`` builds it: every requirement must
hold, and a selector Kubernetes refuses to build (a bad operator, key or value)
raises `SelectorError`. Small enough to write here; the only libraries
implementing either are Kubernetes clients, far too heavy for this.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from assertree.errors import UsageError

__all__ = ["Selector", "SelectorError", "parse_selector", "selector_from", "selects"]

_NAME = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"


@functools.cache
def _requirement_pattern() -> re.Pattern[str]:
    """One requirement of a selector, compiled on first use (a few ms: most runs give no --labels)."""
    return re.compile(
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
        match = _requirement_pattern().match(text, position)
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


class SelectorError(ValueError):
    """A label selector Kubernetes refuses to build (bad operator, key or value)."""


_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _check_key(key: str) -> None:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        raise SelectorError(f"invalid label key {key!r}: prefix must be a DNS-1123 subdomain")
    if not name or len(name) > 63 or not _LABEL_NAME.fullmatch(name):
        raise SelectorError(f"invalid label key {key!r}: name part must be a qualified name")


def _check_value(value: Any) -> str:
    if not isinstance(value, str):
        raise SelectorError(f"invalid label value {value!r}: must be a string")
    if value and (len(value) > 63 or not _LABEL_NAME.fullmatch(value)):
        raise SelectorError(f"invalid label value {value!r}: must be 63 characters or less, alphanumeric, "
                            "'-', '_' or '.', starting and ending with an alphanumeric character")
    return value


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether the ``LabelSelector`` `selector` selects `labels`; None selects nothing, ``{}`` everything.

    Raises `SelectorError` for a selector Kubernetes would not build.
    """
    if selector is None:
        return False
    labels = {str(k): str(v) for k, v in (labels or {}).items()}
    requirements: list[tuple[str, str, frozenset[str]]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        _check_key(str(key))
        requirements.append((str(key), "In", frozenset([_check_value(value)])))
    for expression in selector.get("matchExpressions") or []:
        key = str(expression.get("key") or "")
        operator = expression.get("operator")
        values = expression.get("values") or []
        _check_key(key)
        if operator in ("In", "NotIn"):
            if not values:
                raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty (key {key!r})")
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                raise SelectorError(f"values set must be empty for exists and does not exist (key {key!r})")
        else:
            raise SelectorError(f'"{operator}" is not a valid label selector operator')
        requirements.append((key, str(operator), frozenset(_check_value(value) for value in values)))
    for key, operator, values in requirements:
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True
