"""Structural checks of a ``kyverno.io`` ClusterPolicy/Policy, with a field path per problem.

The JSON Schema (``schemas/kyverno.clusterpolicy.json``) is assertree's own
description of the parts of a policy it reads, not Kyverno's CRD: unknown
fields are refused in rules, ``validate``, ``mutate``, ``foreach`` and
conditions (a misspelt ``preconditon`` would otherwise be ignored and the rule
would apply everywhere); patterns, match filters and context sources are
free-form here and checked where they are compiled. Two rules the schema
cannot say are checked by hand: a rule does exactly one thing (validate,
mutate, generate or verifyImages), and rule names are unique in a policy.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import Problem
from assertree.languages.schema_problems import in_document_order, packaged_schema, schema_problems, type_only

SCHEMA_FILE = "kyverno.clusterpolicy.json"
RULE_TYPES = ("validate", "mutate", "generate", "verifyImages")


def schema() -> dict:
    """The packaged ClusterPolicy schema."""
    return packaged_schema(SCHEMA_FILE)


def problems(document: Any) -> list[Problem]:
    """Every structural problem of `document`, in document order (empty when it is well formed)."""
    return (schema_problems(SCHEMA_FILE, document, type_wording=type_only)
            or in_document_order(document, _rule_problems(document)))


def _rule_problems(document: dict) -> list[Problem]:
    out = []
    seen: dict[str, int] = {}
    for index, rule in enumerate(document["spec"]["rules"]):
        path: tuple[str | int, ...] = ("spec", "rules", index)
        kinds = [kind for kind in RULE_TYPES if rule.get(kind) is not None]
        if not kinds:
            out.append(Problem(f"a rule needs one of: {', '.join(RULE_TYPES)}", path=path))
        elif len(kinds) > 1:
            out.append(Problem(f"a rule does one thing; it already has {kinds[0]!r}", path=path + (kinds[1],)))
        if rule["name"] in seen:
            out.append(Problem(f"duplicate rule name {rule['name']!r} (also spec.rules[{seen[rule['name']]}])",
                               path=path + ("name",)))
        seen.setdefault(rule["name"], index)
    return out
