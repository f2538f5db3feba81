"""Kyverno's ``{{ }}`` variables and the context they read.

Kyverno substitutes variables in a rule before it evaluates it
(``pkg/engine/variables/vars.go``), against a JSON document it calls the
context (``pkg/engine/context``). Both are reproduced here, because the details
decide results:

- A string that is exactly one ``{{ expr }}`` takes the expression's JSON value
  (a map stays a map); otherwise every ``{{ }}`` is rendered into the string
  (strings as they are, anything else as Go's ``json.Marshal`` writes it).
  Map keys are substituted too and must stay strings.
- Variables nest: ``{{ a.{{ b }} }}`` substitutes ``b`` first, then looks the
  outer text up again, until no ``{{`` is left; ``{{- x }}`` substitutes once
  and escapes the ``{{`` its value holds. ``\\{{`` is an escape, kept literal.
- ``{{ @ }}`` is the value at the same place in ``request.object`` (or
  ``target``), found from the field path of the string in the rule.
- On a DELETE request ``request.object`` is read as ``request.oldObject``.
- A lookup that names a key the document lacks fails. Kyverno's go-jmespath
  fork raises ``NotFoundError`` ("Unknown key ... in path") when a field is
  missing from a map, and only ``.``/``[n]`` chains and the right side of
  ``&&`` pass that error on; ``||``, pipes, projections, filters, function
  arguments and comparisons swallow it (null). `assertree.jp` evaluates the
  expression (it returns null for missing keys, as community JMESPath does) and
  `_missing_key` walks the same syntax tree along the propagating chain to
  tell "null" from "unknown key". A failed lookup is a `VariableError` (data:
  the variable, the field path, the reason); Kyverno turns it into an error
  result. ``Unresolved.EMPTY`` is Kyverno's behaviour before 1.8 in
  preconditions (an empty string instead of the error); since kyverno#4217
  preconditions raise like everything else, which is the default here.

`KyvernoContext` is the document with Kyverno's lazy context entries (a loader
runs when a query first mentions its name, ``context/deferred.go``), foreach
``element``/``elementIndex`` scopes, and checkpoints (a rule's or a foreach
element's additions are dropped when it ends); it loads the ``images``
variable from `images`. ``$( )`` references are `references`' job; the walk over
strings and keys and `VariableError` are shared with it in `substitution`.
"""

from __future__ import annotations

import contextlib
import csv
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any

from assertree import jp
from assertree.errors import shorten
from assertree.jp.compiler import Compiler
from assertree.jp.limits import MAX_STRING_LENGTH
from assertree.jp.values import is_false, json_excerpt, to_json
from assertree.languages.kyverno.images import images
from assertree.languages.kyverno.manifests import copy_json
from assertree.languages.kyverno.references import substitute_references
from assertree.languages.kyverno.substitution import Path, VariableError, has_markers, traverse

__all__ = [
    "KyvernoContext",
    "Substitution",
    "Unresolved",
    "evaluate",
    "is_variable",
    "prepare_substitution",
    "render",
    "service_account",
    "substitute_all",
    "substitute_variables",
]


class Unresolved(Enum):
    """What a variable that cannot be resolved becomes."""

    ERROR = "error"  # a VariableError (Kyverno since 1.8, everywhere)
    EMPTY = "empty"  # an empty string (Kyverno before 1.8, in preconditions only)




# -- the context document ----------------------------------------------------------------------------


@dataclass(eq=False)
class _Loader:
    name: str
    load: Callable[[], None]
    level: int
    matcher: re.Pattern
    loaded: bool = False
    matched: bool = False


def _loader_matcher(name: str) -> re.Pattern:
    # A query mentions `name` when it starts a word that no `.` (or identifier character) precedes.
    try:
        return re.compile(r"(?:\A|\Z|\s|[^.0-9A-Za-z])" + name + r"\b", re.ASCII)
    except re.error:
        return re.compile(r"(?:\A|\Z|\s|[^.0-9A-Za-z])" + re.escape(name) + r"\b", re.ASCII)


