"""Kubernetes' format library (k8s.io/apiserver/pkg/cel/library/format.go): named string validations.

``format.dns1123Label()`` (and the other names of `FORMATS`) is a format;
``format.named(name)`` is the format of that name, or ``optional.none()``;
``<format>.validate(s)`` is ``optional.none()`` when `s` is valid, else the
list of what is wrong with it, in Kubernetes' words (apimachinery's
``validation`` package: ``IsDNS1123Label`` ...; kube-openapi's ``strfmt`` for
``uuid``, ``byte``, ``date`` and ``datetime``; Go's ``url.ParseRequestURI``
for ``uri``).

The CEL library cannot take an optional value from a Python function, so the
two functions that return one give a map instead, ``{"errors": [...]}`` /
``{}`` and ``{"format": <format>}`` / ``{}``, and `assertree.languages.cel.rewrite`
appends ``[?'errors']`` / ``[?'format']`` to their calls: indexing a map that
way is the optional Kubernetes returns. A format is a tagged map (`declare`)
holding its name.

Written here because no Python library implements Kubernetes' own validators
with Kubernetes' messages, and the messages are what a ``messageExpression``
shows.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from collections.abc import Callable

from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text

__all__ = ["DECLARATIONS", "FORMATS", "OPTIONAL_RESULTS", "validate"]

TAG = "format"

# The functions that return an optional in Kubernetes, and the key their map result keeps the value under.
OPTIONAL_RESULTS = {"validate": "errors", "format.named": "format"}

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = f"{_DNS1123_LABEL}(\\.{_DNS1123_LABEL})*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = f"({_QUALIFIED_NAME})?"
_QUALIFIED_NAME_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                           "alphanumeric character")
_QUALIFIED_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")
_UUID = re.compile(r"(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)|(^[0-9a-f]{32}$)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's RegexError: the message, examples and the pattern used."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _max_length(limit: int) -> str:
    return f"must be no more than {limit} characters"


def _dns1123_label(text: str) -> list[str]:
    errors = [_max_length(63)] if len(text) > 63 else []
    if not re.fullmatch(_DNS1123_LABEL, text):
        errors.append(_regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                                   "'-', and must start and end with an alphanumeric character", _DNS1123_LABEL,
                                   "my-name", "123-abc"))
    return errors


def _dns1123_subdomain(text: str) -> list[str]:
    errors = [_max_length(253)] if len(text) > 253 else []
    if not re.fullmatch(_DNS1123_SUBDOMAIN, text):
        errors.append(_regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                   "'-' or '.', and must start and end with an alphanumeric character",
                                   _DNS1123_SUBDOMAIN, "example.com"))
    return errors


def _dns1035_label(text: str) -> list[str]:
    errors = [_max_length(63)] if len(text) > 63 else []
    if not re.fullmatch(_DNS1035_LABEL, text):
        errors.append(_regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                                   "with an alphabetic character, and end with an alphanumeric character",
                                   _DNS1035_LABEL, "my-name", "abc-123"))
    return errors


def _qualified_name(text: str) -> list[str]:
    parts = text.split("/")
    errors: list[str] = []
    if len(parts) > 2:
        shape = _regex_error(_QUALIFIED_NAME_MESSAGE, _QUALIFIED_NAME, *_QUALIFIED_NAME_EXAMPLES)
        return [f"a qualified name {shape} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {error}" for error in _dns1123_subdomain(parts[0]))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append(f"name part {_max_length(63)}")
    if not re.fullmatch(_QUALIFIED_NAME, name):
        errors.append(f"name part {_regex_error(_QUALIFIED_NAME_MESSAGE, _QUALIFIED_NAME, *_QUALIFIED_NAME_EXAMPLES)}")
    return errors


def _label_value(text: str) -> list[str]:
    errors = [_max_length(63)] if len(text) > 63 else []
    if not re.fullmatch(_LABEL_VALUE, text):
        errors.append(_regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                                   "'_' or '.', and must start and end with an alphanumeric character", _LABEL_VALUE,
                                   "MyValue", "my_value", "12345"))
    return errors


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A name prefix (``generateName``): a trailing dash is allowed (apimachinery's maskTrailingDash)."""
    def validate_prefix(text: str) -> list[str]:
        return check(text[:-2] + "a" if len(text) > 1 and text.endswith("-") else text)

    return validate_prefix


def _uri(text: str) -> list[str]:
    from assertree.languages.cel.functions.urls import parse_request_uri

    try:
        parse_request_uri(text)
    except ValueError:
        return [f'parse "{text}": invalid URI for request']
    return []


def _uuid(text: str) -> list[str]:
    return [] if _UUID.search(text) else ["does not match the UUID format"]


def _byte(text: str) -> list[str]:
    try:  # Go's StdEncoding: padding required, line breaks ignored
        base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _is_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        datetime.date(int(text[:4]), int(text[5:7]), int(text[8:]))
    except ValueError:
        return False
    return True


def _date(text: str) -> list[str]:
    return [] if _is_date(text) else ["invalid date"]


def _datetime(text: str) -> list[str]:
    """kube-openapi strfmt's IsDateTime: a date, ``t``, then a time with a zone, checked field by field."""
    parts = text.lower().split("t")
    valid = len(text) >= 4 and len(parts) >= 2 and _is_date(parts[0])
    found = _TIME.search(parts[1]) if valid else None
    if found is None or not (found.group(1) <= "23" and found.group(2) <= "59" and found.group(3) <= "59"):
        return ["invalid datetime"]
    return []


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": _prefix(_dns1123_label),
    "dns1123SubdomainPrefix": _prefix(_dns1123_subdomain),
    "dns1035LabelPrefix": _prefix(_dns1035_label),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": _uuid,
    "byte": _byte,
    "date": _date,
    "datetime": _datetime,
}
"""Every named format, by the name ``format.named`` takes (and ``format.<name>()`` gives)."""


def validate(name: str, text: str) -> list[str]:
    """What is wrong with `text` as the format `name` (nothing: valid)."""
    return FORMATS[name](text)


def _named(name: str) -> dict:
    return {"format": opaque(TAG, name)} if name in FORMATS else {}


def _validate(value: dict, text: str) -> dict:
    errors = validate(opaque_text(value, TAG), text)
    return {"errors": errors} if errors else {}


DECLARATIONS = (
    *(Declaration(f"format.{name}", (), "map", lambda name=name: opaque(TAG, name)) for name in FORMATS),
    Declaration("format.named", ("string",), "map", _named),
    Declaration("validate", ("map", "string"), "map", _validate, member=True, receiver=TAG),
)
