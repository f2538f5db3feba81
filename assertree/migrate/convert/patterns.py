"""A Kyverno ``validate.pattern`` / ``anyPattern`` as CEL: one test that passes, one that skips.

Kyverno walks the pattern and the resource together
(`assertree.languages.kyverno.pattern`), and the walk ends in one of pass,
fail or skip (a conditional ``(key)`` or global ``<(key)`` anchor not met).
Each node of the pattern is compiled here into an `Outcome`: a CEL test that
the node *passes* and one that it *skips*; everything else fails. The rule
then becomes a match condition (not skipped) and a validation (passes).

The walk's own order decides between a skip and a failure, so it is
reproduced: a map checks its anchored keys (sorted) before its plain keys,
and a failure among the anchors counts only if no conditional anchor before
it skipped; a list of maps skips only when every item skipped, and fails on
any item that fails; ``^(key)`` wants, for each map of its list, an item that
passes. Whether a skip came straight from an anchor (``direct``) or from a
whole map or list (Kyverno's combined error) matters for the map above, so
it is carried too. Where no anchor can skip, everything folds into plain
``&&`` tests and ``all()`` comprehensions.

Presence is tested (``has()``) wherever Kyverno reads a field, so a missing
field fails (or, under an anchor, passes or skips) as it does in Kyverno;
the *kind* of a value is not tested outside conditional anchors: a value of
another kind than the pattern expects (which the API server does not admit
for built-in kinds) makes the test fail with an error, which denies the
request as a failure does (the migration's proof counts the two as one
verdict). So ``spec: {containers: [{image: "!*:latest"}]}`` becomes
``has(object.spec.containers) && object.spec.containers.all(container,
has(container.image) && !string(container.image).endsWith(':latest'))``.
Below a conditional or global anchor, where any failure turns into a skip,
kinds are tested too (*exact* mode).
Wildcard keys under ``metadata.labels``/``annotations`` stand for the keys
they match (Kyverno expands them to one matching key, picked at random when
several match; the CEL test passes when one of them passes). A leaf
with ``{{ }}`` variables compares with the variable's value at run time
(`leaves.dynamic_leaf_test`: a plain operand; the operators and wildcards a
substituted text could hold are not read). Refused: variables in keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from assertree.languages.kyverno.anchors import AnchorKind, parse_anchor
from assertree.languages.kyverno.operators import validate_value
from assertree.languages.kyverno.wildcard import contains_wildcard
from assertree.migrate.convert import cel
from assertree.migrate.convert.leaves import dynamic_leaf_test, leaf_test
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["Outcome", "Scope", "any_pattern_outcome", "condition_test", "pattern_outcome"]

_MAP_ANCHORS = (AnchorKind.CONDITION, AnchorKind.EXISTENCE, AnchorKind.EQUALITY, AnchorKind.NEGATION)


@dataclass(frozen=True)
class Outcome:
    """CEL tests of one pattern node on one value: `ok` (passes) and `skip` (skips; false when it cannot);
    failing is neither. `direct` tells an anchor's own skip from a whole map's or list's (Kyverno's combined
    error), which the map above treats differently: it is `skip` itself when `skip_is_direct`. `can_fail` is
    false for nodes that only pass or skip (conditional and global anchors)."""

    ok: str
    skip: str = cel.FALSE
    direct: str = cel.FALSE
    can_fail: bool = True
    skip_is_direct: bool = False
    passes_or_skips: str | None = None  # a simpler test than `ok || skip`, where the node knows one

    @property
    def nonfail(self) -> str:
        """Passes or skips: the validation a match condition ``!skip`` guards (given no skip, it is `ok`)."""
        if not self.can_fail:
            return cel.TRUE
        if self.passes_or_skips is not None:
            return self.passes_or_skips
        return cel.or_([self.ok, self.skip])

    @property
    def fails(self) -> str:
        return cel.not_(self.nonfail)

    @property
    def direct_skip(self) -> str:
        return self.skip if self.skip_is_direct else self.direct

    @property
    def combined_skip(self) -> str:
        """A skip that is not the anchor's own."""
        if self.skip_is_direct:
            return cel.FALSE
        return cel.and_([self.skip, cel.not_(self.direct)]) if self.direct != cel.FALSE else self.skip


