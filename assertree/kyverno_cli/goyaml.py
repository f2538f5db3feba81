"""YAML as the Kyverno CLI writes it: ``sigs.k8s.io/yaml.Marshal``, which is JSON, read back and written by go-yaml v2.

The CLI prints mutated resources, policy reports and generated exceptions this
way, so the drop-in writes them the same way:

- map keys in go-yaml v2's order (``sorter.go``: runs of digits compare as
  numbers, letters before other characters), lists of maps not indented under
  their key, two-space indentation, lines folded at 80 columns;
- a string that go-yaml would read back as something else (``"3"``,
  ``"true"``, ``"y"``, ``""``, a date) double-quoted; one with a line break as a
  literal block; one that cannot be written plain (``: `` inside, a leading
  ``*``) single-quoted, as libyaml chooses;
- numbers as they come out of the JSON round trip: a whole float64 is an
  integer (``3``), others Go's shortest form (``0.5``, ``1e+21``).

PyYAML's emitter is libyaml's, ported, so the layout and the plain/quoted
choice are go-yaml's own; only the decision to quote and the key order are
supplied here (`assertree.jp.functions.goyaml.plain_is_string`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import yaml

from assertree.jp.functions.goyaml import plain_is_string

__all__ = ["marshal"]


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper with go-yaml v2's choices for strings, numbers and key order."""

    def ignore_aliases(self, data: Any) -> bool:
        return True  # JSON has no anchors: a value shared twice is written twice, as Go writes it


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        style: str | None = "|"
    elif plain_is_string(value):
        style = None  # plain when libyaml allows it, else single-quoted
    else:
        style = '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _float(dumper: yaml.SafeDumper, value: float) -> yaml.ScalarNode:
    if value.is_integer() and abs(value) < 1e21:
        return dumper.represent_scalar("tag:yaml.org,2002:int", str(int(value)))
    if math.isnan(value):
        text = ".nan"
    elif math.isinf(value):
        text = ".inf" if value > 0 else "-.inf"
    else:
        text = _go_g(value)
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


def _go_g(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 64)``: shortest digits, exponent past 21 digits or below 1e-4."""
    text = repr(value)
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").lstrip("0").rjust(2, "0")
        return f"{mantissa.removesuffix('.0')}e{sign}{digits}"
    return text


def _mapping(dumper: yaml.SafeDumper, value: dict) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", sorted(value.items(), key=lambda item: _key(item[0])))


def _less(a: str, b: str) -> bool:
    """go-yaml v2's ``keyList.Less`` for two string keys (``sorter.go``): at the first rune that differs, two
    letters compare as runes, a letter sorts after anything else, and otherwise the runs of digits that
    start there compare as numbers (then by length, then as runes); a prefix sorts first."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        a_letter, b_letter = a[i].isalpha(), b[i].isalpha()
        if a_letter and b_letter:
            return a[i] < b[i]
        if a_letter or b_letter:
            return b_letter
        a_number = b_number = 0
        if a[i] == "0" or b[i] == "0":  # a zero inside a number: the digits before it count (sorter.go)
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    a_number = b_number = 1
                    break
                j -= 1
        a_end = b_end = i
        while a_end < len(a) and a[a_end].isdigit():
            a_number = a_number * 10 + int(a[a_end])
            a_end += 1
        while b_end < len(b) and b[b_end].isdigit():
            b_number = b_number * 10 + int(b[b_end])
            b_end += 1
        if a_number != b_number:
            return a_number < b_number
        if a_end != b_end:
            return a_end < b_end
        return a[i] < b[i]
    return len(a) < len(b)


def _compare(a: str, b: str) -> int:
    return -1 if _less(a, b) else 1 if _less(b, a) else 0


_KEY = functools.cmp_to_key(_compare)


def _key(key: Any) -> Any:
    return _KEY(str(key))


_Dumper.add_representer(str, _string)
_Dumper.add_representer(float, _float)
_Dumper.add_representer(dict, _mapping)
_Dumper.add_multi_representer(dict, _mapping)  # gojson.Struct too: YAML sorts every map, struct or not


def marshal(value: Any) -> str:
    """`value` (JSON data) as ``sigs.k8s.io/yaml.Marshal`` writes it, ending with a line break."""
    return yaml.dump(value, Dumper=_Dumper, default_flow_style=False, allow_unicode=True, width=80, indent=2,
                     sort_keys=False)
