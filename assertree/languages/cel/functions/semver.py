"""Kubernetes' semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go) over assertree's semver parser.

``semver(s)``, ``isSemver(s)``, ``isSemver(s, normalize)`` and ``major``,
``minor``, ``patch``, ``isGreaterThan``, ``isLessThan``, ``compareTo``.
Parsing is blang/semver's strict grammar (`assertree.jp.functions.semver`);
with `normalize`, a leading ``v`` is dropped and a missing minor or patch
becomes 0, as Kubernetes does before parsing.
"""

from __future__ import annotations

import re

from assertree.jp.functions.semver import Version, compare, parse_version
from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text, succeeds

TAG = "semver"


def _parse(text: str) -> Version:
    try:
        return parse_version(text)
    except ValueError as error:
        raise FunctionError(str(error)) from None


def _normalized(text: str) -> str:
    text = text.removeprefix("v")
    split = re.match(r"([0-9.]*)(.*)", text, re.DOTALL)
    assert split is not None  # both groups may be empty, so the pattern matches every text
    core, extra = split.groups()
    parts = core.split(".") if core else []
    if 0 < len(parts) < 3:
        core = ".".join(parts + ["0"] * (3 - len(parts)))
    return core + extra


def _is_semver(text: str, normalize: bool = False) -> bool:
    return succeeds(_semver, text, normalize)


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    text = _normalized(text) if normalize else text
    _parse(text)
    return opaque(TAG, text)


def _of(value: dict) -> Version:
    return _parse(opaque_text(value, TAG))


def _compare(a: dict, b: dict) -> int:
    return compare(_of(a), _of(b))


DECLARATIONS = (
    Declaration("semver", ("string",), "map", _semver),
    Declaration("semver", ("string", "bool"), "map", _semver),
    Declaration("isSemver", ("string",), "bool", _is_semver),
    Declaration("isSemver", ("string", "bool"), "bool", _is_semver),
    Declaration("major", ("map",), "int", lambda v: _of(v).major, member=True, receiver=TAG),
    Declaration("minor", ("map",), "int", lambda v: _of(v).minor, member=True, receiver=TAG),
    Declaration("patch", ("map",), "int", lambda v: _of(v).patch, member=True, receiver=TAG),
    Declaration("isGreaterThan", ("map", "map"), "bool", lambda a, b: _compare(a, b) > 0, member=True, receiver=TAG),
    Declaration("isLessThan", ("map", "map"), "bool", lambda a, b: _compare(a, b) < 0, member=True, receiver=TAG),
    Declaration("compareTo", ("map", "map"), "int", _compare, member=True, receiver=TAG),
)
