"""Kyverno's ``{{ }}`` JMESPath expressions as CEL.

The expression is parsed with assertree's own JMESPath parser
(`assertree.jp.parser`) and its tree translated node by node. Variables map
to CEL's (`Names`): ``request.object`` is ``object``, ``request.oldObject``
``oldObject``, ``request.operation``/``namespace``/``name``/``userInfo``/
``kind`` are ``request``'s fields, a foreach ``element``/``elementIndex`` the
comprehension's variables, a context ``variable`` entry ``variables.<name>``
(or its text inlined, inside a foreach).

Missing fields follow Kyverno's JMESPath fork: along a plain chain
(``request.object.spec.x``) a missing key is an error (Kyverno fails the rule:
so does CEL reading ``object.spec.x``), while inside projections, filters,
function arguments and on the left of ``||`` it is null: there fields are
read as CEL optionals (``object.?spec.?x``). ``a || b`` keeps ``a`` when it
is truthy in JMESPath's sense (not null, false, empty text, list or map).
Functions with a CEL equivalent are translated (`FUNCTIONS`); any other
function, and forms CEL cannot say, raise `NotConvertible` naming them.

Known differences, which the migration's proof measures rather than assumes
away: a field that is null where a chain reads inside it (JMESPath gives
null, CEL an error), ``to_number`` of a text that is no number (null against
an error), and a projection over a missing list (null against ``[]``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from assertree.jp.ast import Node
from assertree.migrate.convert import cel
from assertree.migrate.convert.images import PARTS, containers, image_part
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["NO_DEFAULT", "Expr", "Names", "maps_equal", "translate", "translate_template", "translate_with_default",
           "truthy"]

_SPINE = frozenset({"field", "subexpression", "index_expression", "and_expression"})


@dataclass(frozen=True)
class Expr:
    """A translated expression: CEL `text`, what it holds (`kind`: ``list``, ``string``, ``number``,
    ``bool``, ``map``, ``null`` or ``any``), and whether `text` is a CEL optional still to be unwrapped."""

    text: str
    kind: str = "any"
    optional: bool = False
    suffix: str = ""  # list steps (``.map(...)``) still to apply to an optional list, when it is there
    items: str = "any"  # for a list: what its items hold, when known
    entries: tuple[tuple[str, str], ...] | None = None  # a map's keys known here, each with its value's CEL

    def value(self, default: str = "null") -> str:
        """The CEL value (an optional unwrapped to `default` when empty). A projection over a list that may
        be missing is null in JMESPath, so its steps run inside ``optMap`` unless the default is ``[]``,
        where the plain chain says the same."""
        if self.kind == "merged":
            raise NotConvertible("the map merge() builds is only compared (Equals, NotEquals) or read by key here: "
                                 "CEL cannot build a map from another's keys")
        if not self.optional:
            return self.text
        if not self.suffix:
            if default == "null" and self.text.endswith("]"):
                default = "dyn(null)"  # a typed item's optional (``split(...)[?1]``) takes a null default so
            if default in ("[]", "{}"):
                return cel.or_empty(self.text, default)
            return f"{self.text}.orValue({default})"
        if default == "[]":
            return f"{cel.or_empty(self.text, '[]')}{self.suffix}"
        return f"{cel.not_null(self.text)}.optMap(items, dyn(items{self.suffix})).orValue({default})"

    def then(self, step: str) -> Expr:
        """This list with one more method step (``.map(...)``, ``.filter(...)``)."""
        if self.optional:
            return Expr(self.text, "list", True, self.suffix + step)
        return Expr(self.text + step, "list")


@dataclass
class Names:
    """What the names of an expression stand for in CEL: roots (``request.object`` -> ``object``) and
    variables (``element``, a context entry); each an `Expr`. `refused` names variables that exist in
    Kyverno but have no CEL counterpart here, with the reason."""

    roots: dict[str, Expr] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    lenient_chains: bool = False  # read every chain as optional (a missing field is null, not an error)
    pod_spec: str | None = None  # where Kyverno's ``images`` finds the Pod spec (None: not for these kinds)
    walked: dict[str, str] = field(default_factory=dict)  # a foreach element's CEL -> the containers it walks

    @classmethod
    def request(cls) -> Names:
        names = cls()
        names.roots.update({
            "request.object": Expr("object", "map"),
            "request.oldObject": Expr("oldObject", "map"),
            "request.operation": Expr("request.operation", "string"),
            "request.namespace": Expr("request.namespace", "string"),
            "request.name": Expr("request.name", "string"),
            "request.userInfo": Expr("request.userInfo", "map"),
            "request.kind": Expr("request.kind", "map"),
            "request.subResource": Expr("request.subResource", "string"),
            "request.dryRun": Expr("request.dryRun", "bool"),
        })
        names.refused.update({
            "request.roles": "an admission request carries no roles for CEL to read",
            "request.clusterRoles": "an admission request carries no cluster roles for CEL to read",
        })
        # Kyverno's service account of the requester: the user name cut after "system:serviceaccount:"
        user = "request.userInfo.?username.orValue('')"
        rest = f"{user}.substring(22).split(':')"
        known = f"size({user}) > 22 && size({rest}) >= 2"
        names.roots["serviceAccountName"] = Expr(f"({known} ? {rest}[1] : '')", "string")
        names.roots["serviceAccountNamespace"] = Expr(f"({known} ? {rest}[0] : '')", "string")
        return names

    def bind(self, name: str, expr: Expr) -> Names:
        """These names, with `name` standing for `expr` (a foreach element, a context entry)."""
        return Names({**self.roots, name: expr}, dict(self.refused), self.lenient_chains, self.pod_spec,
                     dict(self.walked))

    def lenient(self) -> Names:
        """These names, with chains read as optionals."""
        return Names(dict(self.roots), dict(self.refused), True, self.pod_spec, dict(self.walked))

    def for_images(self, pod_spec: str | None) -> Names:
        """These names, with Kyverno's ``images`` read from the Pod spec at `pod_spec`."""
        return Names(dict(self.roots), dict(self.refused), self.lenient_chains, pod_spec, dict(self.walked))

    def walking(self, element: str, list_text: str) -> Names:
        """These names, knowing that the foreach element `element` (CEL) is an item of the list the JMESPath
        `list_text` reads, when that is a list of containers of the Pod spec (``images`` by the element's
        name is then the element's own image)."""
        if self.pod_spec is None:
            return self
        spec = "request." + self.pod_spec  # object.spec... as Kyverno writes it
        found = re.fullmatch(rf"\s*{re.escape(spec)}\.(containers|initContainers|ephemeralContainers)(\[\])?\s*",
                             list_text)
        if found is None:
            return self
        return Names(dict(self.roots), dict(self.refused), self.lenient_chains, self.pod_spec,
                     {**self.walked, element: found.group(1)})


