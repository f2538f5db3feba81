"""``kyverno apply --policy-report``: the openreports.io/v1alpha1 reports Kyverno 1.19's CLI prints, and the
PolicyExceptions ``--generate-exceptions`` prints.

At kyverno/kyverno 111e07bb (``cmd/cli/kubectl-kyverno/report/report.go``,
``pkg/utils/report/results.go``, ``commands/apply/print.go``) the CLI prints
one ``openreports.io/v1alpha1`` ``ClusterReport`` named ``merged`` with the
results of every cluster-wide policy, then, after ``---``, one report of kind
``PolicyReport`` per namespaced Policy; YAML (``sigs.k8s.io/yaml``) or, with
``--output-format json``, compact JSON. Before 1.15 the CLI printed
``wgpolicyk8s.io/v1alpha2`` ``ClusterPolicyReport``s; the drop-in follows 1.19,
the release whose command lines it replaces, and report readers that need the
older kind can rename two fields.

Each rule response is one result: ``source`` (``kyverno``,
``KyvernoValidatingPolicy``, ``KyvernoMutatingPolicy``), ``policy``
(``namespace/name`` for a Policy), ``rule``, the policy's
``policies.kyverno.io/category`` and ``severity``, ``timestamp``, ``result``
(a failure of an unscored policy, or of an Audit one with ``--audit-warn``, is
``warn``), ``scored``, the resource, the rule's message, and ``properties``
(``process``, and the ``exceptions`` that made it a skip). Differences, both
deliberate: the CLI orders policies as Go's map iteration falls, assertree in
the order they were loaded; the timestamp is the time of the run, or
``SOURCE_DATE_EPOCH`` when set (reproducible builds' convention), so a
report can be compared byte for byte.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from assertree.kyverno_cli.apply import ApplyRun
from assertree.kyverno_cli.goyaml import marshal as yaml_text
from assertree.kyverno_cli.responses import audit, is_kyverno_policy, rule_name, rule_status
from assertree.report.gojson import Struct, marshal
from assertree.results import FAIL, WARN
from assertree.testing.responses import MUTATE, PolicyResponse

__all__ = ["exceptions_text", "report_results", "reports_text"]

API_VERSION = "openreports.io/v1alpha1"
_SEVERITIES = ("critical", "high", "medium", "low", "info")
_STATUSES = ("pass", "fail", "error", "warn", "skip")


def now() -> int:
    """Seconds since the epoch: ``SOURCE_DATE_EPOCH`` when it is set, else the clock."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    return int(fixed) if fixed.isdigit() else int(time.time())


def report_results(run: ApplyRun, *, audit_warn: bool = False) -> list[tuple[Any, list[Struct]]]:
    """(policy, its results), policies in the order they first gave a rule response."""
    seconds = now()
    by_policy: dict[int, tuple[Any, list[Struct]]] = {}
    for _item, response in run.responses():
        for result in response.results:
            entry = by_policy.setdefault(id(response.policy), (response.policy, []))
            entry[1].append(_result(response, result, audit_warn, seconds))
    return list(by_policy.values())


def _result(response: PolicyResponse, result: Any, audit_warn: bool, seconds: int) -> Struct:
    policy = response.policy
    annotations = getattr(policy, "annotations", None) or {}
    scored = annotations.get("policies.kyverno.io/scored") != "false"
    status = rule_status(policy, result)
    if status == FAIL and (not scored or (audit_warn and audit(policy, _namespace(response.resource)))):
        status = WARN
    namespace = getattr(policy, "namespace", None)
    out = Struct(source=_source(policy), policy=f"{namespace}/{policy.name}" if namespace else policy.name)
    if rule_name(policy, result):
        out["rule"] = rule_name(policy, result)
    if annotations.get("policies.kyverno.io/category"):
        out["category"] = annotations["policies.kyverno.io/category"]
    if annotations.get("policies.kyverno.io/severity") in _SEVERITIES:
        out["severity"] = annotations["policies.kyverno.io/severity"]
    out["timestamp"] = Struct(seconds=seconds, nanos=0)
    if status in _STATUSES:
        out["result"] = str(status)
    if scored:
        out["scored"] = True
    out["resources"] = [_reference(response.patched if response.phase == MUTATE else response.resource)]
    if result.message:
        out["message"] = result.message
    properties = {"process": _process(policy)}
    if result.exception:
        properties["exceptions"] = result.exception
    out["properties"] = properties
    return out


def _source(policy: Any) -> str:
    if is_kyverno_policy(policy):
        return "kyverno"
    return "KyvernoMutatingPolicy" if "Mutating" in policy.kind else "KyvernoValidatingPolicy"


def _process(policy: Any) -> str:
    """``background scan`` when background processing is on (the default), else ``admission review``."""
    spec = (getattr(policy, "document", None) or {}).get("spec") or {}
    if is_kyverno_policy(policy):
        background, admission = spec.get("background", True), spec.get("admission", True)
    else:
        evaluation = spec.get("evaluation") if isinstance(spec.get("evaluation"), dict) else {}
        assert isinstance(evaluation, dict)
        background = (evaluation.get("background") or {}).get("enabled", True)
        admission = (evaluation.get("admission") or {}).get("enabled", True)
    if background is not False:
        return "background scan"
    return "admission review" if admission is not False else ""