class KyvernoContext:
    """The JSON document ``{{ }}`` expressions read, with Kyverno's lazy entries and scopes.

    Build one per (policy, resource) with `for_request`; add values-file
    variables with `add_variable`, rule context entries with `add_deferred`
    (see `assertree.languages.kyverno.context.load_context`), a foreach element
    with `add_element`; bracket a rule or foreach with `checkpoint`/`restore`
    and each foreach element with `reset`.
    """

    def __init__(self, document: dict | None = None) -> None:
        self._data: dict = {} if document is None else document
        self._checkpoints: list[dict] = []
        self._loaders: list[_Loader] = []
        self._load_level: int | None = None
        self._load_index: int | None = None
        self._operation: str | None = None

    # -- building ------------------------------------------------------------------------------------

    @classmethod
    def for_request(
        cls,
        resource: Mapping | None,
        *,
        operation: str = "CREATE",
        old_resource: Mapping | None = None,
        request_info: Mapping | None = None,
    ) -> KyvernoContext:
        """The context of an admission request as Kyverno's engine builds it (``NewPolicyContext``).

        `resource` becomes ``request.object`` (None on DELETE), `old_resource`
        ``request.oldObject``; ``request.namespace`` is the new resource's
        namespace; ``images`` is a lazy entry built from the new resource;
        `request_info` (a ``RequestInfo`` as JSON: ``roles``, ``clusterRoles``,
        ``userInfo``) is merged under ``request`` and gives
        ``serviceAccountName``/``serviceAccountNamespace``. Without it neither
        exists, as in the CLI without a user-info file.
        """
        context = cls()
        new = dict(resource) if resource is not None else {}  # shared below the top: merges copy on write
        if resource is not None:
            context.add_resource(new)
        if old_resource is not None:
            context.add_old_resource(dict(old_resource))
        namespace = (new.get("metadata") or {}).get("namespace") if isinstance(new.get("metadata"), dict) else None
        context.add_variable("request.namespace", namespace or "")
        context.add_deferred("images", lambda: context._load_images(new))
        if request_info is not None:
            context._merge({"request": copy_json(dict(request_info))})
            username = ((request_info.get("userInfo") or {}).get("username")) or ""
            context._merge(dict(zip(("serviceAccountName", "serviceAccountNamespace"),
                                    service_account(username), strict=True)))
        context.set_operation(operation)
        return context

    @classmethod
    def for_cli(cls, resource: Mapping, *, operation: str = "CREATE",
                request_info: Mapping | None = None) -> KyvernoContext:
        """The context ``kyverno test``/``apply`` builds for one resource and operation.

        CREATE reads the resource as ``request.object``; UPDATE also as
        ``request.oldObject``; DELETE only as ``request.oldObject`` (no
        ``request.object``, an empty ``request.namespace``).
        """
        if operation == "DELETE":
            return cls.for_request(None, operation=operation, old_resource=resource, request_info=request_info)
        old = resource if operation == "UPDATE" else None
        return cls.for_request(resource, operation=operation, old_resource=old, request_info=request_info)

    def _load_images(self, resource: dict) -> None:
        found = images(resource)
        if found:
            self._merge({"images": found})

    @property
    def document(self) -> dict:
        """The context as JSON (lazy entries not yet queried are absent)."""
        return self._data

    @property
    def operation(self) -> str:
        """``request.operation`` (``CREATE``, ``UPDATE``, ``DELETE``, ``CONNECT``) or ""."""
        if self._operation:
            return self._operation
        request = self._data.get("request")
        operation = request.get("operation") if isinstance(request, dict) else None
        return operation if isinstance(operation, str) else ""

    def set_operation(self, operation: str) -> None:
        """Set ``request.operation``; a DELETE makes ``request.object`` read as ``request.oldObject``."""
        self._merge({"request": {"operation": operation}})
        self._operation = operation

    def add_resource(self, resource: dict) -> None:
        """Replace ``request.object``."""
        self._drop_request_field("object")
        self._merge({"request": {"object": resource}})

    def add_old_resource(self, resource: dict) -> None:
        """Replace ``request.oldObject``."""
        self._drop_request_field("oldObject")
        self._merge({"request": {"oldObject": resource}})

    def _drop_request_field(self, name: str) -> None:
        request = self._data.get("request")
        if isinstance(request, dict) and name in request:
            self._data["request"] = {key: value for key, value in request.items() if key != name}

    def set_target(self, resource: dict) -> None:
        """Replace ``target`` (mutate-existing targets; ``{{ @ }}`` then reads from it)."""
        self._data.pop("target", None)
        self._merge({"target": resource})

    def add_variable(self, key: str, value: Any) -> None:
        """Set the variable `key`; a dotted key sets a nested value (``a.b: 1`` is ``{"a": {"b": 1}}``).

        Maps are merged into what is there, as Kyverno's ``AddVariable`` does;
        a part may be double-quoted to hold a dot (``"a.b".c``).
        """
        parts = next(csv.reader([key], delimiter="."), [key])
        nested: Any = copy_json(value)
        for part in reversed(parts):
            nested = {part: nested}
        self._merge(nested)

    def add_context_entry(self, name: str, value: Any) -> None:
        """Set the context entry `name` to `value`, replacing what was there (``ReplaceContextEntry``)."""
        self._data[name] = None
        self._merge({name: copy_json(value)})

    def add_element(self, element: Any, index: int, nesting: int = 0) -> None:
        """The foreach scope: ``element``, ``elementIndex`` and their ``element<n>``/``elementIndex<n>`` forms."""
        scope = {"element": element, f"element{nesting}": element, "elementIndex": index,
                 f"elementIndex{nesting}": index}
        self._merge(copy_json(scope), overwrite_maps=True)

    def add_deferred(self, name: str, load: Callable[[], None]) -> None:
        """Register a lazy entry: `load` runs the first time a query mentions `name` (at this scope).

        `load` writes its value itself (usually `add_context_entry`) and raises
        `VariableError` when it fails; the failure surfaces in the query.
        """
        self._loaders.append(_Loader(name, load, len(self._checkpoints), _loader_matcher(name)))

    def _merge(self, source: dict, *, overwrite_maps: bool = False) -> None:
        _merge_maps(source, self._data, overwrite_maps)

    # -- scopes --------------------------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Remember the current state; `restore` returns to it (a rule, a foreach)."""
        self._checkpoints.append(dict(self._data))  # nested maps are never changed in place (`_merge_maps`)

    def restore(self) -> None:
        """Return to the last checkpoint and forget it; entries added since are dropped."""
        if not self._checkpoints:
            return
        self._data = self._checkpoints.pop()
        self._reset_loaders(restore=True, level=len(self._checkpoints))

    def reset(self) -> None:
        """Return to the last checkpoint and keep it (the next foreach element starts clean)."""
        if not self._checkpoints:
            return
        self._data = dict(self._checkpoints[-1])
        self._reset_loaders(restore=False, level=len(self._checkpoints))

    def _reset_loaders(self, *, restore: bool, level: int) -> None:
        # Loaders of inner scopes go; loaded outer ones are loaded again into the restored document.
        for loader in self._loaders:
            loader.matched = False
        kept: list[_Loader] = []
        for loader in list(self._loaders):
            if loader.level > level:
                continue
            if loader.loaded:
                if restore or loader.level < level:
                    with contextlib.suppress(VariableError):  # Kyverno logs the failure and carries on
                        self._run(loader, self._loaders.index(loader))
                if loader.level == level:
                    continue
            elif not restore and loader.level == level:
                continue
            kept.append(loader)
        self._loaders = kept

    # -- queries -------------------------------------------------------------------------------------

    def _load_matching(self, query: str) -> None:
        level = len(self._checkpoints) if self._load_level is None else self._load_level
        limit = len(self._loaders) if self._load_index is None else min(self._load_index, len(self._loaders))
        while True:
            found = next(
                (i for i in range(limit)
                 if not self._loaders[i].matched and not self._loaders[i].loaded
                 and self._loaders[i].level <= level and self._loaders[i].matcher.search(query)),
                None,
            )
            if found is None:
                return
            self._loaders[found].matched = True
            self._run(self._loaders[found], found)

    def _run(self, loader: _Loader, index: int) -> None:
        self._load_level, self._load_index = loader.level, index
        try:
            loader.load()
            loader.loaded = True
        finally:
            self._load_level = self._load_index = None

    def query(self, expression: str) -> Any:
        """Evaluate a Kyverno JMESPath `expression` against the context (loading lazy entries it names).

        Raises `VariableError`: ``not_found`` for a key missing from a map on
        the expression's propagating path, otherwise for bad syntax or a
        failing function.
        """
        self._load_matching(expression)
        return evaluate(expression, self._data)

    def evaluate(self, expression: str, data: Any) -> Any:
        """Evaluate `expression` against `data` (not the context) with the same unknown-key rule as `query`."""
        return evaluate(expression, data)

    def has(self, name: str) -> bool:
        """Whether a top-level entry `name` exists (after loading any lazy entry of that name)."""
        self._load_matching(name)
        return name in self._data


