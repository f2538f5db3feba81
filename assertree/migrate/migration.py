"""A whole migration: read the sources, convert each policy, prove each rule, write DIR, report.

Stages, each in its own module: `sources` (what is read and where it goes),
`convert` (one module per conversion family), `probes` and `proof` (both
policies run by assertree's engines), `testfiles` (tests rewritten for the
converted policies), `writing` (every file through `assertree.writes`),
`report`. This module only wires them, policy by policy, so one policy that
cannot be read or converted never hides the others.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assertree.errors import AssertreeError, Location
from assertree.languages.base import ScanContext
from assertree.migrate import probes as probing
from assertree.migrate.convert.policy import PolicyConversion, convert_policy
from assertree.migrate.proof import (
    MutationRunner,
    Probe,
    Runner,
    converted_rules,
    prove,
    source_mutator,
    source_rules,
    with_operation,
)
from assertree.migrate.report import DIFFERS, NOT_CONVERTED, VERIFIED, ConvertedRef, PolicyEntry, Report, RuleEntry
from assertree.migrate.sources import Layout, layout
from assertree.migrate.testfiles import PolicyNames, relocator, rewrite_test, service_account_user, split_requests

__all__ = ["migrate"]

TARGETS = ("validating", "vap")


@dataclass
class _Source:
    """One ClusterPolicy/Policy document of a source file."""

    file: Path
    index: int
    document: dict
    conversion: PolicyConversion | None = None
    compiled: Any = None
    problem: str | None = None
    entry: PolicyEntry | None = None
    unselected: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)  # `PolicyNames.unselected`
    served: dict[int, tuple[ScanContext, ScanContext]] = field(default_factory=dict)  # a test's context -> it
    # with the ConfigMaps its values give (`migrate.lookups`), by the id of the test's context


@dataclass
class _File:
    """A policy file: its documents in order, each either kept as it is or a source policy."""

    path: Path
    documents: list[Any] = field(default_factory=list)  # dict (kept) or _Source
    json: bool = False


@dataclass
class _Test:
    file: Path
    documents: list[dict]
    tests: list[Any]  # KyvernoTest
    policy_files: set[Path]  # resolved source policy files it names


def migrate(sources: Sequence[str | Path], out: str | Path, *, to: str = "validating",
            resources: Iterable[str | Path] = (), run_tests: bool = True) -> Report:
    """Convert the ClusterPolicies/Policies under `sources` into DIR `out`, prove each rule, rewrite the tests,
    and say what became of each rule. Raises AssertreeError only for unusable arguments (a missing source, an
    unknown target); a file that cannot be read is a problem in the report."""
    from assertree.migrate.sources import SourceError

    if to not in TARGETS:
        raise SourceError(f"unknown --to {to!r} (choose from: {', '.join(TARGETS)})")
    plan = layout(list(sources), out)
    report = Report(out=str(out), notes=list(plan.notes))
    files = [_read(path, report) for path in plan.policy_files]
    policies = [document for file in files for document in file.documents if isinstance(document, _Source)]
    tests = _read_tests(plan.test_files, {source.file.resolve() for source in policies}, report)
    extra = _extra_resources(resources, report)
    taken: set[str] = set()
    for source in policies:
        _convert(source, taken, to)
    for source in policies:
        _prove(source, plan, tests, extra, report, taken)
    _write(plan, files, tests, report)
    if run_tests and tests:
        _run_rewritten(plan, tests, report)
    return report


# -- reading --------------------------------------------------------------------------------------------------


def _read(path: Path, report: Report) -> _File:
    from assertree.documents.reader import load_documents
    from assertree.errors import DocumentError
    from assertree.languages.kyverno.language import is_kyverno_policy

    found = _File(path, json=path.suffix.lower() == ".json")
    try:
        documents = load_documents(path)
    except DocumentError as error:
        report.problems.append(str(error))
        found.documents = [None]
        return found
    for document in documents:
        value = document.value
        if is_kyverno_policy(value):
            found.documents.append(_Source(path, document.index or 0, value))
        else:
            found.documents.append(value)
    return found


def _read_tests(files: list[Path], sources: set[Path], report: Report) -> list[_Test]:
    import yaml

    from assertree.testing.testfile import read_test_file

    out = []
    for file in files:
        try:
            tests = read_test_file(file)
        except AssertreeError as error:
            report.problems.append(str(error.problem.located(Location(str(file)))))  # file:line:col: field: why
            continue
        named = {Path(os.path.normpath(test.path(name).absolute())).resolve() for test in tests
                 for name in test.policies}
        expanded: set[Path] = set()
        for path in named:
            if path.is_dir():
                expanded.update(p.resolve() for p in path.rglob("*") if p.is_file())
            else:
                expanded.add(path)
        if not expanded & sources:
            continue
        documents = [document for document in yaml.safe_load_all(file.read_text(encoding="utf-8"))
                     if isinstance(document, dict)]
        out.append(_Test(file, documents, tests, expanded & sources))
    return out


def _extra_resources(paths: Iterable[str | Path], report: Report) -> list[dict]:
    from assertree.languages.kyverno.manifests import read_manifests, to_float64

    out: list[dict] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            report.problems.append(f"{raw}: resource file or folder not found")
            continue
        files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json")) if path.is_dir() \
            else [path]
        for file in files:
            try:
                out.extend(to_float64(manifest.value) for manifest in read_manifests(file)
                           if isinstance(manifest.value, dict))
            except AssertreeError as error:
                report.problems.append(str(error))
    return out


# -- converting -----------------------------------------------------------------------------------------------


def _convert(source: _Source, taken: set[str], to: str) -> None:
    from assertree.errors import PolicyError
    from assertree.languages.kyverno.language import compile_document

    try:
        source.compiled = compile_document(source.document)
    except PolicyError:
        source.compiled = None  # a rule assertree cannot run: the converted rules are compiled on their own below
    source.conversion = convert_policy(source.document, source.compiled, taken)
    if source.compiled is None:
        source.compiled, source.problem = _compile_converted_rules(source.document, source.conversion)
    if to == "vap":
        from assertree.migrate.convert.vap import to_vap

        to_vap(source.conversion, taken)


def _compile_converted_rules(document: dict, conversion: PolicyConversion) -> tuple[Any, str | None]:
    """The source policy reduced to its converted rules, compiled (autogen kept as the whole policy's)."""
    from assertree.errors import PolicyError
    from assertree.languages.kyverno.autogen import ANNOTATION, autogen_controllers
    from assertree.languages.kyverno.language import compile_document

    kept = [rule.index for rule in conversion.rules if rule.converted]
    if not kept:
        return None, None
    reduced = copy.deepcopy(document)
    reduced["spec"]["rules"] = [document["spec"]["rules"][index] for index in kept]
    annotations = reduced.setdefault("metadata", {}).setdefault("annotations", {}) or {}
    annotations[ANNOTATION] = autogen_controllers(document)
    reduced["metadata"]["annotations"] = annotations
    try:
        return compile_document(reduced), None
    except PolicyError as error:
        return None, f"the source policy cannot run offline: {error.problem.text()}"


# -- proving --------------------------------------------------------------------------------------------------


def _prove(source: _Source, plan: Layout, tests: list[_Test], extra: list[dict], report: Report,
           taken: set[str]) -> None:
    from assertree.errors import PolicyError

    assert source.conversion is not None
    metadata = source.document.get("metadata") or {}
    entry = PolicyEntry(_relative_to_cwd(source.file), str(source.document.get("kind")), str(metadata.get("name")))
    source.entry = entry
    report.policies.append(entry)
    bases = _bases(source, tests, extra)
    for rule in source.conversion.rules:
        if not rule.converted:
            assert rule.refusal is not None
            entry.rules.append(RuleEntry(rule.name, NOT_CONVERTED, rule.refusal.text()))
            continue
        refs = [ConvertedRef("", document["kind"], document["metadata"]["name"]) for document in rule.documents]
        if source.compiled is None:
            entry.rules.append(RuleEntry(rule.name, NOT_CONVERTED, source.problem or "the source policy cannot run"))
            rule.refusal = None
            continue
        _declare_exclusions(source.document["spec"]["rules"][rule.index], rule.documents, bases)
        try:
            compiled = _compile_converted(rule.documents)
        except PolicyError as error:
            entry.rules.append(RuleEntry(rule.name, DIFFERS, f"the converted policy does not compile: "
                                                             f"{error.problem.text()}", refs))
            continue
        raw_rule = source.document["spec"]["rules"][rule.index]
        source_side: Any
        converted_side: Any
        if raw_rule.get("mutate") is not None:
            source_side = MutationRunner([source_mutator(source.compiled, rule.name)])
            converted_side = MutationRunner(compiled)
        else:
            source_side = Runner(source_rules(source.compiled, rule.name))
            audit = any(document["kind"] == "ValidatingAdmissionPolicyBinding"
                        and "Deny" not in document["spec"]["validationActions"] for document in rule.documents)
            converted_side = Runner(converted_rules(compiled), audit=audit)
        cel_rule = (raw_rule.get("validate") or {}).get("cel") is not None
        proof = prove(source_side, converted_side, _probes(raw_rule, source, bases, source_side), exact=cel_rule)
        notes = "; ".join(rule.notes)
        source.unselected[rule.name] = frozenset(
            (str((probe.value.get("metadata") or {}).get("namespace") or ""),
             str((probe.value.get("metadata") or {}).get("name") or "")) for probe in proof.unselected)
        if proof.verified:
            entry.rules.append(RuleEntry(rule.name, VERIFIED, notes, refs, proof.probes))
        else:
            examples = [disagreement.text() for disagreement in proof.disagreements[:3]]
            reason = (f"{proof.differing} of {proof.probes} resources get another verdict, e.g. "
                      + "; ".join(examples)) if proof.probes else "no resource to prove it on"
            if cel_rule and any((d.source, d.converted) == ("fail", "error") for d in proof.disagreements):
                reason = ("an expression that cannot be evaluated fails a validate.cel rule in Kyverno (its "
                          "admission validator denies on an evaluation error) and is an error in a "
                          "ValidatingPolicy: " + reason)
            overridden = _values_of_the_resource(source, bases, rule.name)
            if overridden:
                reason = (f"the test's values set {', '.join(overridden)}, which Kyverno reads instead of the "
                          "resource's own field, while the converted policy reads the resource: " + reason)
            entry.rules.append(RuleEntry(rule.name, DIFFERS, reason, refs, proof.probes,
                                         [d.text() for d in proof.disagreements[:5]]))
    _merge_mutate_rules(source, bases, report, taken)


def _declare_exclusions(rule: dict, documents: list[dict], bases: list[tuple[dict, str, ScanContext]]) -> None:
    """The converted ValidatingPolicies of `rule` also exclude declaratively what its ``exclude`` excludes by
    name (`matching.declared_exclusions`; the tests' resources its wildcard names match), unless that would
    stop Kyverno's CEL autogen (which takes match constraints that select Pods and nothing else)."""
    from assertree.languages.kyverno.cel_policies.autogen import can_autogen
    from assertree.migrate.convert.matching import declared_exclusions

    seen = [(str(value.get("kind") or ""), str((value.get("metadata") or {}).get("name") or ""))
            for value, _origin, _context in bases]
    excluded = declared_exclusions(rule, seen)
    if not excluded:
        return
    for document in documents:
        constraints = (document.get("spec") or {}).get("matchConstraints")
        if document.get("kind") in ("ValidatingPolicy", "NamespacedValidatingPolicy") and \
                isinstance(constraints, dict) and not can_autogen(constraints):
            constraints["excludeResourceRules"] = copy.deepcopy(excluded)


def _values_of_the_resource(source: _Source, bases: list[tuple[dict, str, ScanContext]], rule: str) -> list[str]:
    """The ``request.object``/``request.oldObject`` fields the tests' values set for `rule` of `source` (the
    Kyverno CLI reads them in place of the resource's; a CEL policy reads the resource)."""
    policy = str((source.document.get("metadata") or {}).get("name") or "")
    found: set[str] = set()
    for values in {id(context.values): context.values for _, _, context in bases if context.values is not None
                   and hasattr(context.values, "policies")}.values():
        given = [values.global_values]
        given.extend(resource.values for candidate in values.policies if candidate.name == policy
                     for resource in candidate.resources)
        rule_values = values.rule(policy, rule)
        if rule_values is not None:
            given.append(rule_values.variables())
        found.update(key for keys in given for key in keys
                     if key.startswith(("request.object.", "request.oldObject.")))
    return sorted(found)


def _compile_converted(documents: list[dict]) -> list[Any]:
    """The converted documents compiled by their languages (admission policies joined to their bindings);
    PolicyError for the first that does not compile."""
    from assertree.languages.load import compile_document, link

    policies, _unlinked = link([compile_document(document) for document in documents])
    return policies


def _merge_mutate_rules(source: _Source, bases: list[tuple[dict, str, ScanContext]], report: Report,
                        taken: set[str]) -> None:
    """A policy's converted mutate rules as one MutatingPolicy (`convert.merge`), when it does what the source
    policy does (proven on the rules' probes together); else they stay one policy each, with a note."""
    from assertree.errors import PolicyError
    from assertree.migrate.convert.merge import merge_mutating
    from assertree.migrate.convert.policy import unique_name

    assert source.conversion is not None and source.entry is not None
    if source.compiled is None:
        return
    raw_rules = source.document["spec"]["rules"]
    chosen = [(rule, entry) for rule, entry in zip(source.conversion.rules, source.entry.rules)
              if entry.status != NOT_CONVERTED and raw_rules[rule.index].get("mutate") is not None and rule.documents]
    if len(chosen) < 2:
        return
    policy = str((source.document.get("metadata") or {}).get("name") or "policy")
    merged = merge_mutating(unique_name(policy, taken), [rule.documents[0] for rule, _ in chosen])
    names = ", ".join(rule.name for rule, _ in chosen)
    if merged is None:
        return
    documents = [merged]
    if any(len(rule.documents) > 1 for rule, _ in chosen):
        from assertree.migrate.convert.policy import companion

        documents.append(companion(merged, taken))
    try:
        compiled = _compile_converted(documents)
    except PolicyError as error:
        report.notes.append(f"{_relative_to_cwd(source.file)}: rules {names} stay one MutatingPolicy each: as one "
                            f"policy they do not compile: {error.problem.text()}")
        return
    source_side = MutationRunner([source_mutator(source.compiled, *(rule.name for rule, _ in chosen))])
    probes = (probe for rule, _ in chosen for probe in _probes(raw_rules[rule.index], source, bases, source_side))
    proof = prove(source_side, MutationRunner(compiled), probes, each_rule=[rule.name for rule, _ in chosen])
    if not proof.verified:
        example = proof.disagreements[0].text() if proof.disagreements else "no resource to prove it on"
        report.notes.append(f"{_relative_to_cwd(source.file)}: rules {names} stay one MutatingPolicy each (Kyverno "
                            f"applies them in turn, so a test row expecting the whole policy's result can fail): "
                            f"as one policy {proof.differing} of {proof.probes} resources differ, e.g. {example}")
        return
    refs = [ConvertedRef("", document["kind"], document["metadata"]["name"]) for document in documents]
    for rule, entry in chosen:
        rule.documents = documents
        entry.converted = [ConvertedRef("", ref.kind, ref.name) for ref in refs]
        rule.notes = [note for note in rule.notes if not note.startswith("ReplicationController:")]
        if len(documents) > 1:
            rule.notes.append("ReplicationController: Kyverno's CEL autogen does not cover it, so a companion "
                              f"policy {documents[1]['metadata']['name']} does")
        rule.notes.append(f"one MutatingPolicy with rules {names}, applied in turn as Kyverno applies them "
                          f"(verified together on {proof.probes:,} resources)")
        own = proof.rule_disagreements.get(rule.name)
        if own and entry.status != NOT_CONVERTED:
            examples = [disagreement.text() for disagreement in own]
            entry.status = DIFFERS
            entry.examples = examples[:5]
            entry.reason = "; ".join([*rule.notes, (
                f"its own status is not the merged policy's on {len(own)}{'+' if len(own) >= 20 else ''} resources "
                "(a test row naming this rule expects the rule's status), e.g. " + "; ".join(examples[:3]))])
        elif entry.status == VERIFIED:
            entry.reason = "; ".join(rule.notes)


def _bases(source: _Source, tests: list[_Test], extra: list[dict]) -> list[tuple[dict, str, ScanContext]]:
    """The resources of the tests naming the source's file, each with its test's context; then `extra`."""
    from assertree.languages.kyverno.manifests import to_float64
    from assertree.testing.execute import load_inputs

    out: list[tuple[dict, str, ScanContext]] = []
    for test in tests:
        if source.file.resolve() not in test.policy_files:
            continue
        for kyverno_test in test.tests:
            try:
                loaded = load_inputs(kyverno_test)
            except AssertreeError:
                continue
            for manifest in loaded.resources:
                value = to_float64(manifest.value)
                if isinstance(value, dict):
                    out.append((value, f"{_relative_to_cwd(test.file)}", loaded.context))
    for value in extra:
        out.append((value, "--resources", ScanContext()))
    return out


def _resource_context(context: ScanContext, source: _Source, value: dict) -> ScanContext:
    """`context`, under the operation the values file gives this resource for the source policy, if any (the
    Kyverno CLI reads it for a ClusterPolicy; both sides of the proof run under it), and with the ConfigMaps its
    values give the policy's ``configMap`` entries (`migrate.lookups`)."""
    context = _served(context, source)
    values = context.values
    if values is None or not hasattr(values, "resource_values"):
        return context
    name = str((value.get("metadata") or {}).get("name") or "")
    policy = str((source.document.get("metadata") or {}).get("name") or "")
    given = values.resource_values(policy, name)
    user = service_account_user(given) if context.user_info is None else None
    if user is not None:  # the CEL side reads the service account from the requester's name
        context = context.replace(user_info={"userInfo": {"username": user}}, memo={})
    operation = given.get("request.operation")
    if operation in ("CREATE", "UPDATE", "DELETE") and operation != context.operation:
        return with_operation(context, operation)
    return context


def _served(context: ScanContext, source: _Source) -> ScanContext:
    """`context` with the ConfigMaps its values give `source`'s ``configMap`` entries, made once per context."""
    from assertree.migrate.lookups import config_maps, with_config_maps

    found = source.served.get(id(context))
    if found is None or found[0] is not context:
        found = (context, with_config_maps(context, config_maps([source.document], context.values)))
        source.served[id(context)] = found
    return found[1]


def _probes(rule: dict, source: _Source, bases: list[tuple[dict, str, ScanContext]], runner: Any):
    """Every probe of a rule: each base resource (with UPDATE and DELETE too), its variants, and its Pods
    wrapped in the controllers the rule's autogen covers."""
    from assertree.migrate.convert.matching import BUILT_IN_KINDS
    from assertree.migrate.convert.policy import autogen_kinds, selects_delete

    reads = probing.reads_of(rule)
    controllers = sorted(autogen_kinds(rule, source.compiled))
    operations = ("UPDATE", "DELETE") if selects_delete(rule) else ("UPDATE",)
    if not bases:
        bases = [(resource, "made from the rule", ScanContext()) for resource in _made_up(rule)]
    def probe(value: dict, origin: str, context: ScanContext) -> Probe:
        return Probe(value, origin, _resource_context(context, source, value))

    for value, origin, context in bases:
        if context.operation == "DELETE" and "DELETE" not in operations:
            continue
        base = probe(value, origin, context)
        base.exact = origin != "--resources"
        yield base
        for operation in operations:
            if operation != context.operation:  # unless the values file fixes the resource's operation
                other = probe(value, origin, with_operation(context, operation))
                if other.context.operation == operation:
                    yield other
        first = runner(value, context)
        applies = (first[0] if isinstance(first, tuple) else first) is not None or value.get("kind") in _match_kinds(
            rule)
        if not applies:
            continue
        admissible = value.get("kind") in BUILT_IN_KINDS
        for changed, what in probing.variants(value, reads, admissible=admissible):
            yield probe(changed, f"{origin}: {what}", context)
            if value.get("kind") == "Pod":
                for wrapped, how in probing.wrapped_in_controllers(changed, controllers):
                    yield probe(wrapped, f"{origin}: {what}, {how}", context)
        if value.get("kind") == "Pod":
            for wrapped, how in probing.wrapped_in_controllers(value, controllers):
                yield probe(wrapped, f"{origin}: {how}", context)


def _match_kinds(rule: dict) -> set[str]:
    from assertree.languages.kyverno.match import parse_kind_selector

    match = rule.get("match") or {}
    kinds = set()
    for block in [match, *(match.get("any") or []), *(match.get("all") or [])]:
        for kind in (block.get("resources") or {}).get("kinds") or []:
            kinds.add(parse_kind_selector(kind)[2])
    return kinds


def _made_up(rule: dict) -> list[dict]:
    """A resource of each kind the rule matches, when no test gives one (the variants fill it in): in the
    ``default`` namespace unless the kind is cluster-scoped, with the spec the API server requires (a Pod's
    container, an Ingress's backend: `_MADE_UP_SPECS`): a ClusterRole in a namespace, or a Pod without
    ``spec.containers``, is an object the API server never admits, on which the source and its conversion may
    disagree for no reason a cluster would ever show."""
    from assertree.languages.kubernetes.resources import is_namespaced
    from assertree.migrate.convert.matching import BUILT_IN_KINDS

    out = []
    for kind in sorted(_match_kinds(rule)):
        if "*" in kind or "?" in kind:
            continue
        group, version = BUILT_IN_KINDS.get(kind, ("example.com", "v1"))
        api_version = f"{group}/{version}" if group else version
        metadata = {"name": "probe", "namespace": "default"} if is_namespaced(api_version, kind) else {"name": "probe"}
        made: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
        if kind in _MADE_UP_SPECS:  # what the API server requires of these kinds' specs
            made["spec"] = copy.deepcopy(_MADE_UP_SPECS[kind])
        out.append(made)
    return out


_POD_SPEC = {"containers": [{"name": "probe", "image": "probe"}]}
_TEMPLATE = {"metadata": {"labels": {"app": "probe"}}, "spec": _POD_SPEC}
_MADE_UP_SPECS: dict[str, dict] = {
    "Pod": _POD_SPEC,
    **{kind: {"selector": {"matchLabels": {"app": "probe"}}, "template": _TEMPLATE}
       for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")},
    "ReplicationController": {"selector": {"app": "probe"}, "template": _TEMPLATE},
    "Job": {"template": {**_TEMPLATE, "spec": {**_POD_SPEC, "restartPolicy": "Never"}}},
    "CronJob": {"schedule": "0 * * * *", "jobTemplate": {"spec": {
        "template": {**_TEMPLATE, "spec": {**_POD_SPEC, "restartPolicy": "Never"}}}}},
    "Service": {"ports": [{"port": 80}]},
    "Ingress": {"defaultBackend": {"service": {"name": "probe", "port": {"number": 80}}}},
}
"""The least spec the API server admits for the kinds that need one (a Pod's container, a controller's selector
and template, a Service's port, an Ingress's backend)."""


# -- writing --------------------------------------------------------------------------------------------------


def _write(plan: Layout, files: list[_File], tests: list[_Test], report: Report) -> None:
    from assertree.migrate.writing import copy_file, write_documents

    written_tests = {test.file.resolve() for test in tests}  # rewritten by `_write_test`, or left out there
    for file in files:
        target = plan.target(file.path)
        if target is None or file.path.resolve() in written_tests:
            continue
        if any(document is None for document in file.documents):
            continue  # unreadable: reported, not written
        documents: list[Any] = []
        for document in file.documents:
            if not isinstance(document, _Source):
                documents.append(document)
                continue
            documents.extend(_written(document, plan, target))
        json_file = file.json and len(documents) == 1
        if file.json and not json_file:
            target = target.with_suffix(".yaml")
            _retarget(file.documents, plan, target)
        write_documents(target, documents, json_file=json_file)
    for path in plan.other_files:
        if path.resolve() in written_tests:
            continue
        target = plan.target(path)
        if target is not None:
            copy_file(path, target)
    for test in tests:
        _write_test(test, plan, files, report)
    report.documents = sum(len(rule.converted) for policy in report.policies for rule in policy.rules)


def _written(source: _Source, plan: Layout, target: Path) -> list[dict]:
    """The documents a source policy becomes in its file: converted ones, then the remainder."""
    assert source.conversion is not None and source.entry is not None
    out: list[dict] = []
    relative = _relative_to(target, plan.out)
    for rule, entry in zip(source.conversion.rules, source.entry.rules):
        if entry.status == NOT_CONVERTED:
            continue
        for document, ref in zip(rule.documents, entry.converted):
            ref.file = relative
            if not any(document is written for written in out):  # merged rules share their documents
                out.append(document)
    if any(entry.status == NOT_CONVERTED for entry in source.entry.rules):
        out.append(_remainder(source))
    return out


def _remainder(source: _Source) -> dict:
    assert source.conversion is not None and source.entry is not None
    left = [index for index, entry in enumerate(source.entry.rules) if entry.status == NOT_CONVERTED]
    remainder = copy.deepcopy(source.document)
    remainder["spec"]["rules"] = [source.document["spec"]["rules"][index] for index in left]
    return remainder


def _retarget(documents: list[Any], plan: Layout, target: Path) -> None:
    relative = _relative_to(target, plan.out)
    for document in documents:
        if isinstance(document, _Source) and document.entry is not None:
            for rule in document.entry.rules:
                for ref in rule.converted:
                    ref.file = relative


def _names(sources: Iterable[_Source]) -> dict[str, PolicyNames]:
    out = {}
    for source in sources:
        if source.conversion is None or source.entry is None:
            continue
        metadata = source.document.get("metadata") or {}
        names: dict[str, list[tuple[str, str, frozenset[str]]]] = {}
        for rule, entry in zip(source.conversion.rules, source.entry.rules):
            if entry.status != NOT_CONVERTED:
                names[rule.name] = [(ref.kind, ref.name, _covered(document))
                                    for ref, document in zip(entry.converted, rule.documents)]
        namespace = metadata.get("namespace") if source.document.get("kind") == "Policy" else None
        out[str(metadata.get("name"))] = PolicyNames(
            str(metadata.get("name")), namespace, names, [rule.name for rule in source.conversion.rules],
            any(entry.status == NOT_CONVERTED for entry in source.entry.rules), source.unselected)
    return out


def _write_test(test: _Test, plan: Layout, files: list[_File], report: Report) -> None:
    from assertree.migrate.writing import write_documents

    target = plan.target(test.file)
    if target is None:
        return
    sources = [document for file in files if file.path.resolve() in test.policy_files
               for document in file.documents if isinstance(document, _Source)]
    names = _names(sources)
    relocate = relocator(test.file.parent, target.parent, plan.target)
    notes: list[str] = []
    documents = [rewrite_test(document, names, relocate, notes) for document in test.documents]
    _give_config_maps(test, target, sources, documents, notes)
    converted = {name for policy in names.values() for documents_ in policy.rules.values()
                 for _, name, _ in documents_}
    extra: list[dict] = []
    for original, document in zip(test.documents, documents):
        values_path = original.get("variables")
        if not isinstance(values_path, str) or not converted:
            continue
        values = _read_yaml(test.file.parent / values_path)
        whole, splits = split_requests(document, values, converted, bool(original.get("userinfo")))
        if whole is not None and whole.user:
            document["userinfo"] = _write_user(target.parent, whole)
            notes.append(f"the values give every resource the service account of {whole.user}: the CEL kinds read "
                         f"it from the user info file {document['userinfo']}")
        for request, split, changed in splits:
            values_target = target.parent / f"{Path(values_path).stem}-{request.suffix()}.yaml"
            write_documents(values_target, [changed])
            split["variables"] = values_target.name
            if request.user:
                split["userinfo"] = _write_user(target.parent, request)
            extra.append(split)
            notes.append(f"rows of resources whose values give request.operation {request.operation}"
                         + (f" and the service account of {request.user}" if request.user else "")
                         + f" moved to Test {split['metadata']['name']} (the CEL kinds read the operation of "
                         "globalValues and the requester of a user info file)")
    kept = []
    for original, document in zip(test.documents, documents):
        if original.get("results") and not document.get("results"):
            name = (document.get("metadata") or {}).get("name") or "without a name"
            notes.append(f"Test {name} left out: none of its rows is left for it to check")
        else:
            kept.append(document)
    report.notes.extend(f"{_relative_to_cwd(test.file)}: {note}" for note in notes)
    if kept or extra:
        write_documents(target, [*kept, *extra])


def _give_config_maps(test: _Test, target: Path, sources: list[_Source], documents: list[dict],
                      notes: list[str]) -> None:
    """Each rewritten Test whose values give the sources' ``configMap`` entries gets those ConfigMaps in a
    context file (with what its own context file held), where ``resource.Get`` finds them (`migrate.lookups`)."""
    from assertree.migrate.lookups import config_maps, context_document
    from assertree.migrate.writing import write_documents
    from assertree.testing.execute import load_inputs

    policies = [source.document for source in sources]
    for original, document in zip(test.documents, documents):
        kyverno_test = next((found for found in test.tests if found.document == original), None)
        if kyverno_test is None or kyverno_test.cluster_resources:
            continue  # a fake cluster serves configMap entries and resource.Get alike
        try:
            values = load_inputs(kyverno_test).context.values
        except AssertreeError:
            continue
        maps = config_maps(policies, values)
        if not maps:
            continue
        existing = None
        if kyverno_test.context:
            read = _read_yaml(kyverno_test.path(kyverno_test.context))
            existing = read if isinstance(read, dict) else None
        name = f"configmaps-{_file_stem(kyverno_test.name)}.yaml" if len(documents) > 1 else "configmaps.yaml"
        write_documents(target.parent / name, [context_document(maps, existing)])
        document["context"] = name
        held = ", ".join(f"{namespace}/{cm}" for namespace, cm in maps.objects)
        notes.extend(maps.notes)
        notes.append(f"the values give the ConfigMap{'s' if len(maps.objects) > 1 else ''} {held}: the converted "
                     f"policies read {'them' if len(maps.objects) > 1 else 'it'} with resource.Get from the context "
                     f"file {name}")


def _file_stem(name: str) -> str:
    return "".join(char if char.isalnum() or char in "-_." else "-" for char in name) or "test"


def _run_rewritten(plan: Layout, tests: list[_Test], report: Report) -> None:
    from assertree.testing import run_tests

    targets = [target for test in tests if (target := plan.target(test.file)) is not None and target.exists()]
    if targets:
        run = run_tests(targets)
        report.tests = run.summary_line()
        report.tests_failed = run.failed
        for outcome in run.outcomes:
            where = (plan.out / _relative_to(outcome.file, plan.out)).as_posix()
            if outcome.error is not None:
                report.test_failures.append(f"{where}: {outcome.error}")
            for row in outcome.rows:
                if not row.ok:
                    _api_version, kind, namespace, name = row.resource
                    resource = f"{kind}/{namespace + '/' if namespace else ''}{name}"
                    report.test_failures.append(f"{where}: row {row.expected.index + 1}, {row.policy} on "
                                                f"{resource}: {row.reason}")


def _relative_to_cwd(path: Path) -> str:
    try:
        return Path(os.path.relpath(path.absolute())).as_posix()
    except ValueError:
        return path.absolute().as_posix()


def _relative_to(path: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()
    except ValueError:
        return path.as_posix()


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


def _write_user(folder: Path, request: Any) -> str:
    """A user info file naming `request`'s requester, in `folder`; its name."""
    from assertree.migrate.writing import write_documents

    name = f"userinfo-{request.suffix()}.yaml"
    write_documents(folder / name, [{"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "UserInfo",
                                     "userInfo": {"username": request.user}}])
    return name


def _covered(document: dict) -> frozenset[str]:
    """The resources (plural names) a converted document checks: its match constraints' and, for Kyverno's
    CEL kinds, those its autogen adds."""
    from assertree.languages.kyverno.cel_policies.autogen import variants

    spec = document.get("spec") or {}
    specs = [spec]
    if document.get("kind") in ("ValidatingPolicy", "NamespacedValidatingPolicy", "MutatingPolicy",
                                "NamespacedMutatingPolicy"):
        specs.extend(rewritten for _group, _kinds, rewritten in variants(spec, mutating="mutations" in spec))
    return frozenset(str(resource) for item in specs
                     for rule in ((item.get("matchConstraints") or {}).get("resourceRules") or [])
                     for resource in rule.get("resources") or [])
