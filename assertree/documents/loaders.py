"""A YAML loader that only ever builds JSON values.

PyYAML's safe loader already refuses to construct Python objects; on top of
that, dates and timestamps stay the strings they were written as (as Go's YAML
reader gives them to kyverno-json), and ``!!binary``/``!!set``/``!!omap`` are
refused, because a policy engine over JSON has no use for other types; a
mapping that repeats a key is an error (as in Go's yaml.v3), wherever the YAML
comes from, so a payload, a policy and a report location all see the same
document. The C loader is used when PyYAML was built with libyaml.

libyaml's composer recurses in C, so a document nested deep enough (about
100,000 levels) crashes the whole process rather than raising; `check_nesting`
refuses documents nested deeper than JSON payloads may be (1024 levels) first.
"""

from __future__ import annotations

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = 1024
_NESTING_INDICATORS = "[{-:?"


def check_nesting(text: str) -> None:
    """Raise a YAML error (with its position) if `text` nests collections more than MAX_DEPTH deep.

    Only texts with enough indicator characters to nest that deep pay for the
    extra pass over libyaml's events (its parser keeps an explicit stack, so
    this pass cannot crash).
    """
    if sum(text.count(indicator) for indicator in _NESTING_INDICATORS) <= MAX_DEPTH:
        return
    depth = 0
    for event in yaml.parse(text, Loader=_Base):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise yaml.MarkedYAMLError(problem=f"nested more than {MAX_DEPTH} levels deep",
                                           problem_mark=event.start_mark)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


class JSONSafeLoader(_Base):  # type: ignore[misc, valid-type]
    """Safe YAML loading restricted to JSON values (timestamps stay strings, repeated keys refused)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            reject_duplicate_keys(node)
        return yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=deep)


def reject_duplicate_keys(node: yaml.MappingNode) -> None:
    """Raise a located YAML error when `node` writes the same key twice (merge keys ``<<`` aside)."""
    seen: dict[tuple, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        identity = (key_node.tag, key_node.value)
        first = seen.setdefault(identity, key_node)
        if first is not key_node:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key_node.value!r} (first defined on line {first.start_mark.line + 1})",
                key_node.start_mark,
            )


def _as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)


def _refuse(loader: yaml.SafeLoader, node: yaml.Node):
    raise yaml.constructor.ConstructorError(
        None, None, f"the YAML type {node.tag} has no JSON equivalent", node.start_mark
    )


JSONSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)
for _tag in ("binary", "set", "omap", "pairs"):
    JSONSafeLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)