def _reference(resource: Any) -> Struct:
    """``corev1.ObjectReference``: kind, namespace, name, uid, apiVersion, resourceVersion, empty ones left out."""
    value = resource if isinstance(resource, dict) else {}
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    out = Struct()
    for name, found in (("kind", value.get("kind")), ("namespace", metadata.get("namespace")),
                        ("name", metadata.get("name")), ("uid", metadata.get("uid")),
                        ("apiVersion", value.get("apiVersion")), ("resourceVersion", metadata.get("resourceVersion"))):
        if found:
            out[name] = found
    return out


def _namespace(resource: Any) -> str:
    metadata = resource.get("metadata") if isinstance(resource, dict) else None
    return str(metadata.get("namespace") or "") if isinstance(metadata, dict) else ""


def _summary(results: Sequence[Struct]) -> Struct:
    counts = {status: sum(1 for result in results if result.get("result") == status) for status in _STATUSES}
    return Struct(**{key: counts[key] for key in ("pass", "fail", "warn", "error", "skip")})


def _report(kind: str, metadata: Struct, results: list[Struct]) -> Struct:
    out = Struct(kind=kind, apiVersion=API_VERSION, metadata=metadata, source="", summary=_summary(results))
    if results:
        out["results"] = results
    return out


def reports_text(run: ApplyRun, *, audit_warn: bool = False, output_format: str = "yaml") -> str:
    """``printReports``: the merged ClusterReport (when a cluster-wide policy gave a result), then ``---``
    and a PolicyReport per namespaced Policy."""
    clustered: list[Struct] = []
    namespaced: list[Struct] = []
    for policy, results in report_results(run, audit_warn=audit_warn):
        namespace = getattr(policy, "namespace", None)
        if namespace:
            metadata = Struct(name=policy.name, namespace=namespace, creationTimestamp=None)
            namespaced.append(_report("PolicyReport", metadata, results))
        else:
            clustered.extend(results)
    out: list[str] = []
    if clustered:
        out.append(_text(_report("ClusterReport", Struct(name="merged", creationTimestamp=None), clustered),
                         output_format))
    for report in namespaced:
        out.append("---\n")
        out.append(_text(report, output_format))
    return "".join(out)


def _text(value: Any, output_format: str) -> str:
    """``fmt.Fprintln(out, string(output))``: YAML (which ends with a line break, so a blank line follows)
    or compact JSON."""
    return (marshal(value) if output_format == "json" else yaml_text(value)) + "\n"


def exceptions_text(run: ApplyRun, *, audit_warn: bool = False, output_format: str = "yaml",
                    ttl: str = "720h0m0s") -> str:
    """``--generate-exceptions``: a ``kyverno.io/v2beta1`` PolicyException for each failed result of a
    cluster-wide policy (``printException``), each after ``---``; `ttl` (Go's duration text, empty for
    none) becomes the ``cleanup.kyverno.io/ttl`` label."""
    out: list[str] = []
    for policy, results in report_results(run, audit_warn=audit_warn):
        if getattr(policy, "namespace", None):
            continue
        for result in results:
            if result.get("result") != "fail":
                continue
            for subject in result["resources"]:
                out.append("---\n")
                exception = _exception(result, subject, ttl)
                out.append((marshal(exception) if output_format == "json" else yaml_text(exception)) + "\n")
    return "".join(out)


def _exception(result: Struct, subject: Struct, ttl: str) -> Struct:
    rule, kind, name, namespace = result.get("rule", ""), subject.get("kind", ""), subject.get("name", ""), \
        subject.get("namespace", "")
    kinds, names, rules = [kind], [name], [rule]
    if rule.startswith("autogen-"):
        if kind == "CronJob":
            kinds += ["Job", "Pod"]
            rules += [rule.replace("autogen-cronjob-", "autogen-"), rule[len("autogen-cronjob-"):]]
        else:
            kinds.append("Pod")
            rules.append(rule[len("autogen-"):])
        names.append(f"{name}-*")
    metadata = Struct(name="-".join([result["policy"], rule, namespace, name]), creationTimestamp=None)
    if ttl:
        metadata = Struct(name=metadata["name"], creationTimestamp=None, labels={"cleanup.kyverno.io/ttl": ttl})
    description = Struct(kinds=kinds)
    if names:
        description["names"] = names
    if namespace:
        description["namespaces"] = [namespace]
    else:
        description["namespaces"] = [""]
    return Struct(kind="PolicyException", apiVersion="kyverno.io/v2beta1", metadata=metadata,
                  spec=Struct(match=Struct(all=[Struct(resources=description)]),
                              exceptions=[Struct(policyName=result["policy"], ruleNames=rules)]))