@dataclass
class Scope:
    """Names in use by enclosing comprehensions, so nested ones get their own."""

    names: set[str] = field(default_factory=set)

    def variable(self, key: str) -> str:
        """A fresh name for the items of the list under `key`."""
        return self.name(_singular(key))

    def name(self, base: str) -> str:
        """`base`, or `base` numbered when an enclosing comprehension already uses it."""
        name = base
        number = 1
        while name in self.names or name in ("object", "oldObject", "request", "variables", "namespaceObject",
                                             "params", "exceptions"):
            number += 1
            name = f"{base}{number}"
        return name

    def enter(self, name: str) -> Scope:
        return Scope({*self.names, name})


# Kubernetes fields holding lists of plain values, which a pattern may check with one plain value.
_SCALAR_LISTS = frozenset({"supplementalGroups", "args", "command", "finalizers", "add", "drop", "externalIPs",
                           "accessModes", "verbs", "resources", "apiGroups", "resourceNames", "nonResourceURLs",
                           "hosts", "nameservers", "searches", "loadBalancerSourceRanges", "ipFamilies",
                           "clusterIPs", "dnsNames", "usages", "groups", "audiences", "allowedTopologies"})


def _key_name(key: Any) -> str:
    found = parse_anchor(str(key).strip())
    return found.key if found.kind is not None else str(key)


def _singular(key: str) -> str:
    """A name for the items of the list under `key`: ``containers`` -> ``container``, else ``item``."""
    word = "".join(char for char in key if char.isalnum())
    if not word or not word[0].isalpha() or not word.endswith("s") or word.endswith("ss") or len(word) < 4:
        return "item"
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    return word[:-1]


def _anchor(key: str):
    found = parse_anchor(key.strip())
    return found if found.kind is not None else None


def _kind(key: str) -> AnchorKind | None:
    found = _anchor(key)
    return None if found is None else found.kind


def _has_nested_anchors(pattern: Any) -> bool:
    if isinstance(pattern, dict):
        return any(_kind(key) not in (None, AnchorKind.ADD_IF_NOT_PRESENT) for key in pattern) or any(
            _has_nested_anchors(value) for value in pattern.values())
    if isinstance(pattern, list):
        return any(_has_nested_anchors(value) for value in pattern)
    return False


def _plain_order(keys: list[str], pattern: dict) -> list[str]:
    """Kyverno's order of plain keys: those with anchors below them first (each pushed to the front)."""
    front: list[str] = []
    back: list[str] = []
    for key in sorted(keys):
        if _kind(key) is AnchorKind.GLOBAL or _has_nested_anchors(pattern[key]):
            front.insert(0, key)
        else:
            back.append(key)
    return front + back


def _present(value: str, key: str) -> str:
    """Whether the map `value` holds `key` (``has()`` where CEL allows it, so autogen rewrites it too)."""
    field_text = cel.select(value, key)
    if field_text.endswith("]"):
        return cel.has(value, key)
    return f"has({field_text})"


def _refuse_variables(pattern: Any, path: tuple, names: Any = None) -> None:
    if isinstance(pattern, str) and "{{" in pattern and names is None:
        raise NotConvertible("a pattern value with {{ }} variables: Kyverno reads the substituted text as a "
                             "pattern (operators, wildcards) only at run time", path)
    if isinstance(pattern, dict):
        for key, value in pattern.items():
            if "{{" in str(key):
                raise NotConvertible("a pattern key with {{ }} variables", (*path, key))
            _refuse_variables(value, (*path, key), names)
    if isinstance(pattern, list):
        for position, value in enumerate(pattern):
            _refuse_variables(value, (*path, position), names)