def evaluate(expression: str, data: Any) -> Any:
    """Evaluate a Kyverno JMESPath `expression` against `data`; `VariableError` as `KyvernoContext.query` raises."""
    text = expression.strip()
    if not text:
        raise VariableError("invalid query (nil)")
    try:
        query = _compiled(text)
    except jp.JMESPathError as error:
        if isinstance(error, jp.ParseError) and error.expression == text:  # the part around the column
            raise VariableError(f"incorrect query {error.excerpt(80)}: {error.located()}", variable=text) from None
        raise VariableError(f"incorrect query {shorten(text, 160)}: {error}", variable=text) from None
    try:
        result = query.expression.search(data)
        missing = query.missing_key(data)
    except jp.JMESPathError as error:
        raise VariableError(f"JMESPath query failed: {error}", variable=text) from None
    if missing is not None:
        raise VariableError(f'Unknown key "{missing}" in path', variable=text, not_found=True)
    return result


def service_account(username: str) -> tuple[str, str]:
    """(name, namespace) of a ``system:serviceaccount:<namespace>:<name>`` user; ("", "") otherwise."""
    prefix = "system:serviceaccount:"
    rest = username[len(prefix):] if len(username) > len(prefix) else ""
    groups = rest.split(":")
    if len(groups) >= 2:
        return groups[1], groups[0]
    return "", ""


