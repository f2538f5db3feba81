"""Running one Test: load what it names, run every policy on every resource, keep the responses.

The order is ``kyverno test``'s (``processor/policy_processor.go``): for each
resource, every policy that mutates runs its mutate rules on the output of the
previous one, then every policy that validates runs its validate rules on the
mutated resource. Each phase of each policy is one `PolicyResponse`.

This is a small run loop over `CompiledPolicy` objects (`languages.base`), so
kyverno-json ValidatingPolicy documents named by a Test run too; the
engine may replace it later. Resources are read as the Kyverno CLI reads them
(`languages.kyverno.manifests`), numbers as float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError
from assertree.languages.base import ScanContext
from assertree.results import Resource
from assertree.testing.responses import MUTATE, VALIDATE, PolicyResponse, ResourceResponses
from assertree.testing.testfile import KyvernoTest, KyvernoTestError


@dataclass
class LoadedTest:
    """A Test with its inputs read and its policies compiled."""

    test: KyvernoTest
    policies: list  # CompiledPolicy objects (Kyverno) and kyverno-json policies
    resources: list  # manifests.Manifest, unique, in file order
    context: ScanContext
    exceptions: list = field(default_factory=list)  # parsed PolicyExceptions
    warnings: list[str] = field(default_factory=list)  # problems the CLI reports without stopping


def load_test(test: KyvernoTest) -> LoadedTest:
    """Read every file `test` names; raises an AssertreeError naming the file at fault."""
    from assertree.languages.kyverno import bridge
    from assertree.languages.kyverno.language import load_kyverno_documents
    from assertree.languages.kyverno.manifests import read_manifests, unique

    documents = load_kyverno_documents([file for name in test.policies for file in _files(test, name, "policies")])
    policies: list[Any] = list(documents.policies)
    for document in documents.others:
        policies.append(_other_policy(document))
    exceptions = []  # as in the CLI, only the files under `exceptions:` give PolicyExceptions
    for name in test.exceptions:
        path = _existing(test, name, "exceptions")
        exceptions.extend(bridge.parse_exceptions(load_kyverno_documents([path]).exceptions, str(path)))
    manifests = []
    for name in test.resources:  # a missing file fails the test (the CLI fails only on the first one)
        for file in _files(test, name, "resources"):
            manifests.extend(read_manifests(file))
    context = _scan_context(test, exceptions)
    return LoadedTest(test, policies, unique(manifests), context, exceptions)


def run_loaded(loaded: LoadedTest) -> list[ResourceResponses]:
    """Every policy on every resource of `loaded`, in kyverno test's order."""
    from assertree.languages.kyverno.manifests import to_float64

    mutators = []
    validators = []
    for policy in loaded.policies:
        if hasattr(policy, "mutator"):
            mutator = policy.mutator(loaded.context)
            if mutator is not None:
                mutators.append((policy, mutator))
            if policy.rules:
                validators.append((policy, _validator([rule.runner(loaded.context) for rule in policy.rules])))
        else:
            validators.append((policy, _kyverno_json_validator(policy)))
    out = []
    for manifest in loaded.resources:
        value = to_float64(manifest.value)
        item = ResourceResponses(manifest.key, value)
        for policy, mutator in mutators:
            before = Resource(value, source=manifest.source, document=manifest.document)
            after, results = mutator(before)
            item.responses.append(PolicyResponse(_info(policy), MUTATE, value, after.value, list(results)))
            value = after.value
        resource = Resource(value, source=manifest.source, document=manifest.document)
        for policy, validate in validators:
            item.responses.append(PolicyResponse(_info(policy), VALIDATE, value, value, validate(resource)))
        out.append(item)
    return out


def _validator(runners: list):
    def validate(resource: Resource) -> list:
        return [found for runner in runners if (found := runner(resource)) is not None]

    return validate


def _info(policy: Any) -> Any:
    return getattr(policy, "policy", policy)


def _existing(test: KyvernoTest, name: str, field_name: str) -> Path:
    """The file the test names in `field_name`; a file that is not there fails the test, naming it."""
    path = test.path(name)
    if not name.strip() or not path.exists():
        raise KyvernoTestError(f"{field_name}: file not found: {name!r} ({path})", source=str(test.file))
    return path


def _files(test: KyvernoTest, name: str, field_name: str) -> list[Path]:
    """A file the test names, or the files of a folder it names, sorted, as the CLI reads them: policy
    folders recursively (YAML and JSON), resource folders one level deep (``.yaml``/``.yml`` only)."""
    path = _existing(test, name, field_name)
    if not path.is_dir():
        return [path]
    if field_name == "resources":
        return sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml"))
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".yaml", ".yml", ".json"))


def _other_policy(document: Any) -> Any:
    """A document of another policy language (kyverno-json's ValidatingPolicy, ...), compiled by the
    language its apiVersion names; a document no language reads is an error."""
    from assertree.languages.load import compile_document

    try:
        return compile_document(document.value, source=document.path, index=document.index, line=document.line)
    except AssertreeError as error:
        line, column = document.locate(error.path) if error.path else (document.line, None)
        raise error.located(source=document.path, line=line, column=column) from None


def _kyverno_json_validator(policy: Any):
    """A kyverno-json policy's rules on one resource, through the kyverno-json scan loop."""
    from assertree.engine.scan import scan

    def validate(resource: Resource) -> list:
        return list(scan([resource], [policy]).results)

    return validate


def _scan_context(test: KyvernoTest, exceptions: list[dict]) -> ScanContext:
    """The values file, user info and exceptions of `test`, as the Kyverno language reads them."""
    from assertree.languages.kyverno import bridge

    values = None
    if test.variables:
        values = bridge.read_values_file(_existing(test, test.variables, "variables"))
        if not getattr(values, "typed", True):  # the CLI of 2026 refuses the untyped form too
            raise KyvernoTestError(f"values file {test.variables} uses the deprecated untyped schema: add "
                                   "'apiVersion: cli.kyverno.io/v1alpha1' and 'kind: Values'", source=str(test.file))
    elif test.values:
        values = bridge.values_from_mapping(test.values)
    user_info = bridge.read_user_info_file(_existing(test, test.userinfo, "userinfo")) if test.userinfo else None
    if user_info is not None and not getattr(user_info, "typed", True):
        raise KyvernoTestError(f"userInfo file {test.userinfo} uses the deprecated untyped schema: add "
                               "'apiVersion: cli.kyverno.io/v1alpha1' and 'kind: UserInfo'", source=str(test.file))
    operation = bridge.global_operation(values) or "CREATE"
    context = ScanContext(values=values, user_info=user_info, operation=operation, exceptions=tuple(exceptions))
    if test.context:  # the CEL context file: resources and image data the CEL lookups read offline
        from assertree.languages.kyverno.cel_policies.environment import read_context_file

        # ScanContext has no field for it yet; the CEL language reads it as `lookups` (see the report)
        context.lookups = read_context_file(_existing(test, test.context, "context"))
    return context
