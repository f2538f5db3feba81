"""The YAML template mode of GeneratingPolicies (``spec.generate[].template``, Kyverno 1.19).

A template is a YAML stream, one resource per document (``pkg/cel/policies/gpol/template``).
With ``interpolate: cel``, ``(( expression ))`` placeholders are CEL evaluated
with the policy's variables (``object``, ``variables``, ...):

- a scalar that is exactly one placeholder is replaced by the value, whatever
  its type (``labels: (( variables.labels ))`` puts a map there);
- placeholders inside a longer string are written into it, and must give a
  string, a number or a boolean (numbers as Go prints them: ``2``, ``2.5``);
- ``\\((`` writes a literal ``((``; a placeholder may hold parentheses and
  quoted strings (``(( string(f(x)) ))``, ``(( ":)".size() ))``);
- mapping keys cannot hold placeholders (a compile error).

Without ``interpolate`` (or with ``none``) the text is taken as it is. The YAML
is read as Kyverno reads it (gopkg.in/yaml.v3: YAML 1.2 scalars); every
placeholder is compiled when the policy is loaded, so a typo is a load-time
error with the field path of the template.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Template", "TemplateError", "compile_template", "scan"]


class TemplateError(ValueError):
    """A template that cannot be read or compiled, or a placeholder that fails when rendered."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of a scalar: literal text, or the CEL text of a placeholder."""

    text: str
    expression: bool = False


def scan(text: str) -> list[Segment]:
    """`text` split into literal and placeholder segments; TemplateError for a placeholder left open."""
    segments: list[Segment] = []
    literal: list[str] = []
    position = 0
    while position < len(text):
        if text.startswith("\\((", position):
            literal.append("((")
            position += 3
            continue
        if text.startswith("((", position):
            expression, position = _placeholder(text, position)
            if literal:
                segments.append(Segment("".join(literal)))
                literal = []
            segments.append(Segment(expression, expression=True))
            continue
        literal.append(text[position])
        position += 1
    if literal:
        segments.append(Segment("".join(literal)))
    return segments


def _placeholder(text: str, start: int) -> tuple[str, int]:
    """The trimmed expression of the placeholder opening at `start`, and the index after its ``))``."""
    depth = 0
    quote = ""
    position = start + 2
    while position < len(text):
        char = text[position]
        if quote:
            if char == "\\":
                position += 2
                continue
            if char == quote:
                quote = ""
            position += 1
            continue
        if char in "\"'":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth:
                depth -= 1
            elif text.startswith("))", position):
                expression = text[start + 2:position].strip()
                if not expression:
                    raise TemplateError(f"empty placeholder at offset {start}")
                return expression, position + 2
            else:
                raise TemplateError(f"unbalanced parenthesis in placeholder starting at offset {start}")
        position += 1
    if quote:
        raise TemplateError(f"unterminated string literal in placeholder starting at offset {start}")
    raise TemplateError(f"unterminated placeholder starting at offset {start}: missing closing '))'")


Node = Callable[[Callable[[Any], Any]], Any]  # renders with `evaluate(program) -> value`


@dataclass
class Template:
    """A compiled template: `render` gives one resource (a dict) per document."""

    documents: list[Node]

    def render(self, evaluate: Callable[[Any], Any]) -> list[dict]:
        """The resources, placeholders evaluated by `evaluate` (a compiled program -> its value)."""
        out = []
        for number, document in enumerate(self.documents, start=1):
            try:
                value = document(evaluate)
            except TemplateError as error:
                raise TemplateError(f"document {number}: {error}") from None
            if not isinstance(value, dict):
                raise TemplateError(f"document {number}: expected a mapping describing a resource, got "
                                    f"{type(value).__name__}")
            out.append(value)
        return out


def compile_template(text: str, interpolate: bool, compile_expression: Callable[[str], Any]) -> Template:
    """`text` read and its placeholders compiled (`compile_expression`: CEL text -> program); the YAML is read
    within every input's limits (nesting, go-yaml's alias budget)."""
    from assertree.documents.reader import parse_values
    from assertree.errors import AssertreeError

    try:
        values = parse_values(text.encode(), "template", "yaml", payload=True)
    except AssertreeError as error:
        raise TemplateError(f"failed to parse YAML: {error}") from None
    if not values:
        raise TemplateError("template must contain at least one YAML document")
    documents = []
    for number, value in enumerate(values, start=1):
        if not isinstance(value, dict) and not (interpolate and _whole_placeholder(value)):
            raise TemplateError(f"document {number} must be a mapping describing a resource")
        documents.append(_compile(value, interpolate, compile_expression) if interpolate else _literal(value))
    return Template(documents)


def _whole_placeholder(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        segments = scan(value)
    except TemplateError:
        return False
    return len(segments) == 1 and segments[0].expression


def _literal(value: Any) -> Node:
    import copy

    return lambda evaluate: copy.deepcopy(value)


def _compile(value: Any, interpolate: bool, compile_expression: Callable[[str], Any]) -> Node:
    if isinstance(value, dict):
        entries = []
        for key, item in value.items():
            if isinstance(key, str) and "((" in key.replace("\\((", ""):
                raise TemplateError(f"placeholders are not supported in mapping keys ({key!r}); use a whole-value "
                                    "placeholder on the parent field instead (e.g. `labels: (( variables.labels ))`)")
            entries.append((key, _compile(item, interpolate, compile_expression)))
        return lambda evaluate: {key: node(evaluate) for key, node in entries}
    if isinstance(value, list):
        items = [_compile(item, interpolate, compile_expression) for item in value]
        return lambda evaluate: [node(evaluate) for node in items]
    if not isinstance(value, str) or ("((" not in value and "\\((" not in value):
        return _literal(value)
    segments = scan(value)
    programs = {index: compile_expression(segment.text) for index, segment in enumerate(segments)
                if segment.expression}
    if len(segments) == 1 and segments[0].expression:
        program = programs[0]
        return lambda evaluate: evaluate(program)

    def interpolated(evaluate: Callable[[Any], Any]) -> str:
        parts = []
        for index, segment in enumerate(segments):
            if not segment.expression:
                parts.append(segment.text)
                continue
            parts.append(_scalar_text(evaluate(programs[index]), segment.text))
        return "".join(parts)

    return interpolated


def _scalar_text(value: Any, expression: str) -> str:
    """A placeholder's value written into a string, as Go's ``%v`` writes the scalar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    raise TemplateError(f"placeholder {expression!r} embedded in a string must evaluate to a scalar, got "
                        f"{type(value).__name__}; use a whole-value placeholder for structured results")