def _merge_maps(source: dict, destination: dict, overwrite_maps: bool) -> None:
    """Merge `source` into `destination`, copying each nested map before changing it: the context's maps
    are shared with its checkpoints and with the caller (the resource is ``request.object`` as given), so
    none may change in place; only `destination` itself, the context's top level, does."""
    for key, value in source.items():
        current = destination.get(key)
        if isinstance(value, dict) and not overwrite_maps and isinstance(current, dict):
            current = dict(current)
            _merge_maps(value, current, overwrite_maps)
            destination[key] = current
        else:
            destination[key] = value


# -- queries: evaluation plus go-jmespath's "unknown key" -------------------------------------------------


_PROJECTIONS = frozenset({"projection", "filter_projection", "value_projection"})
_SPINE = frozenset({"field", "subexpression", "index_expression", "and_expression"})


class _Query:
    """A compiled expression and the spine walk that finds the key go-jmespath reports missing."""

    def __init__(self, text: str) -> None:
        self.expression = jp.compile(text)
        self._parts: dict[int, Callable[[Any, dict], Any]] = {}

    def _evaluate(self, node: Any, value: Any) -> Any:
        code = self._parts.get(id(node))
        if code is None:
            code = self._parts[id(node)] = Compiler("kyverno").compile(node)
        return code(value, {})

    def missing_key(self, value: Any) -> str | None:
        if self.expression.tree.type not in _SPINE:
            return None  # fast path: every other root swallows go-jmespath's error, so never report one
        return self._probe(self.expression.tree, value)[1]

    def _probe(self, node: Any, value: Any) -> tuple[Any, str | None]:
        kind = node.type
        if kind == "field":
            if isinstance(value, dict):
                if node.value in value:
                    return value[node.value], None
                return None, node.value
            return None, None
        if kind in ("subexpression", "index_expression"):
            if kind == "subexpression" and _starts_projection(node.children[1]):
                # go-jmespath parses `a.b[*].c` as a projection over `a.b`, which swallows errors on its left
                return self._evaluate(node, value), None
            current = value
            for child in node.children:
                current, missing = self._probe(child, current)
                if missing is not None:
                    return None, missing
            return current, None
        if kind == "and_expression":
            left = self._evaluate(node.children[0], value)
            if is_false(left):
                return left, None
            return self._probe(node.children[1], value)
        return self._evaluate(node, value), None


