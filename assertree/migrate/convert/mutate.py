"""A ClusterPolicy ``mutate`` rule as the spec of a MutatingPolicy.

``patchStrategicMerge`` becomes one ``ApplyConfiguration`` mutation, the
form Kyverno's CEL autogen carries over to Pod controllers: each map of the
patch is an ``Object...{}`` of the fields it sets, and Kyverno's anchors
become CEL around them:

- ``+(key)``: ``key: x.?key.orValue(<value>)``, the value only where the field
  is missing;
- ``(key)``/``X(key)``/``=(key)`` in a list item select the items of the
  resource's list that meet them (the merge then goes by the item's name, as
  Kyverno's named copies do); on the patch's top map they are match
  conditions (a condition not met leaves the resource untouched: a skip);
- ``<(key)``: a match condition (not met: nothing changes);
- a list of maps without anchors is merged item by item by the apply
  configuration (on the keys Kubernetes declares: containers by name ...);
  a list of values replaces the field.

Kyverno reports a mutate rule that changed nothing as ``skip``; a
MutatingPolicy applies its patch anyway, so a match condition says when
the patch changes something (a field missing or different), and the policy
skips otherwise.

``patchesJson6902`` becomes a ``JSONPatch`` mutation with the same
operations (Kyverno derives no Pod controller rules from JSON patches, and
neither does the converted policy). ``foreach`` and ``targets`` are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from assertree.languages.kyverno.anchors import AnchorKind, parse_anchor
from assertree.migrate.convert import cel
from assertree.migrate.convert.conditions import block_test
from assertree.migrate.convert.images import pod_spec_of
from assertree.migrate.convert.jmespath import Names, translate_template
from assertree.migrate.convert.patterns import Scope, condition_test
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["MutateSpec", "mutate_spec"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Maps of plain values (keys are data, not fields): written as map literals, not typed objects.
_STRING_MAPS = frozenset({"labels", "annotations", "nodeSelector", "data", "stringData", "matchLabels",
                          "binaryData", "limits", "requests", "parameters"})


@dataclass
class MutateSpec:
    """The parts of a MutatingPolicy spec one rule gives (match constraints are `matching`'s)."""

    match_conditions: list[dict] = field(default_factory=list)
    variables: list[dict] = field(default_factory=list)
    mutations: list[dict] = field(default_factory=list)
    json_patch: bool = False  # Kyverno derives no controller rules from a rule with JSON patches
    notes: list[str] = field(default_factory=list)


def mutate_spec(rule: dict, path: tuple, names: Names, context: Any, *, pods: bool = False) -> MutateSpec:
    """The mutation parts of the MutatingPolicy for `rule`; `context` binds the rule's context entries
    (``validate.bind_context``); `pods`: the rule selects Pods only (its patch also reaches the Pod template
    of the controllers autogen covers)."""
    mutate = rule.get("mutate")
    if not isinstance(mutate, dict):
        raise NotConvertible("not a mutate rule", path)
    where = (*path, "mutate")
    for key, why in (("targets", "mutating existing resources has no MutatingPolicy form converted here"),
                     ("patches", "RFC 6902 patches in `patches` are not converted")):
        if mutate.get(key):
            raise NotConvertible(why, (*where, key))
    spec = MutateSpec()
    names = names.for_images(pod_spec_of(rule))
    # inlined, not CEL variables: Kyverno's autogen does not move a MutatingPolicy's variables under the template
    names = context(rule.get("context") or [], names, (*path, "context"), spec, rule_level=False)
    if rule.get("preconditions") is not None:
        test = block_test(rule["preconditions"], names, (*path, "preconditions"))
        if test != cel.TRUE:
            spec.match_conditions.append({"name": "preconditions", "expression": test})
    if mutate.get("patchStrategicMerge") is not None:
        patch = mutate["patchStrategicMerge"]
        if not isinstance(patch, dict):
            raise NotConvertible("patchStrategicMerge must be a map", (*where, "patchStrategicMerge"))
        builder = _Builder(names, (*where, "patchStrategicMerge"))
        built = builder.map(patch, "object", "Object", (), root=True)
        spec.match_conditions.extend({"name": f"anchors-met-{i}" if i else "anchors-met", "expression": test}
                                     for i, test in enumerate([*builder.global_conditions, *built.conditions]))
        spec.match_conditions.append({"name": "changes-something", "expression": built.changes})
        spec.mutations.append({"patchType": "ApplyConfiguration",
                               "applyConfiguration": {"expression": built.text}})
        reorder = _reorder(patch, pods)
        if reorder:
            spec.mutations.append({"patchType": "JSONPatch", "jsonPatch": {"expression": reorder}})
        return spec
    if mutate.get("foreach"):
        _foreach(mutate["foreach"], names, (*where, "foreach"), spec)
        return spec
    if mutate.get("patchesJson6902") is not None:
        spec.mutations.append({"patchType": "JSONPatch",
                               "jsonPatch": {"expression": _json_patch(mutate["patchesJson6902"], names,
                                                                       (*where, "patchesJson6902"))}})
        spec.json_patch = True
        return spec
    raise NotConvertible("a mutate rule with nothing to apply", where)


@dataclass
class _Built:
    text: str  # the CEL value (an Object constructor, a map, a list or a value)
    changes: str  # CEL: applying it changes the resource
    conditions: list[str] = field(default_factory=list)  # top-level anchors (match conditions)


class _Builder:
    def __init__(self, names: Names, path: tuple, item_conditions: dict[tuple, Any] | None = None) -> None:
        self.names = names
        self.path = path
        self.scope = Scope()
        self.global_conditions: list[str] = []  # from list items, for the match conditions
        # the list at a patch path -> CEL its selected items must also meet, given the item's variable
        self.item_conditions = item_conditions or {}

    def value(self, raw: Any, at: tuple) -> str:
        if isinstance(raw, str) and "{{" in raw:
            try:
                return translate_template(raw, self.names).value()
            except NotConvertible as refusal:
                raise refusal.at((*self.path, *at)) from None
        if isinstance(raw, dict | list):
            raise NotConvertible("a map or list where a value was expected", (*self.path, *at))
        return cel.literal(raw)

    def map(self, patch: dict, current: str, type_name: str, at: tuple, *, root: bool = False,
            optional: str | None = None) -> _Built:
        """The constructor for the map `patch` merged into the resource's map `current`, which may be absent:
        `optional` reads it as a CEL optional (``object.spec.?template``), for the values kept where present."""
        reach = optional or current
        fields: list[str] = []
        changes: list[str] = []
        conditions: list[str] = []
        literal = type_name.rsplit(".", 1)[-1] in _STRING_MAPS or not all(
            _IDENTIFIER.fullmatch(str(_key_name(key))) for key in patch)
        for key, value in patch.items():
            anchor = parse_anchor(str(key).strip())
            name = anchor.key if anchor.kind is not None else str(key)
            if anchor.kind in (AnchorKind.CONDITION, AnchorKind.NEGATION, AnchorKind.EQUALITY, AnchorKind.GLOBAL):
                conditions.append(self.condition(current, str(key).strip(), value, (*at, key)))
                continue
            child = cel.select(current, name)
            present = _present(current, name)
            label = cel.string(name) if literal else name
            if isinstance(value, dict):
                inner = self.map(value, child, f"{type_name}.{name}", (*at, key),
                                 optional=_optional(reach, name, literal))
                if anchor.kind is AnchorKind.ADD_IF_NOT_PRESENT:
                    fields.append(f"{label}: {_optional(reach, name, literal)}.orValue({inner.text})")
                    changes.append(cel.not_(present))
                    continue
                # a condition not met anywhere outside a list item leaves the whole patch out (Kyverno)
                conditions.extend(cel.and_([present, test]) for test in inner.conditions)
                if inner.text not in ("{}", f"{type_name}.{name}{{}}"):
                    fields.append(f"{label}: {inner.text}")
                    changes.append(cel.or_([cel.not_(present), inner.changes]))
                continue
            if isinstance(value, list):
                items = self.list(value, child, present, f"{type_name}.{name}", (*at, key))
                if anchor.kind is AnchorKind.ADD_IF_NOT_PRESENT:
                    fields.append(f"{label}: {_optional(reach, name, literal)}.orValue({items.text})")
                    changes.append(cel.not_(present))
                elif value and all(isinstance(item, dict) and _selects(item) for item in value):
                    # items chosen from the resource's list: nothing to write when the resource has no list
                    fields.append(f"?{label}: {present} ? optional.of({items.text}) : optional.none()")
                    changes.append(items.changes)
                else:
                    fields.append(f"{label}: {items.text}")
                    changes.append(items.changes)
                continue
            text = self.value(value, (*at, key))
            if _whole_template(value):
                # a variable's value may be null: Kyverno's merge leaves a null field out, as does `?field`
                some = f"dyn({text}) != null"
                option = f"({some} ? optional.of({text}) : optional.none())"
                if anchor.kind is AnchorKind.ADD_IF_NOT_PRESENT:
                    fields.append(f"?{label}: {_optional(reach, name, literal)}.or{option}")
                    changes.append(cel.and_([cel.not_(present), some]))
                else:
                    fields.append(f"?{label}: {option}")
                    changes.append(cel.and_([some, cel.or_([cel.not_(present), f"{child} != {cel.paren(text)}"])]))
            elif anchor.kind is AnchorKind.ADD_IF_NOT_PRESENT:
                fields.append(f"{label}: {_optional(reach, name, literal)}.orValue({text})")
                changes.append(cel.not_(present))
            else:
                fields.append(f"{label}: {text}")
                changes.append(cel.or_([cel.not_(present), f"{child} != {cel.paren(text)}"]))
        body = ", ".join(fields)
        text = "{" + body + "}" if literal else f"{type_name}{{{body}}}"
        return _Built(text, cel.or_(changes) if changes else cel.FALSE, conditions)

    def condition(self, current: str, key: str, value: Any, at: tuple) -> str:
        """A condition anchor of the patch as a CEL test on the resource's map `current`."""
        try:
            return condition_test(current, key, value, (*self.path, *at), self.scope)
        except NotConvertible as refusal:
            raise refusal if refusal.path else refusal.at((*self.path, *at)) from None

    def list(self, patch: list, current: str, present: str, type_name: str, at: tuple) -> _Built:
        if not all(isinstance(item, dict) for item in patch):
            text = "[" + ", ".join(self.value(item, (*at, i)) for i, item in enumerate(patch)) + "]"
            return _Built(text, cel.or_([cel.not_(present), f"{current} != {cel.paren(text)}"]))
        parts: list[str] = []
        changes: list[str] = []
        literal_items: list[str] = []
        for i, item in enumerate(patch):
            anchored = [key for key in item if parse_anchor(str(key).strip()).kind not in (
                None, AnchorKind.ADD_IF_NOT_PRESENT)]
            if not anchored:
                before = len(self.global_conditions)
                built = self.map(item, "item", type_name, (*at, i))
                if built.conditions or len(self.global_conditions) != before:
                    raise NotConvertible("anchors below a list item that no anchor of its own selects: which "
                                         "resource items Kyverno patches then is not converted", (*self.path, *at, i))
                literal_items.append(built.text)
                name = item.get("name")
                if name is not None and not isinstance(name, dict | list):
                    name_text = self.value(name, (*at, i, "name"))
                    existing = f"{current}.exists(item, has(item.name) && item.name == {name_text})"
                    changes.append(cel.or_([cel.not_(present), cel.not_(existing),
                                            (f"{current}.exists(item, has(item.name) && item.name == {name_text} && "
                                            f"{cel.paren(built.changes)})")]))
                else:
                    changes.append(cel.TRUE)
                continue
            variable = self.scope.variable(str(at[-1]) if at else "item")
            self.scope = self.scope.enter(variable)
            conditions = [self.condition(variable, str(key).strip(), item[key], (*at, i, key)) for key in anchored]
            if at in self.item_conditions:
                conditions.append(self.item_conditions[at](variable))
            if any(parse_anchor(str(key).strip()).kind is AnchorKind.GLOBAL for key in anchored):
                # a global condition in a list item: some item must meet it (an empty list does), or the whole
                # patch is left out
                self.global_conditions.append(cel.and_([present, cel.or_([
                    f"size({current}) == 0", f"{current}.exists({variable}, {cel.and_(conditions)})"])]))
                continue
            rest = {key: value for key, value in item.items() if key not in anchored}
            rest.setdefault("name", None)
            built = self.map({key: value for key, value in rest.items() if value is not None}, variable,
                             type_name, (*at, i))
            conditions.extend(built.conditions)  # a condition below the item selects the item too
            selected = f"{current}.filter({variable}, {cel.and_(conditions)})"
            entry = built.text.replace(f"{type_name}{{", f"{type_name}{{name: {variable}.name, ", 1) \
                if "name" not in item else built.text
            parts.append(f"{selected}.map({variable}, {entry})")
            changes.append(cel.and_([present, (f"{current}.exists({variable}, "
                                              f"{cel.and_([*conditions, built.changes])})")]))
        if literal_items:
            parts.insert(0, "[" + ", ".join(literal_items) + "]")
        return _Built(" + ".join(parts) if parts else "[]", cel.or_(changes) if changes else cel.FALSE)


# Where a Pod's spec is in the controllers autogen covers (autogen does not rewrite JSON patches).
_POD_SPECS = (("spec",), ("spec", "template", "spec"), ("spec", "jobTemplate", "spec", "template", "spec"))


def _reorder(patch: dict, pods: bool) -> str | None:
    """A JSON patch laying out each named list the patch merges as Kyverno's strategic merge does (the patch's
    items first, in its order, then the resource's others); an apply configuration keeps the resource's order
    and appends. Lists reached through plain map keys only, their items named by plain texts."""
    found: list[tuple[tuple[str, ...], list[str]]] = []

    def walk(node: dict, at: tuple[str, ...]) -> None:
        for key, value in node.items():
            if parse_anchor(str(key).strip()).kind is not None:
                continue
            if isinstance(value, dict):
                walk(value, (*at, str(key)))
            elif isinstance(value, list) and value and all(
                    isinstance(item, dict) and all(parse_anchor(str(k).strip()).kind is None for k in item)
                    and isinstance(item.get("name"), str) and "{{" not in item["name"] for item in value):
                found.append(((*at, str(key)), [item["name"] for item in value]))

    walk(patch, ())
    terms: list[str] = []
    for steps, names in found:
        prefixes: tuple[tuple[str, ...], ...] = ((),)
        if pods and steps[0] == "spec":
            prefixes = tuple(prefix[:-1] for prefix in _POD_SPECS)
        for prefix in prefixes:
            full = (*prefix, *steps)
            current = "object." + ".".join(full)
            guard = cel.and_([f"has(object.{'.'.join(full[:depth])})" for depth in range(1, len(full) + 1)])
            ordered = [f"{current}.filter(item, has(item.name) && item.name == {cel.string(name)})"
                       for name in names]
            others = ", ".join(cel.string(name) for name in names)
            ordered.append(f"{current}.filter(item, !has(item.name) || !(item.name in [{others}]))")
            pointer = "/" + "/".join(step.replace("~", "~0").replace("/", "~1") for step in full)
            terms.append(f"({guard} ? [JSONPatch{{op: 'replace', path: {cel.string(pointer)}, "
                         f"value: {' + '.join(ordered)}}}] : [])")
    return " + ".join(terms) if terms else None


def _selects(item: dict) -> bool:
    """Whether a patch list item is chosen among the resource's items by anchors (``(name): "*"``)."""
    return any(parse_anchor(str(key).strip()).kind not in (None, AnchorKind.ADD_IF_NOT_PRESENT) for key in item)


def _whole_template(raw: Any) -> bool:
    """Whether `raw` is one ``{{ }}`` and nothing else (its value is the variable's, null included)."""
    if not isinstance(raw, str):
        return False
    text = raw.strip()
    return text.startswith("{{") and text.endswith("}}") and text.count("{{") == 1


def _key_name(key: Any) -> str:
    anchor = parse_anchor(str(key).strip())
    return anchor.key if anchor.kind is not None else str(key)


def _present(current: str, name: str) -> str:
    selected = cel.select(current, name)
    if selected.endswith("]"):
        return cel.has(current, name)
    return f"has({selected})"


def _optional(current: str, name: str, literal: bool) -> str:
    """`current`'s field `name` as a CEL optional (``object.spec`` and ``object.metadata`` stay as written, the
    text Kyverno's autogen moves under the Pod template)."""
    if current in ("object", "oldObject") and name in ("spec", "metadata"):
        return f"{current}.{name}"
    if current in ("object.metadata", "oldObject.metadata") and name in ("labels", "annotations"):
        # written out so that autogen moves it under the Pod template (it rewrites `object.metadata.labels`)
        return f"(has({current}.{name}) ? optional.of({current}.{name}) : optional.none())"
    selected = cel.select(current, name)
    if literal or selected.endswith("]"):
        return f"{current}[?{cel.string(name)}]"
    return f"{current}.?{name}"


def _json_patch(text: Any, names: Names, path: tuple) -> str:
    try:
        operations = yaml.safe_load(text) if isinstance(text, str) else text
    except yaml.YAMLError as error:
        raise NotConvertible(f"the JSON patch does not parse: {error}", path) from None
    if not isinstance(operations, list):
        raise NotConvertible("a JSON patch must be a list of operations", path)
    out = []
    for i, operation in enumerate(operations):
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise NotConvertible("a JSON patch operation needs op and path", (*path, i))
        fields = [f"op: {cel.string(str(operation['op']))}"]
        builder = _Builder(names, (*path, i))
        fields.append(f"path: {builder.value(operation['path'], ('path',))}")
        for key in ("from", "value"):
            if key in operation:
                fields.append(f"{key}: {_value_literal(builder, operation[key], (key,))}")
        out.append("JSONPatch{" + ", ".join(fields) + "}")
    return "[" + ", ".join(out) + "]"


def _value_literal(builder: _Builder, value: Any, at: tuple) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{cel.string(str(key))}: {_value_literal(builder, item, (*at, key))}"
                               for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_value_literal(builder, item, (*at, i)) for i, item in enumerate(value)) + "]"
    return builder.value(value, at)


