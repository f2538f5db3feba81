"""Kubernetes' quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go) over assertree's Quantity.

``quantity('1Gi')``, ``isQuantity(s)`` and the methods ``isInteger``,
``asInteger``, ``asApproximateFloat``, ``sign``, ``add``, ``sub``,
``isGreaterThan``, ``isLessThan``, ``compareTo``. Arithmetic and parsing are
`assertree.jp.functions.quantity` (apimachinery's rules, shared with Kyverno's
JMESPath functions); a quantity travels as ``{'@quantity': canonical text}``.
"""

from __future__ import annotations

from assertree.jp.functions.conversions import INT64_MAX, INT64_MIN
from assertree.jp.functions.quantity import Format, Quantity
from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text, succeeds

TAG = "quantity"


def _parse(text: str) -> Quantity:
    try:
        return Quantity.parse(text)
    except ValueError as error:
        raise FunctionError(str(error)) from None


def _of(value: dict) -> Quantity:
    return _parse(opaque_text(value, TAG))


def _wrap(quantity: Quantity) -> dict[str, str]:
    return opaque(TAG, str(quantity))


def _compare(a: dict, b: dict) -> int:
    difference = _of(a).minus(_of(b)).unscaled
    return (difference > 0) - (difference < 0)


def _as_integer(value: dict) -> int:
    whole = _of(value)._integer_value()
    if whole is None or not INT64_MIN <= whole <= INT64_MAX:
        raise FunctionError("cannot convert value to integer")
    return whole


def _is_integer(value: dict) -> bool:
    whole = _of(value)._integer_value()
    return whole is not None and INT64_MIN <= whole <= INT64_MAX


def _int_quantity(number: int) -> Quantity:
    return Quantity.from_int(number, Format.DECIMAL_EXPONENT)  # as quantity.go adds an int


def _sign(value: dict) -> int:
    unscaled = _of(value).unscaled
    return (unscaled > 0) - (unscaled < 0)


DECLARATIONS = (
    Declaration("quantity", ("string",), "map", lambda text: _wrap(_parse(text))),
    Declaration("isQuantity", ("string",), "bool", lambda text: succeeds(Quantity.parse, text)),
    Declaration("isInteger", ("map",), "bool", _is_integer, member=True, receiver=TAG),
    Declaration("asInteger", ("map",), "int", _as_integer, member=True, receiver=TAG),
    Declaration("asApproximateFloat", ("map",), "double", lambda q: _of(q).approximate_float(), member=True,
                receiver=TAG),
    Declaration("sign", ("map",), "int", _sign, member=True, receiver=TAG),
    Declaration("add", ("map", "map"), "map", lambda a, b: _wrap(_of(a).plus(_of(b))), member=True, receiver=TAG),
    Declaration("add", ("map", "int"), "map", lambda a, n: _wrap(_of(a).plus(_int_quantity(n))), member=True,
                receiver=TAG),
    Declaration("sub", ("map", "map"), "map", lambda a, b: _wrap(_of(a).minus(_of(b))), member=True, receiver=TAG),
    Declaration("sub", ("map", "int"), "map", lambda a, n: _wrap(_of(a).minus(_int_quantity(n))), member=True,
                receiver=TAG),
    Declaration("isGreaterThan", ("map", "map"), "bool", lambda a, b: _compare(a, b) > 0, member=True, receiver=TAG),
    Declaration("isLessThan", ("map", "map"), "bool", lambda a, b: _compare(a, b) < 0, member=True, receiver=TAG),
    Declaration("compareTo", ("map", "map"), "int", _compare, member=True, receiver=TAG),
)
