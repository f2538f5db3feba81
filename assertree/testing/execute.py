"""Running one Test: load what it names, run every policy on every resource, keep the responses.

The order is the Kyverno CLI's (``processor/policy_processor.go``,
``ApplyPoliciesOnResource``, which ``kyverno test`` and ``kyverno apply`` share;
`process`): for each resource, every ClusterPolicy/Policy that mutates runs its
mutate rules on the output of the previous one, then every one that validates
runs its validate rules on the mutated resource; then the CEL MutatingPolicies
mutate it further, and the other policies (ValidatingPolicies, kyverno-json
policies) validate the result (generate rules last). Each phase of each policy
is one `PolicyResponse`.

The test's existing resources make one fake cluster (`ScanContext.cluster`,
``commands/test/test.go``): its ``resources``, ``targetResources`` and
``paramResources``, every result's ``cloneSourceResource`` file and, with
``clusterResources``, their resources and CRDs (`lookups.test_cluster`);
mutate-existing targets, clone sources and DeletingPolicies read it, and so do
the lookups when the test has ``clusterResources``. Each target resource also
gets its own `ResourceResponses`, holding the results that patched it
(``TestResponse.Target``).

This is a small run loop over `CompiledPolicy` objects (`languages.base`), so
kyverno-json ValidatingPolicy documents named by a Test run too; the
engine may replace it later. Resources are read as the Kyverno CLI reads them
(`languages.kyverno.manifests`), numbers as float64. After the resources, each
payload runs (`payloads`): JSON payloads through the JSON-mode
ValidatingPolicies, HTTP and Envoy check requests through the authorization
ones. A result's ``operation`` is a run of its own (`with_operation`). The
lookups a test mocks (context file, cluster resources, global context
entries, API call responses) are `lookups`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError
from assertree.languages.base import ScanContext
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
    exceptions: list = field(default_factory=list)  # parsed PolicyExceptions (both groups)
    warnings: list[str] = field(default_factory=list)  # problems the CLI reports without stopping
    invalid: dict[str, str] = field(default_factory=dict)  # policy name -> why it could not be used
    payloads: list = field(default_factory=list)  # payloads.Payload: jsonPayloads, httpPayloads, envoyPayloads
    targets: list = field(default_factory=list)  # manifests.Manifest of targetResources


def load_test(test: KyvernoTest) -> LoadedTest:
    """Read every file `test` names; raises an AssertreeError naming the file at fault.

    A policy document that cannot be used (it does not compile, a field is
    refused) does not stop the test: it is kept in `LoadedTest.invalid` under
    its name, so that its rows are errors while the other policies run.
    """
    from assertree.languages.load import link

    policies, invalid = _load_policies([file for name in test.policies for file in _files(test, name, "policies")])
    policies, unlinked = link(policies)  # admission policies and their bindings; the CLI ignores a stray binding
    loaded = load_inputs(test)
    loaded.policies = policies
    loaded.invalid = invalid
    loaded.warnings = [*(f"binding ignored: {problem}" for problem in unlinked),
                       *(str(item) for policy in policies for item in refused_rules(policy)), *loaded.warnings,
                       *(f"policy {name}: {why}" for name, why in invalid.items())]
    return loaded


def load_inputs(test: KyvernoTest) -> LoadedTest:
    """Everything `test` names except its policies (resources, values, user info, exceptions, params,
    payloads): for callers that bring their own policies (``assertree migrate`` runs a test's resources
    through converted ones)."""
    from assertree.languages.kyverno import bridge
    from assertree.languages.kyverno.language import load_kyverno_documents
    from assertree.languages.kyverno.manifests import read_manifests, unique
    from assertree.testing.payloads import load_payloads

    exceptions = []  # as in the CLI, only the files under `exceptions:` give PolicyExceptions
    for name in test.exceptions:
        path = test.existing(name, "exceptions")
        exceptions.extend(bridge.parse_exceptions(load_kyverno_documents([path]).exceptions, str(path)))
    manifests = []
    warnings: list[str] = []
    for name in test.resources:  # a missing file fails the test (the CLI warns and carries on, see the docs)
        for file in _files(test, name, "resources"):
            manifests.extend(read_manifests(file))
    manifests = unique(manifests)
    targets = [manifest for name in test.target_resources for file in _files(test, name, "targetResources")
               for manifest in read_manifests(file)]
    params = []
    if test.param_resources:  # what admission policy bindings choose their params from, as written (a param
        from assertree.inputs.params import load_params  # without a namespace may be of a cluster-scoped kind)

        params = load_params(test.existing(name, "paramResources") for name in test.param_resources)
    existing = [*(item.value for item in (*manifests, *targets, *_clone_sources(test))), *params]
    context = _scan_context(test, exceptions, existing)
    context.params = tuple(params)
    context.run_unbound = True  # the Kyverno CLI runs a policy no binding names (only its matchConstraints decide)
    context.kubernetes_defaults = False  # the Kyverno CLI evaluates the manifest as written
    return LoadedTest(test, [], manifests, context, exceptions, warnings, {}, load_payloads(test), targets)


def _clone_sources(test: KyvernoTest) -> list:
    """The objects of every result's ``cloneSourceResource`` file (a missing one fails the test, naming it, as a
    missing resource file does)."""
    from assertree.languages.kyverno.manifests import read_manifests

    found = []
    for name in dict.fromkeys(expected.clone_source_resource for expected in test.results
                              if expected.clone_source_resource):
        found.extend(read_manifests(test.existing(name, "cloneSourceResource")))
    return found


def _load_policies(paths: list[Path]) -> tuple[list, dict[str, str]]:
    """The compiled policies of `paths`, document by document, and the ones that could not be (name -> error).

    A document whose name cannot be read fails the whole test (no row could name it)."""
    from assertree.languages.kyverno.language import is_policy_exception, policy_file
    from assertree.languages.load import compile_read, locate

    policies: list[Any] = []
    invalid: dict[str, str] = {}
    for path in paths:
        read = policy_file(path)
        compiled = 0
        with read.checked():  # documents from the cache of checked files: no schema validation again
            for document in read.documents:
                value = document.value
                if is_policy_exception(value):
                    continue
                try:
                    policies.append(compile_read(document))  # refused rules' warnings located in the file
                    compiled += 1
                except AssertreeError as error:
                    located = type(error).of(locate(error.problem, document))
                    metadata = value.get("metadata") if isinstance(value, dict) else None
                    name = metadata.get("name") if isinstance(metadata, dict) else None
                    if not isinstance(name, str) or not name:
                        raise located from None
                    invalid[name] = str(located)
        if compiled == len(read.documents):  # every document compiled: the next run takes them from the cache
            read.remember()
    return policies, invalid


def with_operation(loaded: LoadedTest, operation: str) -> LoadedTest:
    """`loaded` run as a result's ``operation`` asks: it wins over the values file's, and no payload runs
    (the CLI's extra evaluation run per distinct result operation)."""
    from assertree.languages.kyverno.values import Values

    values = loaded.context.values if loaded.context.values is not None else Values({}, ())
    context = loaded.context.replace(operation=operation, values=values.with_operation(operation), memo={})
    return replace(loaded, context=context, payloads=[])


def run_loaded(loaded: LoadedTest, *, explain: bool = False) -> list[ResourceResponses]:
    """Every policy on every resource of `loaded`, in kyverno test's order (`process`), then on every payload;
    then one entry per target resource (`target_responses`). With `explain`, each failing or erroring
    validate result is explained (`assertree.engine.explain`)."""
    explainer = None
    if explain:
        from assertree.engine.explain import Explainer

        explainer = Explainer([rule for policy in loaded.policies for rule in getattr(policy, "rules", ())],
                              loaded.context)
    out = process(loaded.policies, loaded.resources, loaded.context, explainer=explainer)
    targets = target_responses(loaded.targets, out)
    if loaded.payloads:
        out.extend(_payload_responses(loaded, _validators(loaded.policies, loaded.context), explainer))
    return out + targets


def target_responses(targets: list, triggers: list[ResourceResponses]) -> list[ResourceResponses]:
    """One entry per target resource (`languages.kyverno.manifests.Manifest`): the results (of any trigger)
    that patched it, one response per policy."""
    from assertree.languages.kubernetes.resources import identity

    out = []
    for manifest in targets:
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


def process(policies: list, manifests: list, context: ScanContext,
            on_response: Callable[[ResourceResponses, PolicyResponse], None] | None = None,
            explainer: Any = None) -> list[ResourceResponses]:
    """Every policy on every resource (`languages.kyverno.manifests.Manifest`), in the Kyverno CLI's order (see
    the module docstring); resources are evaluated with float64 numbers, as the CLI converts them.
    `on_response` is told each response as it is made (``kyverno apply`` prints mutated resources then);
    `explainer` (`assertree.engine.explain.Explainer`) explains each failing or erroring validate result."""
    from assertree.findings.exceptions import Exempting
    from assertree.languages.kyverno.manifests import to_float64

    exempting = Exempting.of(context.exceptions)
    phases: list[list] = [[], [], [], []]  # ClusterPolicy mutate, ClusterPolicy validate, other mutate, other validate
    for policy in policies:
        kyverno = str(getattr(_info(policy), "api_version", "")).split("/")[0] == "kyverno.io"
        if hasattr(policy, "mutator"):
            mutator = policy.mutator(context)
            if mutator is not None:
                phases[0 if kyverno else 2].append((policy, MUTATE, mutator))
            if policy.rules or refused_rules(policy):  # a response, so that rows of a refused rule say so
                runners = [rule.runner(context) for rule in policy.rules]
                phases[1 if kyverno else 3].append((policy, VALIDATE, _validator(runners)))
        else:
            phases[3].append((policy, VALIDATE, _kyverno_json_validator(policy)))
    steps = [step for phase in phases for step in phase]
    out = []
    for manifest in manifests:
        value = to_float64(manifest.value)
        item = ResourceResponses(manifest.key, value)
        for policy, phase, run in steps:
            resource = Resource(value, source=manifest.source, document=manifest.document)
            if phase == MUTATE:
                after, results = run(resource)
                response = PolicyResponse(_info(policy), MUTATE, value, after.value, list(results))
                value = after.value
            else:
                results = run(resource)
                if exempting:  # kyverno-json policies: the test's PolicyExceptions that name them
                    exempting.apply(results)
                if explainer is not None:
                    explainer.apply(results)
                response = PolicyResponse(_info(policy), VALIDATE, value, value, results)
            item.responses.append(response)
            if on_response is not None:
                on_response(item, response)
        out.append(item)
    return out


def _validators(policies: list, context: ScanContext) -> list:
    """(policy, validate) of every policy that validates: what payloads are checked with."""
    found = []
    for policy in policies:
        if not hasattr(policy, "mutator"):
            found.append((policy, _kyverno_json_validator(policy)))
        elif policy.rules:
            found.append((policy, _validator([rule.runner(context) for rule in policy.rules])))
    return found


def _payload_responses(loaded: LoadedTest, validators: list, explainer: Any = None) -> list[ResourceResponses]:
    """JSON payloads through the JSON-mode ValidatingPolicies, check requests through the authorization ones."""
    from assertree.testing.payloads import JSON

    out = []
    for payload in loaded.payloads:
        item = ResourceResponses(("", "", "", payload.name), payload.value)
        resource = Resource(payload.value, source=str(loaded.test.path(payload.name)))
        for policy, validate in validators:
            spec = getattr(getattr(policy, "policy", None), "spec", None)
            if getattr(spec, "mode", None) != payload.mode or getattr(policy.policy, "mutating", False):
                continue
            if payload.mode == JSON:
                results = validate(resource)
            else:
                found = policy.check_request(payload.mode, resource, loaded.context)
                results = [found] if found is not None else []
            if explainer is not None:
                explainer.apply(results)
            item.responses.append(PolicyResponse(_info(policy), VALIDATE, payload.value, payload.value, results))
        out.append(item)
    return out


def _validator(runners: list):
    def validate(resource: Resource) -> list:
        return [found for runner in runners if (found := runner(resource)) is not None]

    return validate


def _info(policy: Any) -> Any:
    return getattr(policy, "policy", policy)


def _files(test: KyvernoTest, name: str, field_name: str) -> list[Path]:
    """A file the test names, or the files of a folder it names, sorted, as the CLI reads them: policy
    folders recursively (YAML and JSON), resource folders one level deep (``.yaml``/``.yml`` only)."""
    path = test.existing(name, field_name)
    if not path.is_dir():
        return [path]
    if field_name in ("resources", "targetResources"):
        return sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml"))
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".yaml", ".yml", ".json"))