# -- foreach ------------------------------------------------------------------------------------------------


def _foreach(entries: list, names: Names, path: tuple, spec: MutateSpec) -> None:
    """``mutate.foreach``: every entry a JSON patch per element (elements in order, or reversed with
    ``order: Descending``, nested loops flattened), or every entry a strategic merge patch of the item of the
    walked list that the element is (``(name): '{{ element.name }}'``)."""
    if all((isinstance(entry, dict) and entry.get("patchesJson6902") is not None) or entry.get("foreach")
           for entry in entries):
        operations = _foreach_operations(entries, names, path, 0, [])
        spec.variables.append({"name": "patches", "expression": operations})
        spec.match_conditions.append({"name": "changes-something", "expression": "size(variables.patches) > 0"})
        spec.mutations.append({"patchType": "JSONPatch", "jsonPatch": {"expression": "variables.patches"}})
        spec.json_patch = True
        return
    if len(entries) != 1 or not isinstance(entries[0], dict) or entries[0].get("patchStrategicMerge") is None:
        raise NotConvertible("a foreach mixing patch kinds, or of several strategic merge patches", path)
    _element_merge(entries[0], names, (*path, 0), spec)


def _foreach_operations(entries: list, names: Names, path: tuple, depth: int, outer: list[str]) -> str:
    from assertree.migrate.convert.jmespath import Expr, translate

    lists = []
    for i, entry in enumerate(entries):
        where = (*path, i)
        if not isinstance(entry, dict) or not isinstance(entry.get("list"), str):
            raise NotConvertible("a foreach entry needs a list expression", where)
        source = translate(f"({entry['list'].strip()}) || `[]`", names).value("[]")
        index = f"index{depth}" if depth else "index"
        element = f"{cel.paren(source)}[{index}]"
        inner = names.bind("element", Expr(element, "any")).bind(f"element{depth}", Expr(element, "any")) \
            .bind("elementIndex", Expr(index, "number")).bind(f"elementIndex{depth}", Expr(index, "number"))
        if entry.get("context"):
            raise NotConvertible("context entries inside a mutate foreach", (*where, "context"))
        condition = cel.TRUE
        if entry.get("preconditions") is not None:
            condition = block_test(entry["preconditions"], inner.lenient(), (*where, "preconditions"))
        if entry.get("foreach"):
            body = _foreach_operations(entry["foreach"], inner, (*where, "foreach"), depth + 1, [*outer, index])
        else:
            body = _json_patch(entry["patchesJson6902"], inner, (*where, "patchesJson6902"))
        indexes = f"lists.range(size({cel.paren(source)}))"
        if entry.get("order") == "Descending":
            indexes += ".reverse()"
        selected = f"{indexes}.filter({index}, {cel.and_([f'{element} != null', condition])})" \
            if condition != cel.TRUE else f"{indexes}.filter({index}, {element} != null)"
        lists.append(f"{selected}.map({index}, {body}).flatten()")
    return " + ".join(lists)


