"""A YAML loader that only ever builds JSON values.

PyYAML's safe loader already refuses to construct Python objects; on top of
that, dates and timestamps stay the strings they were written as (as Go's YAML
reader gives them to kyverno-json), and ``!!binary``/``!!set``/``!!omap`` are
refused, because a policy engine over JSON has no use for other types. The C
loader is used when PyYAML was built with libyaml.
"""

from __future__ import annotations

import yaml

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
