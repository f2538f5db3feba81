"""One ClusterPolicy ``validate`` rule as the spec of a ValidatingPolicy.

The rule's parts map as Kyverno's migration guide maps them (kyverno/kyverno#16506):

- ``match``/``exclude``: ``matchConstraints`` and match conditions (`matching`);
- ``context`` entries of kind ``variable``: CEL ``variables``; of kind
  ``configMap``: a variable reading the ConfigMap with Kyverno's
  ``resource.Get`` (offline, ``kyverno test`` serves it from the test's
  context file, which the rewritten test is given: `migrate.lookups`); the
  others read a registry, a URL or the API another way: refused here;
- ``preconditions``: a match condition (not met is a skip in both);
- ``validate.deny.conditions``: the validation ``!(conditions)``;
- ``validate.pattern``/``anyPattern``: a match condition "not skipped" (a
  conditional anchor not met) and a validation "passes" (`patterns`);
- ``validate.foreach``: per list, a validation that every element which
  applies (not null, its preconditions met, not skipped by an anchor)
  passes, and one match condition that some element applies (Kyverno gives
  no result when none does); nested loops nest comprehensions, and
  ``element``/``elementIndex`` (``element0``, ``elementIndex1`` ...) name
  the comprehension variables;
- ``validate.cel``: its expressions, variables and ``celPreconditions`` as
  they are;
- ``validate.message``: ``message``, or ``messageExpression`` when it holds
  variables.

Kyverno checks one of deny, pattern, anyPattern, foreach in that order;
the first present is converted. A foreach element whose preconditions cannot
be evaluated (a missing field) is skipped by Kyverno: such preconditions read
missing fields as null, on which every Kyverno operator is false.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from assertree.migrate.convert import cel
from assertree.migrate.convert.conditions import block_test
from assertree.migrate.convert.images import pod_spec_of
from assertree.migrate.convert.jmespath import Expr, Names, translate, translate_template
from assertree.migrate.convert.patterns import Scope, any_pattern_outcome, pattern_outcome
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["RuleSpec", "bind_context", "validate_spec"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_CONVERTED = {
    "podSecurity": ("the Pod Security Standards checks are not converted yet (assertree's podSecurity support "
                    "lands separately): write one CEL validation per control, or use the policies.kyverno.io "
                    "pod-security policies"),
    "manifests": "signed manifests have no ValidatingPolicy equivalent",
    "assert": "assertion trees have no ValidatingPolicy equivalent",
}
_CLUSTER_CONTEXT = {
    "apiCall": "calls the Kubernetes API or a service (write resource.Get()/List() or http.Get() in a CEL "
               "variable)",
    "imageRegistry": "reads image data from a registry (write image.GetMetadata() in a CEL variable)",
    "globalReference": "reads a global context entry (write globalContext.Get() in a CEL variable)",
}


@dataclass
class RuleSpec:
    """The parts of a ValidatingPolicy spec one rule gives (match constraints are `matching`'s)."""

    match_conditions: list[dict] = field(default_factory=list)
    variables: list[dict] = field(default_factory=list)
    validations: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the report should say besides the status


def validate_spec(rule: dict, path: tuple, names: Names | None = None) -> RuleSpec:
    """The validation parts of the ValidatingPolicy for `rule` (at `path` in the source document)."""
    validate = rule.get("validate")
    if not isinstance(validate, dict):
        raise NotConvertible("not a validate rule", path)
    where = (*path, "validate")
    for key, why in _NOT_CONVERTED.items():
        if validate.get(key) is not None:
            raise NotConvertible(why, (*where, key))
    spec = RuleSpec()
    names = (names or Names.request()).for_images(pod_spec_of(rule))
    names = bind_context(rule.get("context") or [], names, (*path, "context"), spec, rule_level=True)
    if rule.get("preconditions") is not None:
        test = block_test(rule["preconditions"], names, (*path, "preconditions"))
        if test != cel.TRUE:
            spec.match_conditions.append({"name": "preconditions", "expression": test})
    if validate.get("cel") is not None:
        _validate_cel(rule, validate["cel"], (*where, "cel"), spec)
        return spec
    message = _message(validate.get("message"), names, (*where, "message"), spec)
    if validate.get("deny") is not None:
        deny = validate["deny"] or {}
        conditions = deny.get("conditions") if isinstance(deny, dict) else None
        test = block_test(conditions, names, (*where, "deny", "conditions"))
        spec.validations.append({"expression": cel.not_(test), **message})
        return spec
    if validate.get("pattern") is not None or validate.get("anyPattern") is not None:
        if validate.get("pattern") is not None:
            outcome = pattern_outcome(validate["pattern"], (*where, "pattern"), names=names)
        else:
            outcome = any_pattern_outcome(validate["anyPattern"], (*where, "anyPattern"), names=names)
        if outcome.skip != cel.FALSE:
            spec.match_conditions.append({"name": "anchors-met", "expression": cel.not_(outcome.skip)})
        spec.validations.append({"expression": outcome.nonfail, **message})
        return spec
    if validate.get("foreach"):
        def hoist(text: str, expression: str) -> str:
            name = _variable_name(text, spec)
            spec.variables.append({"name": name, "expression": expression})
            return f"variables.{name}"

        loops = [_loop(entry, names, (*where, "foreach", i), 0, Scope(), hoist) for i, entry in
                 enumerate(validate["foreach"])]
        applies = cel.or_(loop.applies for loop in loops)
        if applies != cel.TRUE:
            spec.match_conditions.append({"name": "some-element-applies", "expression": applies})
        for loop in loops:
            spec.validations.append({"expression": loop.passes, **message})
        return spec
    raise NotConvertible("a validate rule with nothing to check (no deny, pattern, anyPattern, foreach or cel)",
                         where)


# -- context ------------------------------------------------------------------------------------------------


def bind_context(entries: list, names: Names, path: tuple, spec: Any, *, rule_level: bool = True) -> Names:
    """`names` with each context ``variable`` entry bound: a CEL variable at the rule level, the expression
    itself inside a foreach (where it may read the element)."""
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise NotConvertible("a context entry must be a map", (*path, i))
        name = str(entry.get("name") or "")
        for kind, why in _CLUSTER_CONTEXT.items():
            if entry.get(kind) is not None:
                raise NotConvertible(f"context entry {name!r} {why}; offline its data comes from a values file, "
                                     "which a CEL policy does not read", (*path, i, kind))
        variable, config_map = entry.get("variable"), entry.get("configMap")
        try:
            if config_map is not None:
                value = _config_map(config_map, names)
            elif isinstance(variable, dict):
                value = _variable(variable, names)
            else:
                raise NotConvertible("a context entry with no variable map (value, jmesPath, default)", (*path, i))
        except NotConvertible as refusal:
            if refusal.path[:len(path)] == path:
                raise
            raise refusal.at((*path, i, "configMap" if config_map is not None else "variable")) from None
        if rule_level and _IDENTIFIER.fullmatch(name):
            spec.variables.append({"name": name, "expression": value.value()})
            names = names.bind(name, Expr(f"variables.{name}", value.kind))
        elif _IDENTIFIER.fullmatch(name):
            names = names.bind(name, Expr(cel.paren(value.value()), value.kind))
        else:
            raise NotConvertible(f"the context entry name {name!r} is no CEL identifier", (*path, i, "name"))
    return names


def _config_map(spec: Any, names: Names) -> Expr:
    """A ``configMap`` entry: the ConfigMap read by Kyverno's ``resource.Get`` (namespace ``default`` unless
    given, as Kyverno's loader reads it); a missing one is an error on both sides."""
    if not isinstance(spec, dict) or not spec.get("name"):
        raise NotConvertible("a configMap entry needs a name")
    name = translate_template(str(spec["name"]), names, as_text=True).value()
    namespace = translate_template(str(spec.get("namespace") or "default"), names, as_text=True).value()
    return Expr(f"resource.Get('v1', 'configmaps', {namespace}, {name})", "map")


def _variable(variable: dict, names: Names) -> Expr:
    if variable.get("default") is not None:  # the default stands for a null result
        found = _variable({key: value for key, value in variable.items() if key != "default"}, names)
        default = cel.literal(variable["default"])
        if found.optional:
            return Expr(found.value(default), found.kind)
        text = cel.ternary(f"{cel.paren(found.value())} == null", f"dyn({default})", f"dyn({found.value()})")
        return Expr(text, "any")
    if variable.get("value") is not None and variable.get("jmesPath"):
        raise NotConvertible("a variable with both a value and a jmesPath", ("jmesPath",))
    if variable.get("jmesPath"):
        return translate(str(variable["jmesPath"]), names)
    value = variable.get("value")
    if isinstance(value, str):
        return translate_template(value, names)
    if _has_variables(value):
        raise NotConvertible("a variable whose value is a list or map holding {{ }} variables", ("value",))
    return Expr(cel.literal(value))


def _has_variables(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, list):
        return any(_has_variables(item) for item in value)
    if isinstance(value, dict):
        return any(_has_variables(item) or "{{" in str(key) for key, item in value.items())
    return False


# -- messages -----------------------------------------------------------------------------------------------


def _message(message: Any, names: Names, path: tuple, spec: RuleSpec) -> dict:
    """``message`` (text without variables), ``messageExpression``, or nothing."""
    if not isinstance(message, str) or not message:
        return {}
    if "{{" not in message:
        return {"message": message}
    try:
        return {"messageExpression": translate_template(message, names, as_text=True, message=True).value()}
    except NotConvertible as refusal:
        spec.notes.append(f"{_field(path)}: kept as text, its variables are not converted ({refusal.why})")
        return {"message": message}


def _field(path: tuple) -> str:
    from assertree.errors import field_path_text

    return field_path_text(path)


# -- foreach ------------------------------------------------------------------------------------------------


@dataclass
class _Loop:
    applies: str  # some element applies
    passes: str  # every element that applies passes


_ELEMENT_NAMES = ("element", "elementIndex")


def _reads_elements(text: str) -> bool:
    return re.search(r"\b(element\d*|index\d*)\b", text) is not None


def _loop(entry: Any, names: Names, path: tuple, depth: int, scope: Scope,
          hoist: Any = None) -> _Loop:
    """One foreach entry; `hoist(list text, CEL)` names a long list as a CEL variable (top-level loops)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("list"), str):
        raise NotConvertible("a foreach entry needs a list expression", path)
    try:
        items = translate(entry["list"], names)
    except NotConvertible as refusal:
        raise refusal.at((*path, "list")) from None
    source = items.value("[]") if items.optional else _lenient(items, entry["list"], names)
    element, index = ("element", "index") if depth == 0 else (f"element{depth}", f"index{depth}")
    element = scope.name(element)
    index = scope.name(index)
    scope = scope.enter(element).enter(index)
    inner = names.bind("element", Expr(element, "any")).bind(f"element{depth}", Expr(element, "any")) \
        .bind("elementIndex", Expr(index, "number")).bind(f"elementIndex{depth}", Expr(index, "number")) \
        .walking(element, entry["list"])
    inner = bind_context(entry.get("context") or [], inner, (*path, "context"), RuleSpec(), rule_level=False)
    present = f"{element} != null"
    precondition = cel.TRUE
    if entry.get("preconditions") is not None:
        # Kyverno skips an element whose preconditions fail to evaluate: read with missing fields as null,
        # every operator is false on null, so the element is skipped here too
        precondition = block_test(entry["preconditions"], inner.lenient(), (*path, "preconditions"))
    applies, passes = _element_check(entry, element, inner, path, depth, scope)
    uses_index = re.search(rf"\b{index}\b", " ".join((precondition, applies, passes))) is not None
    selected = cel.and_([present, precondition])
    if hoist is not None and (uses_index or len(source) > 60) and not _reads_elements(source):
        source = hoist(entry["list"], source)
    if uses_index:
        indices = f"lists.range(size({cel.paren(source)}))"
        bind = f"{cel.paren(source)}[{index}]"
        applies_text = f"{indices}.exists({index}, {_substitute(cel.and_([selected, applies]), element, bind)})"
        passes_text = f"{indices}.all({index}, {_substitute(cel.or_([cel.not_(selected), passes]), element, bind)})"
    else:
        applies_text = f"{cel.paren(source)}.exists({element}, {cel.and_([selected, applies])})"
        passes_text = f"{cel.paren(source)}.all({element}, {cel.or_([cel.not_(selected), passes])})"
    return _Loop(applies_text, passes_text)


def _variable_name(text: str, spec: RuleSpec) -> str:
    """A CEL variable name for a foreach list: its last field (``containers``), made unique."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    base = words[-1] if words else "elements"
    taken = {variable["name"] for variable in spec.variables}
    name = base
    number = 2
    while name in taken:
        name = f"{base}{number}"
        number += 1
    return name


def _substitute(text: str, name: str, value: str) -> str:
    return re.sub(rf"(?<![\w.]){re.escape(name)}\b", value, text)


def _lenient(items: Expr, text: str, names: Names) -> str:
    """The list a foreach walks; a missing list (Kyverno skips the loop) reads as empty."""
    from assertree.migrate.convert.jmespath import translate_with_default

    lenient, _default = translate_with_default(f"({text}) || `[]`", names)
    return lenient.value("[]")


def _element_check(entry: dict, element: str, names: Names, path: tuple, depth: int,
                   scope: Scope) -> tuple[str, str]:
    """(the element is not skipped by its check, the element's check passes or skips)."""
    if entry.get("deny") is not None:
        deny = entry["deny"] or {}
        conditions = deny.get("conditions") if isinstance(deny, dict) else None
        test = block_test(conditions, names, (*path, "deny", "conditions"))
        return cel.TRUE, cel.not_(test)
    if entry.get("pattern") is not None or entry.get("anyPattern") is not None:
        if entry.get("elementScope") is False:
            raise NotConvertible("elementScope: false (the pattern checks the whole resource per element)",
                                 (*path, "elementScope"))
        if entry.get("pattern") is not None:
            outcome = pattern_outcome(entry["pattern"], (*path, "pattern"), element, scope, names)
        else:
            outcome = any_pattern_outcome(entry["anyPattern"], (*path, "anyPattern"), element, scope, names)
        return cel.not_(outcome.skip), outcome.nonfail
    if entry.get("foreach"):
        loops = [_loop(inner, names, (*path, "foreach", i), depth + 1, scope)
                 for i, inner in enumerate(entry["foreach"])]
        return cel.or_(loop.applies for loop in loops), cel.and_(loop.passes for loop in loops)
    raise NotConvertible("a foreach entry with nothing to check", path)


# -- validate.cel -------------------------------------------------------------------------------------------


def _validate_cel(rule: dict, block: Any, path: tuple, spec: RuleSpec) -> None:
    if not isinstance(block, dict):
        raise NotConvertible("validate.cel must be a map", path)
    for key in ("paramKind", "paramRef"):
        if block.get(key) is not None:
            raise NotConvertible("parameters come from cluster resources: inline them or read them with "
                                 "resource.Get() in a variable", (*path, key))
    if block.get("auditAnnotations"):
        spec.notes.append("validate.cel.auditAnnotations: copied as auditAnnotations")
    for i, condition in enumerate(rule.get("celPreconditions") or []):
        spec.match_conditions.append({"name": str(condition.get("name") or f"precondition-{i}"),
                                      "expression": str(condition.get("expression") or "")})
    for variable in block.get("variables") or []:
        spec.variables.append({"name": str(variable.get("name")), "expression": str(variable.get("expression"))})
    for i, expression in enumerate(block.get("expressions") or []):
        if not isinstance(expression, dict) or not isinstance(expression.get("expression"), str):
            raise NotConvertible("a CEL validation needs an expression", (*path, "expressions", i))
        out = {"expression": expression["expression"]}
        for key in ("message", "messageExpression", "reason"):
            if expression.get(key):
                out[key] = expression[key]
        spec.validations.append(out)
    if not spec.validations:
        raise NotConvertible("validate.cel has no expressions", (*path, "expressions"))