def _element_merge(entry: dict, names: Names, path: tuple, spec: MutateSpec) -> None:
    """A strategic merge patch per element of the walked list, aimed at that very item by its name (the walked
    list may join a Pod's container lists, whose names are unique across them), and patch parts that do not
    depend on the element, merged once when some element is patched."""
    import copy

    from assertree.migrate.convert.jmespath import Expr

    walked = str(entry.get("list") or "").strip()
    patch = entry["patchStrategicMerge"]
    where = (*path, "patchStrategicMerge")
    lists = _walked_lists(walked)
    targets = [steps for steps in lists if _item_at(patch, steps) is not None]
    if len(targets) > 1 or (targets and _anchored_below(_item_at(patch, targets[0]) or {})):
        _items_merge(entry, names, path, spec, lists, targets)
        return
    if len(targets) != 1 or (len(lists) > 1 and targets[0][-1] not in _CONTAINER_LISTS):
        raise NotConvertible("a foreach strategic merge patch that does not patch the walked list's own item", where)
    steps = targets[0]
    item = dict(_item_at(patch, steps) or {})
    selector = item.pop("(name)", item.get("name"))
    if selector not in ("{{element.name}}", "{{ element.name }}"):
        raise NotConvertible("a foreach strategic merge patch whose item is not the element (name: "
                             "'{{ element.name }}')", where)
    item.pop("name", None)
    if entry.get("context"):
        raise NotConvertible("context entries inside a mutate foreach", (*path, "context"))
    if len(lists) > 1 and "elementIndex" in str(entry):
        raise NotConvertible("elementIndex in a foreach over joined lists", path)
    rest = copy.deepcopy(patch)
    _remove(rest, steps)
    if "{{" in str(rest):
        raise NotConvertible("a foreach strategic merge patch whose other parts depend on the element", where)
    variable = "element"
    inner = names.bind("element", Expr(variable, "map")).walking(variable, f"request.object.{'.'.join(steps)}")
    builder = _Builder(inner, where)
    list_type = "Object." + ".".join(steps)
    built = builder.map(item, variable, list_type, ())
    if built.conditions or builder.global_conditions:
        raise NotConvertible("anchored conditions inside a foreach strategic merge patch", path)
    condition = cel.TRUE
    if entry.get("preconditions") is not None:
        condition = block_test(entry["preconditions"], inner.lenient(), (*path, "preconditions"))
    current = "object." + ".".join(steps)
    present = cel.and_([f"has(object.{'.'.join(steps[:depth])})" for depth in range(1, len(steps) + 1)])
    applies = cel.and_([present, f"{current}.exists({variable}, {condition})"])
    selected = f"{current}.filter({variable}, {cel.and_([condition, built.changes])})"
    entry_text = built.text.replace(f"{list_type}{{", f"{list_type}{{name: {variable}.name, ", 1)
    changes = [cel.and_([present, f"{current}.exists({variable}, {cel.and_([condition, built.changes])})"])]
    body = f"{selected}.map({variable}, {entry_text})"
    for depth in range(len(steps) - 1, -1, -1):
        prefix = "Object" + "".join("." + step for step in steps[:depth])
        body = f"{prefix}{{{steps[depth]}: {body}}}"
    if rest:
        mutation, once = _once(rest, names, where, applies)
        spec.mutations.append(mutation)
        changes.append(cel.and_([applies, once]))
    spec.match_conditions.append({"name": "changes-something", "expression": cel.or_(changes)})
    spec.mutations.append({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": body}})


def _once(rest: dict, names: Names, where: tuple, applies: str) -> tuple[dict, str]:
    """The parts of a foreach strategic merge patch that do not depend on the element, as one mutation applied
    where `applies` (some element is patched), and CEL: applying them changes the resource."""
    from assertree.migrate.convert.merge import guarded

    constant = _Builder(names, where)
    once = constant.map(rest, "object", "Object", (), root=True)
    if once.conditions or constant.global_conditions:
        raise NotConvertible("anchored conditions in the parts of a foreach strategic merge patch that do not "
                             "depend on the element", where)
    mutation = guarded({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": once.text}},
                       applies, lambda text: text)
    if mutation is None:
        raise NotConvertible("a foreach strategic merge patch part with nothing empty to give", where)
    return mutation, once.changes


def _anchored_below(item: dict) -> bool:
    """Whether a patch list item holds anchors other than its ``(name)`` (conditions on the item's fields)."""
    def anchored(node: Any) -> bool:
        if isinstance(node, dict):
            return any(parse_anchor(str(key).strip()).kind not in (None, AnchorKind.ADD_IF_NOT_PRESENT)
                       or anchored(value) for key, value in node.items())
        return isinstance(node, list) and any(anchored(value) for value in node)

    return anchored({key: value for key, value in item.items() if key != "(name)"})


def _items_merge(entry: dict, names: Names, path: tuple, spec: MutateSpec, lists: list[list[str]],
                 targets: list[list[str]]) -> None:
    """A foreach strategic merge patch whose items are the walked lists' own (``(name): '{{ element.name }}'``),
    in one or several of the lists it walks (a Pod's container lists, whose names are unique across them), their
    fields under conditions of their own: each element patches its own item and no other, so the elements in
    turn make what one patch of every item that meets the conditions (and the foreach's preconditions, read on
    the item, which is the element) makes at once. The patch's parts outside the items, which Kyverno applies
    for each element, are applied once when some element meets the preconditions."""
    import copy

    from assertree.migrate.convert.jmespath import Expr

    patch = entry["patchStrategicMerge"]
    where = (*path, "patchStrategicMerge")
    if entry.get("context"):
        raise NotConvertible("context entries inside a mutate foreach", (*path, "context"))
    if len(lists) > 1 and any(steps[-1] not in _CONTAINER_LISTS for steps in lists):
        raise NotConvertible("a foreach strategic merge over joined lists other than a Pod's container lists "
                             "(whose names are unique across them)", where)
    items = copy.deepcopy(patch)
    rest = copy.deepcopy(patch)
    for steps in targets:
        item = _item_at(items, steps)
        assert item is not None
        if str(item.get("(name)", "")).replace(" ", "") != "{{element.name}}":
            raise NotConvertible("a foreach strategic merge patch whose item is not the element (name: "
                                 "'{{ element.name }}')", where)
        item["(name)"] = "*"  # every item of the list is an element
        _remove(rest, steps)
    if "{{" in str(items) or "{{" in str(rest):
        raise NotConvertible("a foreach strategic merge patch with variables besides the item's name", where)

    def meets(variable: str) -> str:
        if entry.get("preconditions") is None:
            return cel.TRUE
        inner = names.bind("element", Expr(variable, "map"))
        return block_test(entry["preconditions"], inner.lenient(), (*path, "preconditions"))

    walked = [(f"object.{'.'.join(steps)}", cel.and_([f"has(object.{'.'.join(steps[:depth])})"
                                                      for depth in range(1, len(steps) + 1)])) for steps in lists]
    applies = cel.or_(cel.and_([present, f"{current}.exists(element, {meets('element')})"])
                      for current, present in walked)
    for steps in lists:
        if steps not in targets:
            _remove(items, steps)
    builder = _Builder(names, where, {tuple(steps): meets for steps in targets})
    built = builder.map(items, "object", "Object", (), root=True)
    if built.conditions or builder.global_conditions:
        raise NotConvertible("anchored conditions outside the items of a foreach strategic merge patch", where)
    changes = [built.changes]
    spec.mutations.append({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": built.text}})
    if rest:
        mutation, once = _once(rest, names, where, applies)
        spec.mutations.insert(0, mutation)
        changes.append(once)
    # no element meets the preconditions (the lists are empty or missing): Kyverno patches nothing
    spec.match_conditions.append({"name": "changes-something", "expression": cel.and_([applies, cel.or_(changes)])})


_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _walked_lists(text: str) -> list[list[str]]:
    """The resource's lists a foreach walks: ``request.object.spec.containers``, or several joined
    (``request.object.spec.[initContainers, containers][]``)."""
    text = text.strip()
    if not text.startswith("request.object."):
        return []
    rest = text.removeprefix("request.object.")
    name = r"[A-Za-z_][A-Za-z0-9_]*"
    joined = re.fullmatch(rf"((?:{name}\.)*)\[\s*({name}(?:\s*,\s*{name})*)\s*\]\[\]", rest)
    if joined:
        prefix = [step for step in joined.group(1).split(".") if step]
        return [[*prefix, name.strip()] for name in joined.group(2).split(",")]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", rest):
        return [rest.split(".")]
    return []


def _item_at(patch: Any, steps: list[str]) -> dict | None:
    """The one map item of the list at `steps` in `patch`, if that is what is there."""
    for step in steps:
        patch = patch.get(step) if isinstance(patch, dict) else None
    if isinstance(patch, list) and len(patch) == 1 and isinstance(patch[0], dict):
        return patch[0]
    return None


def _remove(patch: dict, steps: list[str]) -> None:
    """`patch` without the path `steps`, and without the maps that leaves empty."""
    if len(steps) == 1:
        patch.pop(steps[0], None)
        return
    child = patch.get(steps[0])
    if isinstance(child, dict):
        _remove(child, steps[1:])
        if not child:
            patch.pop(steps[0])


def _only_keys(patch: Any, steps: list[str]) -> bool:
    """Whether `patch` holds nothing but the path `steps` (one key per level)."""
    for step in steps:
        if not isinstance(patch, dict) or list(patch) != [step]:
            return False
        patch = patch[step]
    return True
