"""Which rules can apply to a resource, answered before running any match tree.

Policies for Terraform plans and Kubernetes manifests nearly all start with a
literal match such as ``{mode: managed, type: aws_s3_bucket}`` or
``{kind: Pod}``. Running every rule's match tree on every resource is most of
a scan's evaluation time; instead, the rules are indexed by the key their
literal ``match.any`` trees all test (``type``, ``kind``, ...) and each
resource looks up only the rules that name its value.

The index must never change a result, including the rule ERRORs kyverno-json
reports when a match tree meets a value of the wrong kind. So a resource only
takes the short cut when every key the indexed trees test holds a value of the
tested type, or nothing, or null: then a tree that names another value fails
on a mismatch and nothing else. Any other resource runs every rule.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from assertree.rules import CompiledRule
from assertree.tree.nodes import StaticMapNode

_MISSING = object()


def _discriminators(rule: CompiledRule) -> dict[tuple, set[str]] | None:
    """Key paths tested with a string literal by every `match.any` tree of the rule, with the strings."""
    match = rule.match
    if match is None or not match.any or not all(isinstance(t, StaticMapNode) for t in match.any):
        return None
    common: dict[tuple, set[str]] | None = None
    for tree in match.any:
        found = {keys: {expected} for keys, expected in tree.pairs if type(expected) is str}
        if common is None:
            common = found
        else:
            common = {keys: common[keys] | found[keys] for keys in common.keys() & found.keys()}
    return common or None


def _best_key(found: list[dict[tuple, set[str]]]) -> tuple | None:
    """The key path that splits the rules best: most distinct values, then most rules."""
    values: dict[tuple, set[str]] = {}
    rules: Counter = Counter()
    for candidates in found:
        for keys, strings in candidates.items():
            values.setdefault(keys, set()).update(strings)
            rules[keys] += 1
    if not values:
        return None
    return max(values, key=lambda keys: (len(values[keys]), rules[keys], keys))


class RuleDispatch:
    """Maps a resource to the (rule, scope) pairs worth evaluating, in evaluation order."""

    def __init__(self, rules: list[tuple[CompiledRule, dict]]) -> None:
        self.everything = rules
        keyed = [(position, _discriminators(rule)) for position, (rule, _) in enumerate(rules)]
        self.key: tuple | None = _best_key([found for _, found in keyed if found])
        self.by_value: dict[str, list[tuple[CompiledRule, dict]]] = {}
        self.unindexed: list[tuple[CompiledRule, dict]] = rules
        self.checked_types: dict[tuple, type] = {}
        if self.key is None:
            return
        indexed: dict[int, set[str]] = {
            position: found[self.key] for position, found in keyed if found and self.key in found
        }
        self.unindexed = [pair for position, pair in enumerate(rules) if position not in indexed]
        for value in set().union(*indexed.values()):
            self.by_value[value] = [
                pair for position, pair in enumerate(rules) if position not in indexed or value in indexed[position]
            ]
        conflicting: set[tuple] = set()
        for position in indexed:
            for tree in rules[position][0].match.any:
                for keys, expected in tree.pairs:
                    known = self.checked_types.setdefault(keys, type(expected))
                    if known is not type(expected):
                        conflicting.add(keys)
        for keys in conflicting:
            self.checked_types[keys] = type(None)  # any present, non-null value sends the resource the long way

    def candidates(self, value: Any) -> list[tuple[CompiledRule, dict]]:
        if self.key is None or type(value) is not dict or not self._well_formed(value):
            return self.everything
        found = _lookup(value, self.key)
        if type(found) is str:
            return self.by_value.get(found, self.unindexed)
        return self.unindexed

    def _well_formed(self, value: dict) -> bool:
        for keys, expected_type in self.checked_types.items():
            current: Any = value
            for key in keys:
                if type(current) is not dict:
                    if current is None:
                        break
                    return False
                current = current.get(key, _MISSING)
                if current is _MISSING:
                    break
            else:
                if current is not None and type(current) is not expected_type:
                    return False
        return True


def _lookup(value: dict, keys: tuple) -> Any:
    for key in keys:
        if type(value) is not dict:
            return None
        value = value.get(key)
    return value