def _starts_projection(node: Any) -> bool:
    while True:
        if node.type in _PROJECTIONS:
            return True
        if node.type not in ("subexpression", "index_expression") or not node.children:
            return False
        node = node.children[0]


@lru_cache(maxsize=4096)
def _compiled(text: str) -> _Query:
    return _Query(text)


# -- {{ }} substitution -----------------------------------------------------------------------------------

_VARIABLE = re.compile(r"(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})")
_VARIABLE_AT_START = re.compile(r"^\{\{(?:\{[^{}]*\}|[^{}])*\}\}")


def is_variable(text: str) -> bool:
    """Whether `text` holds a ``{{ }}`` variable that is not escaped."""
    return _VARIABLE.search(text) is not None


def render(value: Any) -> str:
    """A value as Kyverno writes it into a string: strings as they are, anything else as Go's JSON."""
    if isinstance(value, str):
        return value
    try:
        return to_json(value)
    except ValueError as error:
        raise VariableError(f"failed to marshal {json_excerpt(value)}: {error}") from None


def substitute_all(document: Any, context: KyvernoContext, *, path: Path = (),
                   unresolved: Unresolved = Unresolved.ERROR) -> Any:
    """`document` with its ``$( )`` references, then its ``{{ }}`` variables, substituted (``SubstituteAll``).

    `path` is where `document` sits in its rule (``("validate", "pattern")``):
    ``{{ @ }}`` needs it. The input is not modified. Raises `VariableError`.
    """
    if not has_markers(document):  # most patterns and conditions: nothing to substitute, a copy as the walk gives
        return copy_json(document)
    if has_markers(document, ("$(",)):  # without one, references would give an equal copy (variables copy anyway)
        document = substitute_references(document)
    return substitute_variables(document, context, path=path, unresolved=unresolved)


def substitute_variables(document: Any, context: KyvernoContext, *, path: Path = (),
                         unresolved: Unresolved = Unresolved.ERROR) -> Any:
    """`document` with every ``{{ }}`` in its strings and map keys substituted (see the module doc)."""
    delete = context.operation == "DELETE"

    def lookup(variable: str, where: Path) -> Any:
        return _lookup(context, variable, where, delete, unresolved)

    return traverse(document, tuple(path), lambda text, where: _substitute_string(text, where, lookup))


def _lookup(context: KyvernoContext, variable: str, where: Path, delete: bool, unresolved: Unresolved) -> Any:
    """One variable's value: ``@`` is the field's own path, a DELETE reads ``request.oldObject``."""
    if variable == "@":
        variable = _current_value_path(context, where)
    if delete:
        variable = variable.replace("request.object", "request.oldObject")
    try:
        return context.query(variable)
    except VariableError as error:
        if unresolved is Unresolved.EMPTY:
            return ""
        raise error.at(variable, where) from None


Substitution = Callable[..., Any]
"""A prepared `substitute_all`: called as ``substitution(context, path=(), unresolved=Unresolved.ERROR)``."""


def prepare_substitution(document: Any) -> Substitution:
    """`substitute_all` of `document`, with what does not depend on the context done once.

    A policy's conditions are substituted for every resource a rule selects, and most of their keys and
    values are either literal or exactly one variable (``key: "{{ request.object.kind }}"``).
    `substitute_all` walks such a document for markers, then scans the string for variables, every time;
    here the walk and the scan happen once.

    Fast path, invariant: for every document, context, path and `unresolved`, the prepared function returns
    what ``substitute_all(document, context, path=path, unresolved=unresolved)`` returns, and raises what it
    raises. It holds because a document without markers is copied as `substitute_all` copies it, a string
    that is exactly one ``{{ }}`` (found by `_substitute_string`'s own expressions) takes that function's
    first-round exit (the variable's value, copied), through the same `_lookup`, and anything else is
    `substitute_all` itself. `tests/kyverno/test_substitution_shortcuts.py` holds the two to each other on
    random documents and contexts and on every condition of the conformance data.
    """
    if not has_markers(document):
        return lambda context, path=(), unresolved=Unresolved.ERROR: copy_json(document)
    variable = _whole_variable(document) if isinstance(document, str) and "$(" not in document else None
    if variable is None:
        return lambda context, path=(), unresolved=Unresolved.ERROR: substitute_all(
            document, context, path=path, unresolved=unresolved)

    def whole(context: KyvernoContext, path: Path = (), unresolved: Unresolved = Unresolved.ERROR) -> Any:
        result = _lookup(context, variable, tuple(path), context.operation == "DELETE", unresolved)
        return copy_json(result) if isinstance(result, (dict, list)) else result

    return whole