def translate(expression: str, names: Names) -> Expr:
    """The CEL of one Kyverno JMESPath `expression` (the text inside ``{{ }}``)."""
    tree, translator = _parsed(expression, names)
    return translator.whole(translator.node(tree, None, strict=tree.type in _SPINE and not names.lenient_chains))


def translate_with_default(expression: str, names: Names) -> tuple[Expr, Any]:
    """`expression` as (the CEL of its value, the literal after ``||``) when it is ``x || <literal>``, else
    (the CEL of the whole, `NO_DEFAULT`): conditions decide what the default means for their operator."""
    tree, translator = _parsed(expression, names)
    if tree.type == "or_expression" and tree.children[1].type == "literal":
        return translator.whole(translator.node(tree.children[0], None, strict=False)), tree.children[1].value
    return translator.whole(translator.node(tree, None, strict=tree.type in _SPINE and not names.lenient_chains)), \
        NO_DEFAULT


NO_DEFAULT = object()
"""What `translate_with_default` gives when the expression has no ``|| <literal>``."""


def _parsed(expression: str, names: Names) -> tuple[Node, _Translator]:
    """The parse tree of `expression` and its translator; a variable nested in a quoted string
    (``regex_match('^x$', '{{ request.object.spec.schedule }}')``, which Kyverno substitutes into the text
    first) stands for the inner expression's value."""
    from assertree.jp.errors import JMESPathError
    from assertree.jp.parser import parse

    text = expression.strip()
    inner: dict[str, Expr] = {}

    def placeholder(found: re.Match) -> str:
        key = f"__assertree_nested_{len(inner)}__"
        value = translate(found.group(1), names)
        inner[key] = value if value.kind == "string" else Expr(f"string({value.value()})", "string")
        return f"'{key}'"

    def identifier(found: re.Match) -> str:
        key = f"__assertree_nested_{len(inner)}__"
        value = translate(found.group(1), names)
        inner[key] = value if value.kind == "string" else Expr(f"string({value.value()})", "string")
        return f'"{key}"'

    def bare(found: re.Match) -> str:
        # Kyverno writes the value into the text, where it must read as an identifier (a JMESPath parse error
        # otherwise: so the CEL fails too)
        key = f"__assertree_nested_{len(inner)}__"
        value = translate(found.group(1), names)
        text = value.value() if value.kind == "string" else f"string({value.value()})"
        inner[key] = Expr(cel.ternary(f"{cel.paren(text)}.matches({cel.string(_IDENTIFIER_TEXT)})", text,
                                      f"dyn({{}}[{cel.string('not an identifier in ' + expression.strip())}])"),
                          "string")
        return f'."{key}"'

    text = re.sub(r"'\{\{-?\s*((?:(?!\}\}).)*?)\s*\}\}'", placeholder, text)
    text = re.sub(r'"\{\{-?\s*((?:(?!\}\}).)*?)\s*\}\}"', identifier, text)  # a field named by a variable
    text = re.sub(r"\.\{\{-?\s*((?:(?!\}\}).)*?)\s*\}\}", bare, text)  # ... and written into the path
    if "{{" in text:
        raise NotConvertible(f"{{{{ {text} }}}}: a variable nested inside another's name")
    try:
        tree = parse(text)
    except JMESPathError as error:
        raise NotConvertible(f"the expression {text!r} does not parse: {error}") from None
    translator = _Translator(names, text)
    translator.nested = inner
    return tree, translator


