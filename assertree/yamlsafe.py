"""A YAML loader that only ever builds JSON values.

PyYAML's safe loader already refuses to construct Python objects; on top of
that, dates and timestamps stay the strings they were written as (as Go's YAML
reader gives them to kyverno-json), and ``!!binary``/``!!set``/``!!omap`` are
refused, because a policy engine over JSON has no use for other types. The C
loader is used when PyYAML was built with libyaml.

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
    """Safe YAML loading restricted to JSON values (timestamps stay strings)."""


def _as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)


def _refuse(loader: yaml.SafeLoader, node: yaml.Node):
    raise yaml.constructor.ConstructorError(
        None, None, f"the YAML type {node.tag} has no JSON equivalent", node.start_mark
    )


JSONSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)
for _tag in ("binary", "set", "omap", "pairs"):
    JSONSafeLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)
