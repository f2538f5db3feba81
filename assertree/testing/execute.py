"""Running one Test: load what it names, run every policy on every resource, keep the responses.

The order is ``kyverno test``'s (``processor/policy_processor.go``): for each
resource, every policy that mutates runs its mutate rules on the output of the
previous one, then every policy that validates runs its validate rules on the
mutated resource (generate rules last). Each phase of each policy is one
`PolicyResponse`.

The test's existing resources (``commands/test/test.go``): its ``resources``,
``targetResources`` and every result's ``cloneSourceResource`` file make the
fake cluster (`ScanContext.cluster`) that mutate-existing targets and clone
sources are looked up in. Each target resource also gets its own
`ResourceResponses`, holding the results that patched it (``TestResponse.Target``).

This is a small run loop over `CompiledPolicy` objects (`languages.base`), so
kyverno-json ValidatingPolicy documents named by a Test run too; the
engine may replace it later. Resources are read as the Kyverno CLI reads them
(`languages.kyverno.manifests`), numbers as float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assertree.languages.base import ScanContext
from assertree.languages.cluster import ResourceSet
from assertree.results import Resource, refused_rules
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
    targets: list = field(default_factory=list)  # manifests.Manifest of targetResources


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
    warnings = [str(item) for policy in policies for item in refused_rules(policy)]
    for name in test.resources:
        if not test.path(name).exists():  # the CLI reports a missing resource file and carries on
            warnings.append(f"failed to load resources: {name}: file not found")
            continue
        for file in _files(test, name, "resources"):
            manifests.extend(read_manifests(file))
    targets = [manifest for name in test.target_resources for file in _files(test, name, "targetResources")
               for manifest in read_manifests(file)]
    context = _scan_context(test, exceptions)
    context.cluster = ResourceSet(item.value for item in (*manifests, *targets, *_clone_sources(test, warnings)))
    return LoadedTest(test, policies, unique(manifests), context, exceptions, warnings, targets)


def _clone_sources(test: KyvernoTest, warnings: list[str]) -> list:
    """The objects of every result's ``cloneSourceResource`` file (a missing one is reported, as by the CLI)."""
    from assertree.languages.kyverno.manifests import read_manifests

    found = []
    for name in dict.fromkeys(expected.clone_source_resource for expected in test.results
                              if expected.clone_source_resource):
        path = test.path(name)
        if not path.is_file():
            warnings.append(f"failed to load cloneSourceResource: {name}: file not found")
            continue
        found.extend(read_manifests(path))
    return found


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
            if policy.rules or refused_rules(policy):  # a response, so that rows of a refused rule say so
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
    return out + _target_responses(loaded, out)


def _target_responses(loaded: LoadedTest, triggers: list[ResourceResponses]) -> list[ResourceResponses]:
    """One entry per target resource: the results (of any trigger) that patched it, one response per policy."""
    from assertree.languages.cluster import identity

    out = []
    for manifest in loaded.targets:
        wanted = identity(manifest.value)
        item = ResourceResponses(manifest.key, manifest.value, target=True)
        for trigger in triggers:
            for response in trigger.responses:
                found = [result for result in response.results
                         if result.target is not None and _same_object(identity(result.target), wanted)]
                if found:
                    item.responses.append(PolicyResponse(response.policy, MUTATE, manifest.value, found[0].target,
                                                         found))
        out.append(item)
    return out


def _same_object(found: tuple, wanted: tuple) -> bool:
    """Kyverno's ``extractPatchedTargetFromEngineResponse``: a target without a namespace takes the patched one's."""
    return found[:2] == wanted[:2] and found[3] == wanted[3] and (not wanted[2] or found[2] == wanted[2])


def _validator(runners: list):
    def validate(resource: Resource) -> list:
        return [found for runner in runners if (found := runner(resource)) is not None]

    return validate


def _info(policy: Any) -> Any:
    return getattr(policy, "policy", policy)


def _existing(test: KyvernoTest, name: str, field_name: str) -> Path:
    path = test.path(name)
    if not path.exists():
        raise KyvernoTestError(f"{field_name}: file not found: {name}", source=str(test.file))
    return path


def _files(test: KyvernoTest, name: str, field_name: str) -> list[Path]:
    """A file the test names, or the files of a folder it names, sorted, as the CLI reads them: policy
    folders recursively (YAML and JSON), resource folders one level deep (``.yaml``/``.yml`` only)."""
    path = _existing(test, name, field_name)
    if not path.is_dir():
        return [path]
    if field_name in ("resources", "targetResources"):
        return sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml"))
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".yaml", ".yml", ".json"))


def _other_policy(document: Any) -> Any:
    """A document of another policy language (kyverno-json's ValidatingPolicy, ...), compiled by the
    language its apiVersion names; a document no language reads is an error."""
    from assertree.languages.load import compile_read

    return compile_read(document)


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