def _kyverno_json_validator(policy: Any):
    """A kyverno-json policy's rules on one resource, through the kyverno-json scan loop."""
    from assertree.engine.scan import scan

    def validate(resource: Resource) -> list:
        return list(scan([resource], [policy]).results)

    return validate


def _scan_context(test: KyvernoTest, exceptions: list, existing: list[Any]) -> ScanContext:
    """The values file, user info, exceptions, fake cluster (of the `existing` objects) and lookups of `test`,
    as the Kyverno language reads them."""
    from assertree.languages.kyverno import bridge
    from assertree.testing.lookups import test_cluster, test_lookups

    values = None
    if test.variables:
        values = bridge.read_values_file(test.existing(test.variables, "variables"))
        if not getattr(values, "typed", True):  # the CLI of 2026 refuses the untyped form too
            raise KyvernoTestError(f"values file {test.variables} uses the deprecated untyped schema: add "
                                   "'apiVersion: cli.kyverno.io/v1alpha1' and 'kind: Values'", source=str(test.file))
    elif test.values:
        values = bridge.values_from_mapping(test.values)
    user_info = bridge.read_user_info_file(test.existing(test.userinfo, "userinfo")) if test.userinfo else None
    if user_info is not None and not getattr(user_info, "typed", True):
        raise KyvernoTestError(f"userInfo file {test.userinfo} uses the deprecated untyped schema: add "
                               "'apiVersion: cli.kyverno.io/v1alpha1' and 'kind: UserInfo'", source=str(test.file))
    operation = bridge.global_operation(values) or "CREATE"
    cluster = test_cluster(test, existing)
    return ScanContext(values=values, user_info=user_info, operation=operation, exceptions=tuple(exceptions),
                       lookups=test_lookups(test, cluster), cluster=cluster)