class _Compiler:
    """Compiles pattern nodes. In *exact* mode (below a conditional or global anchor, where any failure,
    an error included, turns into a skip) every step is guarded so that no test can fail with an error;
    elsewhere tests read fields directly and an error denies (see the module docstring). `names` translate
    the ``{{ }}`` variables of leaves."""

    def __init__(self, names: Any = None) -> None:
        self.names = names

    def element(self, value: str, pattern: Any, path: tuple, scope: Scope, exact: bool) -> Outcome:
        if isinstance(pattern, dict):
            if not pattern:
                return Outcome(f"type({value}) == map")
            inner = self.map(value, pattern, path, scope, exact)  # every key reads `value`: a non-map errors
            if not exact:
                return inner
            guard = f"type({value}) == map"
            return replace(inner, ok=cel.and_([guard, inner.ok]), skip=cel.and_([guard, inner.skip]),
                           direct=cel.and_([guard, inner.direct]), passes_or_skips=cel.and_([guard, inner.nonfail]))
        if isinstance(pattern, list):
            return self.array(value, pattern, path, scope, exact)
        try:
            key = _key_name(path[-1]) if path else ""
            if key in _SCALAR_LISTS:
                # Kyverno checks each item of a list against a plain pattern value (supplementalGroups: "100-200")
                item = scope.variable(key)
                return Outcome(cel.ternary(f"type({value}) == list",
                                           f"{value}.all({item}, {self.leaf(item, pattern, exact)})",
                                           self.leaf(value, pattern, exact)))
            return Outcome(self.leaf(value, pattern, exact))
        except NotConvertible as refusal:
            raise refusal if refusal.path else refusal.at(path) from None

    def leaf(self, value: str, pattern: Any, exact: bool) -> str:
        if isinstance(pattern, str) and "{{" in pattern:
            return self.dynamic(value, pattern)
        return leaf_test(value, pattern, exact=exact)

    def dynamic(self, value: str, pattern: str) -> str:
        from assertree.migrate.convert.jmespath import translate_template

        text = pattern.strip()
        whole = text.startswith("{{") and text.endswith("}}") and text.count("{{") == 1
        return dynamic_leaf_test(value, translate_template(pattern, self.names, as_text=not whole).value())

    def map(self, value: str, pattern: dict, path: tuple, scope: Scope, exact: bool) -> Outcome:
        names = [_anchor(str(step)).key if _anchor(str(step)) else str(step) for step in path[-2:]]
        in_metadata = len(names) == 2 and names[0] == "metadata" and names[1] in ("labels", "annotations")
        anchored = sorted(key for key in pattern if _kind(key) in _MAP_ANCHORS)
        plain = _plain_order([key for key in pattern if _kind(key) not in _MAP_ANCHORS], pattern)
        handle = self.metadata_entry if in_metadata else self.handle
        anchors = [handle(value, key, pattern[key], (*path, key), scope, exact) for key in anchored]
        plains = [handle(value, key, pattern[key], (*path, key), scope, exact) for key in plain]

        # an anchor's failure counts unless an anchor before it skipped on its own
        fail_anchor = cel.or_(cel.and_([outcome.fails, *(cel.not_(o.direct_skip) for o in anchors[:i])])
                              for i, outcome in enumerate(anchors))
        any_direct = cel.or_(outcome.direct_skip for outcome in anchors)
        all_combined = cel.and_(o.combined_skip for o in anchors) if anchors else cel.FALSE
        anchors_skip = cel.or_([any_direct, all_combined])  # given that no anchor failed
        plain_ok = cel.and_(outcome.ok for outcome in plains)
        plain_skip = cel.or_(cel.and_([o.skip, *(p.ok for p in plains[:j])]) for j, o in enumerate(plains))
        plain_direct = cel.or_(cel.and_([o.direct_skip, *(p.ok for p in plains[:j])]) for j, o in enumerate(plains))
        # the plain keys do not fail when the first that does not pass skips: key j is checked only if every
        # key before it passed, which a key that cannot skip must have done for the conjunction to go on
        plain_nonfail = cel.and_(
            o.nonfail if all(p.skip == cel.FALSE for p in plains[:j])
            else cel.or_([cel.not_(cel.and_(p.ok for p in plains[:j])), o.nonfail])
            for j, o in enumerate(plains))
        no_fail = cel.not_(fail_anchor)
        # a key that cannot fail may not read `value` at all: then a value that is no map must fail on a guard
        guard = f"type({value}) == map" if not exact and value != "object" and any(
            not o.can_fail for o in (*anchors, *plains)) else cel.TRUE
        return Outcome(
            ok=cel.and_([guard, no_fail, cel.not_(anchors_skip), plain_ok]),
            skip=cel.and_([guard, no_fail, cel.or_([anchors_skip, plain_skip])]),
            direct=cel.and_([guard, no_fail, cel.not_(anchors_skip), plain_direct]),
            can_fail=True,
            passes_or_skips=cel.and_([guard, no_fail, cel.or_([anchors_skip, plain_nonfail])]),
        )

    def array(self, value: str, pattern: list, path: tuple, scope: Scope, exact: bool) -> Outcome:
        guard = f"type({value}) == list" if exact else cel.TRUE
        if not pattern:
            return Outcome(cel.FALSE)
        first = pattern[0]
        if isinstance(first, dict):
            name = scope.variable(str(path[-1]) if path else "item")
            item = self.element(name, first, (*path, 0), scope.enter(name), exact)
            if item.skip == cel.FALSE:
                return Outcome(cel.and_([guard, f"{value}.all({name}, {item.ok})"]))
            nonfail = cel.and_([guard, f"{value}.all({name}, {item.nonfail})"]) if item.can_fail \
                else f"type({value}) == list"
            some_pass = f"{value}.exists({name}, {item.ok})"
            all_skip = f"{value}.all({name}, {item.skip})"
            ok = cel.and_([nonfail, cel.or_([f"size({value}) == 0", some_pass])])
            skip = cel.and_([guard, f"size({value}) > 0", all_skip])
            return Outcome(ok, skip, passes_or_skips=nonfail)
        if isinstance(first, list):
            items = [self.element(cel.index(value, position), item, (*path, position), scope, exact)
                     for position, item in enumerate(pattern)]
            length = f"size({value}) >= {len(pattern)}"
            fails = cel.or_(cel.and_([o.fails, *(cel.not_(p.skip) for p in items[:i])]) for i, o in enumerate(items))
            all_skip = cel.and_(o.skip for o in items)
            return Outcome(cel.and_([guard, length, cel.not_(fails), cel.not_(all_skip)]),
                           cel.and_([guard, length, cel.not_(fails), all_skip]))
        name = scope.variable(str(path[-1]) if path else "item")
        try:
            test = leaf_test(name, first, exact=exact)
        except NotConvertible as refusal:
            raise refusal.at((*path, 0)) from None
        return Outcome(cel.and_([guard, f"{value}.all({name}, {test})"]))

    def handle(self, value: str, key: str, pattern: Any, path: tuple, scope: Scope, exact: bool) -> Outcome:
        anchor = _anchor(key)
        kind = None if anchor is None else anchor.kind
        if anchor is None or kind is AnchorKind.ADD_IF_NOT_PRESENT:
            return self.plain(value, key, pattern, path, scope, exact)
        name = anchor.key
        present = _present(value, name)
        child = cel.select(value, name)
        if kind is AnchorKind.NEGATION:
            return Outcome(cel.not_(present))
        if kind is AnchorKind.EXISTENCE:
            return Outcome(cel.or_([cel.not_(present), self.existence(child, pattern, path, scope, exact)]))
        if kind is AnchorKind.EQUALITY:
            inner = self.element(child, pattern, path, scope, exact)
            return Outcome(cel.or_([cel.not_(present), inner.ok]), cel.and_([present, inner.skip]),
                           cel.and_([present, inner.direct_skip]), inner.can_fail,
                           passes_or_skips=cel.or_([cel.not_(present), inner.nonfail]))
        inner = self.element(child, pattern, path, scope, exact=True)  # any failure below is a skip
        if kind is AnchorKind.CONDITION:
            ok = cel.and_([present, inner.ok])
            return Outcome(ok, cel.not_(ok), can_fail=False, skip_is_direct=True)
        # global: absent passes; present and not passing skips the rule
        return Outcome(cel.or_([cel.not_(present), inner.ok]), cel.and_([present, cel.not_(inner.ok)]),
                       can_fail=False, skip_is_direct=True)

    def metadata_entry(self, value: str, key: str, pattern: Any, path: tuple, scope: Scope,
                       exact: bool) -> Outcome:
        """A label or annotation key: one holding ``*`` or ``?`` stands for the labels it matches (Kyverno's
        ``ExpandInMetadata`` picks one of them, at random when several match; here: any one that passes)."""
        anchor = _anchor(key)
        name = anchor.key if anchor is not None else key
        if not contains_wildcard(name):
            return self.handle(value, key, pattern, path, scope, exact)
        if not isinstance(pattern, str):
            raise NotConvertible(f"a wildcard {path[-2]} key with a value that is no text (Kyverno drops it)", path)
        kind = None if anchor is None else anchor.kind
        matches = cel.wildcard_test(name, "key")
        present = f"{value}.exists(key, {matches})"
        try:
            leaf = leaf_test(f"{value}[key]", pattern, exact=exact or kind in (AnchorKind.CONDITION,
                                                                                AnchorKind.GLOBAL))
        except NotConvertible as refusal:
            raise refusal.at(path) from None
        passing = f"{value}.exists(key, {cel.and_([matches, leaf])})"
        if kind is AnchorKind.NEGATION:
            return Outcome(cel.not_(present))
        if kind is AnchorKind.CONDITION:
            return Outcome(passing, cel.not_(passing), can_fail=False, skip_is_direct=True)
        if kind is AnchorKind.GLOBAL:
            return Outcome(cel.or_([cel.not_(present), passing]), cel.and_([present, cel.not_(passing)]),
                           can_fail=False, skip_is_direct=True)
        if kind is AnchorKind.EQUALITY:
            return Outcome(cel.or_([cel.not_(present), passing]))
        if kind is not None and kind is not AnchorKind.ADD_IF_NOT_PRESENT:
            raise NotConvertible(f"anchor {kind.value} on a wildcard {path[-2]} key", path)
        # plain: no matching key reads the wildcard text as the key, which is absent (null)
        return Outcome(cel.ternary(present, passing, cel.literal(validate_value(None, pattern))))

    def existence(self, value: str, pattern: Any, path: tuple, scope: Scope, exact: bool) -> str:
        if not isinstance(pattern, list) or not all(isinstance(item, dict) for item in pattern):
            return cel.FALSE  # Kyverno refuses the pattern when the field is present
        name = scope.variable(str(path[-1]))
        guard = f"type({value}) == list" if exact else cel.TRUE
        # an item matches only when it passes (a skip is no match): exact, so an odd item is just no match
        return cel.and_([guard, *(
            f"{value}.exists({name}, {self.element(name, item, (*path, i), scope.enter(name), True).ok})"
            for i, item in enumerate(pattern))])

    def plain(self, value: str, key: str, pattern: Any, path: tuple, scope: Scope, exact: bool) -> Outcome:
        """A plain key: Kyverno reads a missing field as null, which every map and list pattern and most leaves
        refuse: ``has(x.key) && test(x.key)``; a leaf that accepts null is ``!has(x.key) || test(x.key)``."""
        child = cel.select(value, key)
        present = _present(value, key)
        if (value, key) == ("object", "metadata"):
            # every object has its metadata, but a Pod template read by autogen may hold a null one in a file
            present = f"{child} != null"
        if pattern == "*":
            return Outcome(cel.and_([present, f"{child} != null"]))
        inner = self.element(child, pattern, path, scope, exact)
        if not isinstance(pattern, dict | list) and validate_value(None, pattern):
            return Outcome(cel.or_([cel.not_(present), inner.ok]))
        return replace(inner, ok=cel.and_([present, inner.ok]), skip=cel.and_([present, inner.skip]),
                       direct=cel.and_([present, inner.direct]),
                       passes_or_skips=cel.and_([present, inner.nonfail]))


