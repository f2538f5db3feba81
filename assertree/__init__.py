"""assertree: validate JSON and YAML against kyverno-json ValidatingPolicy assertion trees.

    import assertree
    policies = assertree.load_policies("policies/")
    result = assertree.scan(resources, policies)

The names below load their modules on first use, so ``import assertree`` is
cheap for a command that needs only part of the library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_policies": "assertree.languages.load",
    "policy_from_mapping": "assertree.languages.load",
    "scan": "assertree.engine.scan",
    "ScanResult": "assertree.results",
    "RuleResult": "assertree.results",
    "Violation": "assertree.results",
    "FieldError": "assertree.results",
    "Resource": "assertree.results",
    "Policy": "assertree.languages.kyverno_json.model",
    "Rule": "assertree.languages.kyverno_json.model",
    "AssertreeError": "assertree.errors",
    "PolicyError": "assertree.errors",
    "PayloadError": "assertree.errors",
    "UsageError": "assertree.errors",
    "read_payload": "assertree.inputs.payload",
    "resources_from": "assertree.inputs.payload",
}

__all__ = [  # noqa: RUF022  (grouped as _EXPORTS)
    "load_policies", "policy_from_mapping", "scan", "ScanResult", "RuleResult", "Violation", "FieldError",
    "Resource", "Policy", "Rule", "AssertreeError", "PolicyError", "PayloadError", "UsageError",
    "read_payload", "resources_from",
]

if TYPE_CHECKING:
    from assertree.engine.scan import scan
    from assertree.errors import AssertreeError, PayloadError, PolicyError, UsageError
    from assertree.inputs.payload import read_payload, resources_from
    from assertree.languages.load import load_policies, policy_from_mapping
    from assertree.languages.kyverno_json.model import Policy, Rule
    from assertree.results import FieldError, Resource, RuleResult, ScanResult, Violation


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'assertree' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
