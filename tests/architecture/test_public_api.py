"""The public API is pinned: a name added or removed here is a deliberate, reviewed change."""

from __future__ import annotations

import inspect
import subprocess
import sys

import assertree

PUBLIC = {
    "AssertreeError", "FieldError", "Location", "PayloadError", "PolicyError", "PolicyInfo", "Problem",
    "ReportOptions", "Resource", "RuleError", "RuleInfo", "RuleResult", "ScanContext", "ScanResult", "Severity",
    "Status", "UsageError", "Violation", "__version__", "compile_document", "lint", "load_bindings",
    "load_policies", "load_resources", "policy_from_mapping", "read_payload", "render", "resources_from", "scan",
}


def test_the_export_list_is_pinned():
    assert set(assertree.__all__) == PUBLIC
    assert set(assertree.__all__) - {"__version__"} == set(assertree._EXPORTS)  # one entry per lazy export


def test_every_export_resolves():
    for name in assertree.__all__:
        assert getattr(assertree, name) is not None, name


def test_signatures_of_the_main_entry_points():
    assert str(inspect.signature(assertree.load_resources)) == (
        "(paths: 'Sequence[str]', *, terraform: 'bool' = False, include_deleted: 'bool' = False, "
        "pre_process: 'Sequence[str]' = (), freeze: 'bool' = False, payload_format: 'str' = 'auto', jobs: 'int' = 1, "
        "exclude: 'Iterable[str]' = (), fields: 'frozenset[str] | None' = None) -> 'LoadedResources'"
    )
    assert list(inspect.signature(assertree.scan).parameters) == [
        "resources", "policies", "bindings", "context", "jobs", "freeze"]
    assert list(inspect.signature(assertree.render).parameters) == ["format_name", "result", "options"]
    assert list(inspect.signature(assertree.lint).parameters) == ["paths", "exclude"]
    assert list(inspect.signature(assertree.load_policies).parameters) == ["paths", "selector", "exclude"]


def test_the_package_is_typed():
    from importlib import resources

    assert resources.files("assertree").joinpath("py.typed").is_file()


def test_status_names_are_kyvernos():
    assert [status.value for status in assertree.Status] == ["pass", "fail", "error", "skip", "warn"]
    assert assertree.Status.PASS == "pass"  # a StrEnum: JSON reports write the plain word


def test_importing_the_package_loads_no_heavy_module():
    code = ("import sys, assertree; heavy = [m for m in ('jsonschema', 'typer', 'yaml', 'orjson', 're2', "
            "'cryptography', 'assertree.engine', 'assertree.jp') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