def pattern_outcome(pattern: Any, path: tuple, root: str = "object", scope: Scope | None = None,
                    names: Any = None) -> Outcome:
    """The `Outcome` of a whole ``pattern`` on the value `root` (the resource, or a foreach element).
    NotConvertible names the field of the first part CEL cannot say; `names` translate ``{{ }}`` variables
    (without them a variable is refused)."""
    _refuse_variables(pattern, path, names)
    return _Compiler(names).element(root, pattern, path, scope or Scope(), exact=False)


def any_pattern_outcome(patterns: Any, path: tuple, root: str = "object", scope: Scope | None = None,
                        names: Any = None) -> Outcome:
    """``anyPattern``: passes when one pattern passes, skips when every one skipped, fails otherwise."""
    if not isinstance(patterns, list) or not patterns:
        raise NotConvertible("anyPattern must be a non-empty list", path)
    from assertree.languages.kyverno.manifests import to_float64

    outcomes = [pattern_outcome(to_float64(item), (*path, i), root, scope, names) for i, item in enumerate(patterns)]
    ok = cel.or_(outcome.ok for outcome in outcomes)
    if all(outcome.skip == cel.FALSE for outcome in outcomes):
        return Outcome(ok)
    skip = cel.and_([cel.not_(ok), *(outcome.skip for outcome in outcomes)])
    return Outcome(ok, skip)


def condition_test(value: str, key: str, pattern: Any, path: tuple, scope: Scope | None = None) -> str:
    """CEL: whether the anchored `key` (``(k)``, ``X(k)``, ``=(k)``, ``<(k)``) of a mutate patch holds on the map
    `value`, as Kyverno's mutate preprocessing checks it (never failing with an error)."""
    _refuse_variables(pattern, path)
    anchor = _anchor(key)
    if anchor is None:
        raise NotConvertible("not a condition anchor", path)
    present = _present(value, anchor.key)
    if anchor.kind is AnchorKind.NEGATION:
        return cel.not_(present)
    inner = _Compiler().element(cel.select(value, anchor.key), pattern, path, scope or Scope(), exact=True)
    if anchor.kind in (AnchorKind.CONDITION, AnchorKind.GLOBAL):  # a missing key does not meet either
        return cel.and_([present, inner.ok])
    return cel.or_([cel.not_(present), inner.ok])
