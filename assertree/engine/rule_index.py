"""Which rules can apply to a resource, answered before running any match tree.

Policies for Terraform plans and Kubernetes manifests nearly all start with a
literal match such as ``{mode: managed, type: aws_s3_bucket}`` or
``{kind: Pod}``. Running every rule's match tree on every resource is most of
a scan's evaluation time; instead, the rules are indexed by the key their
literal ``match.any`` trees all test (``type``, ``kind``, ...) and each
resource looks up only the rules that name its value.

A rule offers itself to the index through `index_keys`: for each tree of its
``match.any``, the (key path, literal) pairs the tree tests, when the tree is
made of nothing else (kyverno-json's `StaticMapNode`); None otherwise, and the
rule then runs on every resource.

The index must never change a result, including the rule ERRORs kyverno-json
reports when a match tree meets a value of the wrong kind. So a resource only
takes the short cut when every key the indexed trees test holds a value of the
tested type, or nothing, or null: then a tree that names another value fails
on a mismatch and nothing else. Any other resource runs every rule.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from assertree.languages.base import CompiledRule, RuleRunner

_MISSING = object()


def _index_keys(rule: CompiledRule) -> list[list[tuple[tuple, Any]]] | None:
    return getattr(rule, "index_keys", None)


def _discriminators(rule: CompiledRule) -> dict[tuple, set[str]] | None:
    """Key paths tested with a string literal by every `match.any` tree of the rule, with the strings."""
    trees = _index_keys(rule)
    if not trees:
        return None
    common: dict[tuple, set[str]] | None = None
    for pairs in trees:
        found = {keys: {expected} for keys, expected in pairs if type(expected) is str}
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


class RuleIndex:
    """Maps a resource to the rule runners worth calling, in evaluation order."""

    def __init__(self, rules: list[tuple[CompiledRule, RuleRunner]]) -> None:
        runners = [runner for _, runner in rules]
        self.everything = runners
        keyed = [(position, _discriminators(rule)) for position, (rule, _) in enumerate(rules)]
        self.key: tuple | None = _best_key([found for _, found in keyed if found])
        self.by_value: dict[str, list[RuleRunner]] = {}
        self.unindexed: list[RuleRunner] = runners
        self.checked_types: dict[tuple, type] = {}
        self.flat_checks: list[tuple[str, type]] | None = None
        # the usual index, top-level keys only and the key one of them: the key, its tested type, the other keys
        self.flat_key: str | None = None
        self.key_type: type = type(None)
        self.other_checks: list[tuple[str, type]] = []
        if self.key is None:
            return
        indexed: dict[int, set[str]] = {
            position: found[self.key] for position, found in keyed if found and self.key in found
        }
        self.unindexed = [runner for position, runner in enumerate(runners) if position not in indexed]
        for value in set().union(*indexed.values()):
            self.by_value[value] = [
                runner for position, runner in enumerate(runners)
                if position not in indexed or value in indexed[position]
            ]
        conflicting: set[tuple] = set()
        for position in indexed:
            for pairs in _index_keys(rules[position][0]) or ():
                for keys, expected in pairs:
                    known = self.checked_types.setdefault(keys, type(expected))
                    if known is not type(expected):
                        conflicting.add(keys)
        for keys in conflicting:
            self.checked_types[keys] = type(None)  # any present, non-null value sends the resource the long way
        # top-level keys only (the usual ``type``, ``mode``, ``kind``): one lookup each, no inner loop
        self.flat_checks = [(keys[0], expected) for keys, expected in self.checked_types.items()] if all(
            len(keys) == 1 for keys in self.checked_types) else None
        if self.flat_checks is not None and len(self.key) == 1:  # the usual index: `candidates` inline
            self.flat_key = self.key[0]
            self.key_type = self.checked_types[self.key]  # str, or NoneType where trees test it with other types
            self.other_checks = [(name, expected) for name, expected in self.flat_checks if name != self.flat_key]

    def candidates(self, value: Any) -> list[RuleRunner]:
        name = self.flat_key
        if name is not None and type(value) is dict:  # the usual index: what the general lines below decide
            found = value.get(name)
            for other, wanted in self.other_checks:
                current = value.get(other)
                if current is not None and type(current) is not wanted:
                    return self.everything
            if found is None:
                return self.unindexed
            if type(found) is not self.key_type:
                return self.everything
            return self.by_value.get(found, self.unindexed) if type(found) is str else self.unindexed
        key = self.key
        if key is None or type(value) is not dict:
            return self.everything
        flat = self.flat_checks
        if flat is not None:  # `_well_formed` of top-level keys, inline: once per resource
            for name, wanted in flat:
                found = value.get(name)
                if found is not None and type(found) is not wanted:
                    return self.everything
        elif not self._well_formed(value):
            return self.everything
        if len(key) == 1:  # the usual case (``type``, ``kind``): one lookup, no loop
            found = value.get(key[0])
        else:
            found = _lookup(value, key)
        if type(found) is str:
            return self.by_value.get(found, self.unindexed)
        return self.unindexed

    def _well_formed(self, value: dict) -> bool:
        """Whether every key the indexed trees test holds a value of the tested type, nothing, or null."""
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
    current: Any = value
    for key in keys:
        if type(current) is not dict:
            return None
        current = current.get(key)
    return current
