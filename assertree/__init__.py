"""assertree: validate JSON and YAML against declarative policies, offline.

    import assertree
    policies = assertree.load_policies("policies/")
    resources = assertree.load_resources(["plan.json"], terraform=True).resources
    result = assertree.scan(resources, policies)
    print(assertree.render("sarif", result))
    for problem in assertree.lint(["policies/"]):
        print(problem)

The names below load their modules on first use, so ``import assertree`` is
cheap for a command that needs only part of the library.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `import assertree` stays cheap

__version__ = "0.1.0"

_EXPORTS = {
    # loading
    "load_policies": "assertree.languages.load",
    "compile_document": "assertree.languages.load",
    "policy_from_mapping": "assertree.languages.load",
    "load_resources": "assertree.inputs.resources",
    "load_bindings": "assertree.inputs.bindings",
    "read_payload": "assertree.inputs.payload",
    "resources_from": "assertree.inputs.payload",
    # running and reporting
    "scan": "assertree.engine.scan",
    "lint": "assertree.languages.load",
    "render": "assertree.report",
    "ReportOptions": "assertree.report.options",
    "ScanContext": "assertree.languages.base",
    # results
    "Status": "assertree.results",
    "ScanResult": "assertree.results",
    "RuleResult": "assertree.results",
    "RuleError": "assertree.results",
    "Violation": "assertree.results",
    "FieldError": "assertree.results",
    "Resource": "assertree.results",
    "PolicyInfo": "assertree.results",
    "RuleInfo": "assertree.results",
    # problems with inputs
    "Problem": "assertree.errors",
    "Location": "assertree.errors",
    "Severity": "assertree.errors",
    "AssertreeError": "assertree.errors",
    "PolicyError": "assertree.errors",
    "PayloadError": "assertree.errors",
    "UsageError": "assertree.errors",
}

__all__ = [  # noqa: RUF022 - grouped as in _EXPORTS (a test checks the two agree)
    "load_policies", "compile_document", "policy_from_mapping", "load_resources", "load_bindings", "read_payload",
    "resources_from", "scan", "lint", "render", "ReportOptions", "ScanContext", "Status", "ScanResult",
    "RuleResult", "RuleError", "Violation", "FieldError", "Resource", "PolicyInfo", "RuleInfo", "Problem",
    "Location", "Severity", "AssertreeError", "PolicyError", "PayloadError", "UsageError", "__version__",
]

if TYPE_CHECKING:
    from typing import Any

    from assertree.engine.scan import scan
    from assertree.errors import (
        AssertreeError,
        Location,
        PayloadError,
        PolicyError,
        Problem,
        Severity,
        UsageError,
    )
    from assertree.inputs.bindings import load_bindings
    from assertree.inputs.payload import read_payload, resources_from
    from assertree.inputs.resources import load_resources
    from assertree.languages.base import ScanContext
    from assertree.languages.load import compile_document, lint, load_policies, policy_from_mapping
    from assertree.report import render
    from assertree.report.options import ReportOptions
    from assertree.results import (
        FieldError,
        PolicyInfo,
        Resource,
        RuleError,
        RuleInfo,
        RuleResult,
        ScanResult,
        Status,
        Violation,
    )


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'assertree' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
