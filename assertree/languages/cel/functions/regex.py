"""Kubernetes' regex library (k8s.io/apiserver/pkg/cel/library/regex.go): ``find`` and ``findAll``.

RE2 syntax, matched with google-re2 as Kyverno's JMESPath ``regex_*``
functions are (`assertree.jp.functions.regex.compile_go`, shared cache).
"""

from __future__ import annotations

from assertree.jp.functions.regex import RegexError, compile_go
from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration


def _compiled(pattern: str):
    try:
        return compile_go(pattern).regex
    except RegexError as error:
        raise FunctionError(str(error)) from None


def _find(text: str, pattern: str) -> str:
    match = _compiled(pattern).search(text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found = [match.group(0) for match in _compiled(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


DECLARATIONS = (
    Declaration("find", ("string", "string"), "string", _find, member=True),
    Declaration("findAll", ("string", "string"), "list", _find_all, member=True),
    Declaration("findAll", ("string", "string", "int"), "list", _find_all, member=True),
)
