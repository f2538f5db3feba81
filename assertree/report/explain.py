"""An explanation (``--explain``) as lines of text: one step a line, nested by indentation.

    assert.all[0] -> fail
      spec = {"template":{"spec":{"containers":[...]}}}
        ~.containers = [{"image":"nginx:latest","name":"worker"}]
          [0] = {"image":"nginx:latest","name":"worker"}
            image = "nginx:latest"
              (ends_with(@, ':latest')) = true, expected false -> fail
    preconditions -> pass (met)
      {{ request.operation }} NotEquals DELETE: "CREATE" NotEquals "DELETE" -> true

A step reads ``what = value, expected X -> outcome (detail)``; a comparison
(a Kyverno condition) reads ``what: key OPERATOR value -> outcome``. Values
are compact JSON, shortened to fit a line (the explanation already bounded
them as data). The text report, ``assertree test`` and the playground all
print explanations with these lines.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import shorten
from assertree.explanation import ABSENT, MAX_STEPS, Explanation, Step
from assertree.jp.values import to_display

__all__ = ["explanation_lines", "step_text"]

VALUE_WIDTH = 100  # characters of a value on a line
DETAIL_WIDTH = 240


def _value(value: Any) -> str:
    return shorten(to_display(value), VALUE_WIDTH)


def step_text(step: Step) -> str:
    """One step on one line, without its indentation."""
    text = step.what
    if step.operator:
        key = _value(step.value) if step.value is not ABSENT else "?"
        value = _value(step.expected) if step.expected is not ABSENT else "?"
        text += f": {key} {step.operator} {value}"
    else:
        if step.value is not ABSENT:
            text += f" = {_value(step.value)}"
        if step.expected is not ABSENT:
            text += f", expected {_value(step.expected)}"
    if step.outcome:
        text += f" -> {step.outcome}"
    if step.detail:
        text += f" ({shorten(' '.join(step.detail.split()), DETAIL_WIDTH)})"
    return text


def explanation_lines(explanation: Explanation, indent: str = "") -> list[str]:
    """The lines of `explanation`, each after `indent` and two spaces per level of nesting; a last line says
    when the explanation left steps out."""
    lines = [f"{indent}{'  ' * step.depth}{step_text(step)}" for step in explanation.steps]
    if explanation.truncated:
        lines.append(f"{indent}... (more steps left out: an explanation keeps at most {MAX_STEPS})")
    return lines