def _whole_variable(text: str) -> str | None:
    """The variable of a string that is one ``{{ }}`` and nothing else, as `_substitute_string` reads it."""
    found = [match.group(0) for match in _VARIABLE.finditer(text)]
    if found != [text] or _VARIABLE_AT_START.match(text) is None:
        return None
    return _variable_text(text)[0]


MAX_SUBSTITUTION_ROUNDS = 100
"""Times a string is scanned again for ``{{ }}`` that substituted values brought in (Kyverno sets no
limit: a value that writes its own variable twice doubled the string at every round, forever)."""
MAX_SUBSTITUTION_WORK = 10 * MAX_STRING_LENGTH
"""Characters the substitutions in one string may rewrite together (each rewrites the whole string)."""


def _substitute_string(value: str, where: Path, lookup: Callable[[str, Path], Any]) -> Any:
    found = [match.group(0) for match in _VARIABLE.finditer(value)]
    rounds = work = 0
    while found:
        rounds += 1
        if rounds > MAX_SUBSTITUTION_ROUNDS:
            raise VariableError(f"variables substituted {MAX_SUBSTITUTION_ROUNDS} times over in one string "
                                "(a value that brings in its own variable?), assertree's limit")
        original = value
        shallow = False
        for text in found:
            initial = _VARIABLE_AT_START.match(text) is not None
            old = text
            if not initial:
                text = text[1:]
            variable, shallow = _variable_text(text)
            result = lookup(variable, where)
            if original == text:
                return copy_json(result) if isinstance(result, (dict, list)) else result
            prefix = "" if initial else old[0]
            if shallow and isinstance(result, str):
                result = result.replace("{{", "\\{{")
            rendered = render(result)
            work += len(value) + len(rendered)
            if len(value) + len(rendered) > MAX_STRING_LENGTH:
                raise VariableError(f"the string would be longer than {MAX_STRING_LENGTH:,} characters once its "
                                    "variables are substituted, assertree's limit")
            if work > MAX_SUBSTITUTION_WORK:
                raise VariableError(f"substituting the variables of one string would rewrite more than "
                                    f"{MAX_SUBSTITUTION_WORK:,} characters, assertree's limit")
            value = value.replace(prefix + text, prefix + rendered, 1)
        found = [] if shallow else [match.group(0) for match in _VARIABLE.finditer(value)]
    return value.replace("\\{{", "{{")


def _variable_text(text: str) -> tuple[str, bool]:
    variable = text.replace("{{", "").replace("}}", "").strip()
    if variable.startswith("-"):
        return variable[1:].strip(), True
    return variable, False


def _current_value_path(context: KyvernoContext, where: Path) -> str:
    # The field `{{ @ }}` stands in, in the resource: the rule path after `foreach` (if any) and two steps.
    prefix = "target" if "target" in context.document else "request.object"
    steps = [str(step) for step in where]
    if "foreach" in steps:
        steps = steps[steps.index("foreach") + 1:]
    steps = steps[2:] if len(steps) > 2 else []
    return _jmespath_path([*prefix.split("."), *steps])


_UNQUOTED = re.compile(r"[(A-Za-z_][)0-9A-Za-z_]*", re.ASCII)
_QUOTE_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t"}


def _jmespath_path(steps: Sequence[str]) -> str:
    out: list[str] = []
    for step in steps:
        if step.isascii() and step.isdigit():
            out.append(f"[{step}]")
            continue
        if out:
            out.append(".")
        if _UNQUOTED.fullmatch(step):
            out.append(step)
            continue
        quoted = []
        for ch in step:
            if ch in _QUOTE_ESCAPES:
                quoted.append(_QUOTE_ESCAPES[ch])
            elif ord(ch) < 0x20 or ch == "\x7f":
                quoted.append(f"\\u{ord(ch):04x}")
            else:
                quoted.append(ch)
        out.append('"' + "".join(quoted) + '"')
    return "".join(out)