def translate_template(text: str, names: Names, *, as_text: bool = False, message: bool = False) -> Expr:
    """A string with ``{{ }}`` variables as CEL: the variable's own value when the string is exactly one
    variable (Kyverno keeps its type) and not `as_text`, else the text with each variable rendered as a
    string (a list or map, which Kyverno renders as JSON, is refused). A `message` never fails: a missing
    value is written as nothing."""
    from assertree.languages.kyverno.substitution import has_markers

    if not isinstance(text, str) or not has_markers(text):
        return Expr(cel.literal(text), "string")
    pieces = _template_pieces(text)
    if len(pieces) == 1 and isinstance(pieces[0], tuple) and not as_text:
        return translate(pieces[0][0], names)
    parts = []
    for piece in pieces:
        if isinstance(piece, str):
            if piece:
                parts.append(cel.string(piece))
            continue
        value = translate(piece[0], names.lenient() if message else names)
        if value.kind in ("list", "map"):
            raise NotConvertible(f"{{{{ {piece[0].strip()} }}}} is a list or map, which Kyverno writes as JSON")
        if message:
            found = value.value()
            parts.append(f"(dyn({found}) == null ? '' : string({found}))")
            continue
        parts.append(value.value() if value.kind == "string" else f"string({value.value()})")
    return Expr(" + ".join(parts) if parts else "''", "string")


def _template_pieces(text: str) -> list[str | tuple[str]]:
    """`text` cut into literal strings and ``(expression,)`` for each ``{{ expression }}``."""
    pieces: list[str | tuple[str]] = []
    position = 0
    while True:
        start = text.find("{{", position)
        if start < 0:
            pieces.append(text[position:])
            return [piece for piece in pieces if piece != ""]
        if start > 0 and text[start - 1] == "\\":
            raise NotConvertible("an escaped \\{{ in a variable text")
        end = _closing(text, start)
        if end < 0:
            raise NotConvertible("a {{ without its }}")
        inner = text[start + 2:end]
        pieces.append(text[position:start])
        pieces.append((inner.lstrip("-"),))
        position = end + 2


def _closing(text: str, start: int) -> int:
    """The index of the ``}}`` that closes the ``{{`` at `start` (nested pairs counted)."""
    depth = 0
    position = start
    while position < len(text) - 1:
        if text.startswith("{{", position):
            depth += 1
            position += 2
            continue
        if text.startswith("}}", position):
            depth -= 1
            if depth == 0:
                return position
            position += 2
            continue
        position += 1
    return -1


def truthy(expr: Expr) -> str:
    """JMESPath truthiness of `expr` as a CEL boolean (not null, false, '', [] or {})."""
    if expr.optional and expr.kind in _FALSY:  # missing is falsy: read it as its kind's falsy value
        return truthy(Expr(expr.value(_FALSY[expr.kind]), expr.kind))
    value = expr.value()
    if expr.kind == "bool":
        return value
    if expr.kind == "string":
        return f"{cel.paren(value)} != ''"
    if expr.kind in ("list", "map"):
        return f"size({value}) > 0"
    if expr.kind == "number":
        return f"{cel.paren(value)} != null"
    if expr.kind == "null":
        return cel.FALSE
    return f"!({cel.paren(value)} in [dyn(null), dyn(false), dyn(''), dyn([]), dyn({{}})])"


class _Translator:
    def __init__(self, names: Names, text: str) -> None:
        self.names = names
        self.text = text
        self.depth = 0
        self.nested: dict[str, Expr] = {}

    def refuse(self, why: str) -> NotConvertible:
        return NotConvertible(f"{{{{ {self.text} }}}}: {why}")

    def whole(self, expr: Expr) -> Expr:
        """`expr` as a value of its own (a part of ``images`` that is only a step on the way is refused)."""
        if expr.kind in _IMAGE_STEPS:
            raise self.refuse("a whole map of Kyverno's `images` variable has no CEL value here (read one field "
                              f"of an image: {', '.join(PARTS)})")
        return expr

    def variable(self) -> str:
        self.depth += 1
        return "item" if self.depth == 1 else f"item{self.depth}"

    # -- nodes ------------------------------------------------------------------------------------

    def node(self, node: Node, current: Expr | None, *, strict: bool) -> Expr:
        handler = getattr(self, f"_{node.type}", None)
        if handler is None:
            raise self.refuse(f"the JMESPath form {node.type!r} has no CEL translation here")
        return handler(node, current, strict)

    def _root_chain(self, node: Node) -> list[str] | None:
        """The names of a chain of plain fields (``request.object.spec``), else None."""
        if node.type == "field":
            return [str(node.value)]
        if node.type == "subexpression" and node.children[1].type == "field":
            left = self._root_chain(node.children[0])
            return None if left is None else [*left, str(node.children[1].value)]
        return None

    def _resolve(self, chain: list[str], strict: bool) -> Expr:
        if chain[0] == "images" and "images" not in self.names.roots:
            return self._images(chain, strict)
        if chain[0] == "":  # `x || ""`: a field named "" (a quoted identifier, not a text) is null
            return Expr("null", "null")
        for length in range(len(chain), 0, -1):
            name = ".".join(chain[:length])
            if name in self.names.refused:
                raise self.refuse(self.names.refused[name])
            if name in self.names.roots:
                found = self.names.roots[name]
                rest = chain[length:]
                if found.text in ("object", "oldObject") and rest and rest[0] in ("spec", "metadata") and \
                        f"{name}.{rest[0]}" not in self.text:
                    # written so that Kyverno's autogen text replacement misses it (request."object".metadata):
                    # the controller's own field, which CEL's autogen must not move under the template either
                    found = Expr(f"{found.text}[{cel.string(rest[0])}]")
                    rest = rest[1:]
                for step in rest:
                    found = self.select(found, step, strict)
                return found
        raise self.refuse(f"the variable {chain[0]!r} is not known here (a context entry that was not "
                          "converted, or a name Kyverno does not define)")

    def _images(self, chain: list[str], strict: bool) -> Expr:
        """Kyverno's ``images.<kind>...`` (see `images`)."""
        if self.names.pod_spec is None:
            raise self.refuse("Kyverno's `images` variable reads the Pod spec of Pods and Pod controllers; this "
                              "rule matches kinds whose Pod spec is not in one place")
        if len(chain) < 2:
            raise self.refuse("the whole of Kyverno's `images` variable has no CEL value here")
        try:
            found = Expr(containers(self.names.pod_spec, chain[1]), "images", items=chain[1])
        except NotConvertible as refusal:
            raise self.refuse(refusal.why) from None
        for step in chain[2:]:
            found = self.select(found, step, strict)
        return found

    def select(self, base: Expr, name: str, strict: bool) -> Expr:
        if base.kind == "merged" or base.entries is not None:  # a key merge() or a hash set, else the map's
            given = dict(base.entries or ())
            if name in given:
                return Expr(given[name])
            if base.kind != "merged":
                return Expr("null", "null")
            return Expr(_optional_select(base.text, name), optional=True)
        if base.kind == "images":  # one container's image, by the container's name
            key = self.nested[name].value() if name in self.nested else cel.string(name)
            for element, kind in self.names.walked.items():
                own_name = rf"(string\()?{re.escape(element)}\.(\?name\.orValue\(null\)|name)\)?"
                if base.items == kind and re.fullmatch(own_name, key):
                    return Expr(f"{element}.image", "imageref")  # the walked container itself
            return Expr(f"{base.text}.filter(container, container.name == {key})", "image")
        if base.kind == "imageref":
            if name not in PARTS:
                raise self.refuse(f"the image field {name!r} of Kyverno's `images` variable has no CEL form here")
            part = image_part(base.text, name)
            if strict and name in ("tag", "digest"):  # Kyverno: a variable that resolves to nothing is an error
                return Expr(f"(dyn({part}) != null ? {part} : dyn({{}}[{cel.string(f'no {name} in the image')}]))",
                            "string")
            return Expr(part)
        if base.kind == "image":
            if name not in PARTS:
                raise self.refuse(f"the image field {name!r} of Kyverno's `images` variable has no CEL form here")
            values = f"{base.text}.map(container, {image_part('container.image', name)})"
            if strict:  # Kyverno: a variable that resolves to nothing (no such container, no tag) is an error
                return Expr(f"{values}.filter(value, dyn(value) != null)[0]")
            return Expr(f"{values}[?0]", optional=True)
        if name in self.nested:  # a field named by a variable
            key = self.nested[name].value()
            if base.suffix:
                return Expr("null", "null")
            return Expr(f"{base.text}[?{key}]", optional=True)
        if base.suffix:  # a field of a list is null in JMESPath
            return Expr("null", "null")
        if base.text in ("object", "oldObject") and name in ("spec", "metadata") and not base.optional:
            # always written `object.spec`: Kyverno's CEL autogen moves exactly that text under the template
            return Expr(cel.select(base.text, name))
        if base.text in ("object.metadata", "oldObject.metadata") and name in ("labels", "annotations") and \
                not base.optional and not strict:
            # `object.metadata.labels` as written, which the autogen of a MutatingPolicy moves too
            field_text = f"{base.text}.{name}"
            return Expr(f"(has({field_text}) ? optional.of({field_text}) : optional.none())", "map", optional=True)
        if base.optional:
            return Expr(_optional_select(base.text, name), optional=True)
        if strict:
            return Expr(cel.select(base.text, name))
        return Expr(_optional_select(base.text, name), optional=True)

    def _field(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        if current is None:
            return self._resolve([str(node.value)], strict)
        return self.select(current, str(node.value), strict)

    def _subexpression(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        if current is None:
            chain = self._root_chain(node)
            if chain is not None:
                return self._resolve(chain, strict)
        left = self.node(node.children[0], current, strict=strict)
        right = node.children[1]
        if left.optional and right.type not in ("field", "index"):
            # JMESPath gives null for anything read from a null: the right side runs only on a value
            name = self.variable()
            try:
                inner = self.node(right, Expr(name, left.kind), strict=strict)
            finally:
                self.depth -= 1
            return Expr(f"{_optional_of(left)}.optMap({name}, dyn({inner.value()}))", inner.kind, True)
        return self.node(right, left, strict=strict)

    def _index_expression(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self.node(node.children[0], current, strict=strict)
        return self.node(node.children[1], left, strict=strict)

    def _index(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        if current is None:
            raise self.refuse("an index with nothing to index")
        position = int(node.value)
        if position < 0:
            raise self.refuse("a negative index")
        return Expr(f"{current.text}[?{position}]", optional=True)

    def _current(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        if current is None:
            raise self.refuse("`@` at the top of a variable reads the value at the same place in the "
                              "resource, which CEL cannot point at")
        return current

    _identity = _current

    def _literal(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        if isinstance(node.value, str) and node.value in self.nested:
            return self.nested[node.value]
        if isinstance(node.value, dict):
            return replace(Expr(cel.literal(node.value), "map"),
                           entries=tuple((str(key), f"dyn({cel.literal(item)})") for key, item in node.value.items()))
        return Expr(cel.literal(node.value), _kind_of(node.value))

    def _list_of(self, node: Node, current: Expr | None) -> Expr:
        """The left side of a projection, as a list (which may be missing: then the projection is null)."""
        value = self.node(node, current, strict=False)
        if value.kind not in ("list", "any"):
            raise self.refuse("a projection over something that is no list")
        if value.optional:
            return Expr(value.text, "list", True, value.suffix)
        return Expr(value.text, "list")

    def _flatten(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        inner = node.children[0]
        value = self._list_of(inner, current)
        if _yields_lists(inner):  # JMESPath keeps no null a missing field gave
            return value.then(".flatten().filter(item, item != null)")
        return value

    def _projection(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self._list_of(node.children[0], current)
        right = node.children[1]
        if right.type == "identity":
            return left
        name = self.variable()
        try:
            mapped = self.node(right, Expr(name, "map"), strict=False)
        finally:
            self.depth -= 1
        return left.then(_mapped("", name, mapped))

    def _filter_projection(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self._list_of(node.children[0], current)
        name = self.variable()
        try:
            condition = self.node(node.children[2], Expr(name, "map"), strict=False)
            right = node.children[1]
            filtered = left.then(f".filter({name}, {truthy(condition)})")
            if right.type == "identity":
                return filtered
            mapped = self.node(right, Expr(name, "map"), strict=False)
        finally:
            self.depth -= 1
        return filtered.then(_mapped("", name, mapped))

    def _value_projection(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self.node(node.children[0], current, strict=False)
        if left.kind == "images":  # images.containers.*.<field>: that field of every container's image
            right = node.children[1]
            if right.type != "field" or str(right.value) not in PARTS:
                raise self.refuse("Kyverno's `images` projected to something other than one image field "
                                  f"({', '.join(PARTS)})")
            part = str(right.value)
            values = f"{left.text}.map(container, {image_part('container.image', part)})"
            if part in ("tag", "digest"):
                values += ".filter(value, value != null)"
            return Expr(values, "list", items="string")
        source = left.value("{}")
        name = self.variable()
        try:
            values = f"{source}.map({name}, {source}[{name}])"
            right = node.children[1]
            if right.type == "identity":
                return Expr(values, "list")
            mapped = self.node(right, Expr(name, "map"), strict=False)
        finally:
            self.depth -= 1
        return Expr(_mapped(values, name, mapped), "list")

    def _or_expression(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self.node(node.children[0], current, strict=False)
        right = self.node(node.children[1], current, strict=False)
        if left.kind == "bool" and right.kind == "bool":
            return Expr(cel.or_([left.value(), right.value()]), "bool")
        if left.kind != "any" and right.text == _FALSY.get(left.kind):
            return Expr(left.value(right.text), left.kind)  # a falsy left is the right's value anyway
        kind = _join_kinds(left, right)
        value, other = left.value(), right.value()
        if kind == "any":
            value, other = f"dyn({value})", f"dyn({other})"
        return Expr(cel.ternary(truthy(left), value, other), kind)

    def _and_expression(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self.node(node.children[0], current, strict=False)
        right = self.node(node.children[1], current, strict=strict)
        if left.kind == "bool" and right.kind == "bool":
            return Expr(cel.and_([left.value(), right.value()]), "bool")
        return Expr(cel.ternary(truthy(left), right.value(), left.value()), "any")

    def _not_expression(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        inner = self.node(node.children[0], current, strict=False)
        return Expr(cel.not_(truthy(inner)), "bool")

    def _comparator(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self.node(node.children[0], current, strict=False)
        right = self.node(node.children[1], current, strict=False)
        return Expr(f"{cel.paren(left.value())} {node.value} {cel.paren(right.value())}", "bool")

    def _pipe(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        left = self.node(node.children[0], current, strict=False)
        if left.optional:
            left = Expr(left.value(), left.kind)
        return self.node(node.children[1], left, strict=False)

    def _multi_select_list(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        items = [self.node(child, current, strict=False) for child in node.children]
        kinds = {item.kind for item in items}
        texts = [item.value() for item in items]
        if len(kinds) > 1 or "any" in kinds:
            texts = [f"dyn({text})" for text in texts]
        return Expr("[" + ", ".join(texts) + "]", "list", items=kinds.pop() if len(kinds) == 1 else "any")

    def _multi_select_dict(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        """``{key: expression, ...}``: a map literal whose keys are known here (`Expr.entries`)."""
        if current is not None and current.optional:
            raise self.refuse("a multi-select hash over a value that may be missing (JMESPath gives null there)")
        entries = {str(pair.value): f"dyn({self.node(pair.children[0], current, strict=False).value()})"
                   for pair in node.children}
        return _map_of(entries)

    def _merge(self, node: Node, current: Expr | None) -> Expr:
        """``merge(m, {k: v, ...}, ...)``: later maps' keys replace earlier ones'. CEL cannot build a map from
        another's keys, so when the first map's keys are only known at run time the result is kept as that map
        plus the replaced keys (kind ``merged``): compared key by key (`maps_equal`) or read by key."""
        if not node.children:
            raise self.refuse("merge() takes at least one map")
        args = [self.node(child, current, strict=False) for child in node.children]
        first, rest = args[0], args[1:]
        if any(arg.kind not in ("map", "merged") for arg in args):
            raise self.refuse("merge() of something that may not be a map (JMESPath refuses it, CEL could not say so)")
        if any(arg.entries is None for arg in rest):
            raise self.refuse("merge() of a second map whose keys are only known at run time (CEL cannot build "
                              "a map from another's keys)")
        entries: dict[str, str] = dict(first.entries or ())
        for arg in rest:
            entries.update(arg.entries or ())
        if first.kind != "merged" and first.entries is not None:
            return _map_of(entries)
        base = first.text if first.kind == "merged" else first.value()
        return Expr(base, "merged", entries=tuple(entries.items()))

    def _function_expression(self, node: Node, current: Expr | None, strict: bool) -> Expr:
        name = str(node.value)
        if name == "merge":
            return self._merge(node, current)
        translate_function = FUNCTIONS.get(name)
        if translate_function is None:
            raise self.refuse(f"the JMESPath function {name}() has no CEL equivalent here")
        args = [self.whole(self.node(child, current, strict=False)) for child in node.children]
        return translate_function(self, [Expr(arg.value(), arg.kind, items=arg.items) for arg in args])


def _map_of(entries: dict[str, str]) -> Expr:
    """A CEL map literal of `entries` (key -> value CEL), knowing its keys."""
    text = "{" + ", ".join(f"{cel.string(key)}: {value}" for key, value in entries.items()) + "}"
    return Expr(text, "map", entries=tuple(entries.items()))


def maps_equal(left: Expr, right: Expr) -> str | None:
    """CEL: whether `left` and `right` are the same map, when one is a `merged` map (the other a map, or a
    value of unknown kind that must then be one); None when neither is. Key by key, since a merged map has no
    CEL value of its own: each key of one side is a key of the other, with an equal value. Each side's map and
    replaced keys are bound once (a one-item list's ``all``) before the keys are walked."""
    if "merged" not in (left.kind, right.kind):
        return None
    if any(side.kind not in ("map", "merged", "any") for side in (left, right)):
        return cel.FALSE  # a map is never equal to a text, number, list or null
    sides = []
    for name, side in (("A", left), ("B", right)):
        given = dict(side.entries or ()) if side.kind == "merged" else {}
        base = side.text if side.kind == "merged" else side.value()
        sides.append((f"map{name}", f"set{name}" if given else None, base, given, side.kind == "any"))

    def has(side: tuple) -> str:
        base, given = side[0], side[1]
        return f"(key in {given} || key in {base})" if given else f"key in {base}"

    def get(side: tuple) -> str:
        base, given = side[0], side[1]
        return f"(key in {given} ? {given}[key] : {base}[key])" if given else f"{base}[key]"

    (map_a, set_a, *_), (map_b, set_b, *_) = sides
    checks = [f"type({side[0]}) == map" for side in sides if side[4]]
    checks.append(f"{map_a}.all(key, " + (f"key in {set_a} || " if set_a else "")
                  + f"({has(sides[1])} && {map_a}[key] == {get(sides[1])}))")
    if set_a:
        checks.append(f"{set_a}.all(key, {has(sides[1])} && {set_a}[key] == {get(sides[1])})")
    checks.append(f"{map_b}.all(key, " + (f"key in {set_b} || " if set_b else "") + f"{has(sides[0])})")
    if set_b:
        checks.append(f"{set_b}.all(key, {has(sides[0])})")
    body = " && ".join(checks)
    for name, given_name, base, given, _any in reversed(sides):
        if given_name:
            body = f"[{_map_of(given).text}].all({given_name}, {body})"
        body = f"[{base}].all({name}, {body})"
    return body


def _optional_of(expr: Expr) -> str:
    """An optional expression's text as a CEL optional (its list steps applied inside)."""
    if not expr.suffix:
        return expr.text
    return f"{expr.text}.optMap(items, dyn(items{expr.suffix}))"


def _mapped(source: str, name: str, mapped: Expr) -> str:
    """``source.map(name, mapped)``, without the items JMESPath's projection drops (nulls) when there can
    be any."""
    out = f"{source}.map({name}, {mapped.value()})"
    if mapped.optional or mapped.kind in ("any", "null"):
        out += f".filter({name}, {name} != null)"
    return out


def _optional_select(base: str, name: str) -> str:
    selected = cel.select(base, name)
    if selected.endswith("]"):
        return f"{base}[?{cel.string(name)}]"
    return f"{base}.?{selected.rsplit('.', 1)[1]}"


_FALSY = {"string": "''", "list": "[]", "map": "{}", "bool": "false"}
_IDENTIFIER_TEXT = "^[A-Za-z_][A-Za-z0-9_]*$"  # what JMESPath reads as an unquoted identifier
_IMAGE_STEPS = ("images", "image", "imageref")


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "map"


def _join_kinds(left: Expr, right: Expr) -> str:
    if right.kind == "null":
        return left.kind
    return left.kind if left.kind == right.kind else "any"


def _yields_lists(node: Node) -> bool:
    """Whether a projection's left side gives a list of lists (``a[].b[]``, ``[x, y][]``)."""
    if node.type == "multi_select_list":
        return True
    if node.type == "subexpression":
        return _yields_lists(node.children[1])
    return node.type in ("projection", "filter_projection", "value_projection", "function_expression", "pipe")


# -- functions ---------------------------------------------------------------------------------------------

_FunctionTranslation = Callable[[_Translator, list[Expr]], Expr]


def _arity(translator: _Translator, name: str, args: list[Expr], count: int) -> None:
    if len(args) != count:
        raise translator.refuse(f"{name}() takes {count} argument(s)")


def _length(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "length", args, 1)
    return Expr(f"size({args[0].text})", "number")


def _contains(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "contains", args, 2)
    subject, search = args
    if subject.text.endswith(".map(key, key)"):  # contains(keys(m), k): the map's own key test
        return Expr(f"{search.text} in {subject.text.removesuffix('.map(key, key)')}", "bool")
    if subject.kind == "string":
        return Expr(f"{cel.paren(subject.text)}.contains({search.text})", "bool")
    if subject.kind == "list":
        return Expr(f"{search.text} in {cel.paren(subject.text)}", "bool")
    return Expr(f"type({subject.text}) == string ? {cel.paren(subject.text)}.contains({search.text}) : "
                f"{search.text} in {cel.paren(subject.text)}", "bool")


def _keys(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "keys", args, 1)
    return Expr(f"{cel.paren(args[0].text)}.map(key, key)", "list")


def _values(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "values", args, 1)
    source = cel.paren(args[0].text)
    return Expr(f"{source}.map(key, {source}[key])", "list")


def _method(name: str, method: str, kind: str, *, text: bool = False) -> _FunctionTranslation:
    def translate_function(t: _Translator, args: list[Expr]) -> Expr:
        _arity(t, name, args, 1)
        subject = args[0]
        target = subject.text if not text or subject.kind == "string" else f"string({subject.text})"
        return Expr(f"{cel.paren(target)}.{method}()", kind)

    return translate_function


def _to_string(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "to_string", args, 1)
    if args[0].kind == "string":
        return args[0]
    if args[0].kind in ("list", "map"):
        raise t.refuse("to_string() of a list or map gives JSON text, which CEL's string() does not write")
    if args[0].kind == "any":  # a list or map makes string() fail, where Kyverno writes JSON text
        value = cel.paren(args[0].text)
        return Expr(f"type({value}) == string ? {value} : ({value} == null ? 'null' : string({value}))", "string")
    return Expr(f"string({args[0].text})", "string")


_QUOTED = re.compile(r"^'((?:[^'\\]|\\.)*)'$")
_REGEX_SPECIAL = re.compile(r"[\\.^$|?*+()\[\]{}]")


def _regex_replace_all(t: _Translator, args: list[Expr]) -> Expr:
    """``regex_replace_all(regex, subject, replacement)`` for the regular expressions a string method says: a
    plain text (``replace``), or a plain text then ``.*`` replaced by nothing (the subject cut before it)."""
    _arity(t, "regex_replace_all", args, 3)
    regex, subject, replacement = args
    found, wanted = _QUOTED.match(regex.text), _QUOTED.match(replacement.text)
    if found is None or wanted is None or "\\" in regex.text or "$" in replacement.text:
        raise t.refuse("regex_replace_all() with a computed or escaped pattern or replacement has no CEL equivalent")
    pattern = found.group(1)
    text = cel.paren(subject.text if subject.kind == "string" else f"string({subject.text})")
    if not _REGEX_SPECIAL.search(pattern) and pattern:
        return Expr(f"{text}.replace({regex.text}, {replacement.text})", "string")
    head = pattern.removesuffix(".*")
    if pattern.endswith(".*") and head and not _REGEX_SPECIAL.search(head) and not wanted.group(1):
        literal = cel.string(head)
        return Expr(f"{text}.indexOf({literal}) >= 0 ? {text}.substring(0, {text}.indexOf({literal})) : {text}",
                    "string")
    raise t.refuse(f"regex_replace_all() with the regular expression {pattern!r} has no CEL equivalent "
                   "(CEL replaces plain text only)")


def _regex_match(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "regex_match", args, 2)
    pattern, subject = args
    target = subject.text if subject.kind == "string" else f"string({subject.text})"
    return Expr(f"{cel.paren(target)}.matches({pattern.text})", "bool")


def _two(name: str, build: Callable[[Expr, Expr], str], kind: str) -> _FunctionTranslation:
    def translate_function(t: _Translator, args: list[Expr]) -> Expr:
        _arity(t, name, args, 2)
        return Expr(build(args[0], args[1]), kind)

    return translate_function


def _to_number(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "to_number", args, 1)
    if args[0].kind == "number":
        return args[0]
    return Expr(f"double({args[0].text})", "number")


def _replace_all(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "replace_all", args, 3)
    return Expr(f"{cel.paren(args[0].text)}.replace({args[1].text}, {args[2].text})", "string")


def _to_array(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "to_array", args, 1)
    value = cel.paren(args[0].text)  # a list read from a missing field is null: [null]
    return Expr(f"type({value}) == list ? {value} : [{value}]", "list")


def _divide(t: _Translator, args: list[Expr]) -> Expr:
    """``divide(a, b)`` of numbers, or of two quantities (their ratio, a number); durations and mixed operands
    are refused at run time (CEL cannot divide them as Kyverno does)."""
    _arity(t, "divide", args, 2)
    left, right = (cel.paren(arg.text) for arg in args)
    if all(arg.kind == "number" for arg in args):
        return Expr(f"double({left}) / double({right})", "number")
    quantities = (f"quantity(string({left})).asApproximateFloat() / "
                  f"quantity(string({right})).asApproximateFloat()")
    return Expr(f"(type({left}) == string && type({right}) == string && isQuantity({left}) && isQuantity({right})) ? "
                f"{quantities} : double(dyn({left})) / double(dyn({right}))", "number")


def _lookup(t: _Translator, args: list[Expr]) -> Expr:
    _arity(t, "lookup", args, 2)
    return Expr(f"{cel.paren(args[0].text)}[?{args[1].text}]", optional=True)


FUNCTIONS: Mapping[str, _FunctionTranslation] = {
    "length": _length,
    "contains": _contains,
    "keys": _keys,
    "values": _values,
    "to_upper": _method("to_upper", "upperAscii", "string"),
    "to_lower": _method("to_lower", "lowerAscii", "string"),
    "upper": _method("upper", "upperAscii", "string"),
    "lower": _method("lower", "lowerAscii", "string"),
    "to_string": _to_string,
    "to_number": _to_number,
    "regex_match": _regex_match,
    "split": _two("split", lambda s, sep: f"{cel.paren(s.text)}.split({sep.text})", "list"),
    "join": _two("join", lambda sep, items: f"{cel.paren(items.text)}.join({sep.text})", "string"),
    "starts_with": _two("starts_with", lambda s, p: f"{cel.paren(s.text)}.startsWith({p.text})", "bool"),
    "ends_with": _two("ends_with", lambda s, p: f"{cel.paren(s.text)}.endsWith({p.text})", "bool"),
    "sort": _method("sort", "sort", "list"),
    "max": lambda t, args: copy_with(_method("max", "max", "any")(t, args), kind=args[0].items if args else "any"),
    "min": lambda t, args: copy_with(_method("min", "min", "any")(t, args), kind=args[0].items if args else "any"),
    "sum": _method("sum", "sum", "number"),
    "replace_all": _replace_all,
    "regex_replace_all": _regex_replace_all,
    "to_array": _to_array,
    "divide": _divide,
    "lookup": _lookup,
    "parse_yaml": lambda t, args: Expr(f"yaml.parse({args[0].text})", "any"),
    "parse_json": lambda t, args: Expr(f"json.unmarshal({args[0].text})", "any"),
    "trim_prefix": _two("trim_prefix", lambda s, p: f"{cel.paren(s.text)}.startsWith({p.text}) ? "
                        f"{cel.paren(s.text)}.substring(size({p.text})) : {s.text}", "string"),
}
"""JMESPath functions with a CEL equivalent (Kubernetes' and CEL's standard and extension libraries, which
Kyverno's CEL environment holds)."""


def copy_with(expr: Expr, **changes: Any) -> Expr:
    return replace(expr, **changes)
