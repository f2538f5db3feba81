"""``--to vap``: each converted ValidatingPolicy as Kubernetes' ValidatingAdmissionPolicy and its binding.

The two kinds share their CEL and most of their spec (match constraints and
conditions, variables, validations, audit annotations, failure policy); what
is Kyverno's alone is written another way or said:

- ``validationActions`` go on the ValidatingAdmissionPolicyBinding (one per
  policy, binding it cluster-wide; a NamespacedValidatingPolicy's binding
  selects its namespace);
- Kyverno's autogen has no Kubernetes form: each controller group it derives
  (Deployments and the like, CronJobs) becomes a policy of its own, with the
  expressions moved under the Pod template as the autogen moves them;
- ``evaluation`` (background scans, admission off) and ``webhookConfiguration``
  have none: they are left out, with a note.

A policy whose CEL uses what Kubernetes' CEL environment lacks (Kyverno's
``resource``, ``http``, ``image`` and other libraries) cannot be converted;
that is found by compiling the result with assertree's admission language.
MutatingPolicies stay as they are.
"""

from __future__ import annotations

import copy
from typing import Any

from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["to_vap"]

API_VERSION = "admissionregistration.k8s.io/v1"
_SPEC_KEYS = ("failurePolicy", "matchConstraints", "matchConditions", "variables", "validations", "auditAnnotations")


def to_vap(conversion: Any, taken: set[str]) -> None:
    """Rewrite the ValidatingPolicies of `conversion` (a `policy.PolicyConversion`) in place as admission
    policies and bindings; a rule whose policy cannot be one becomes not converted, with the reason."""
    for rule in conversion.rules:
        if not rule.converted:
            continue
        documents: list[dict] = []
        try:
            for document in rule.documents:
                if document["kind"] in ("ValidatingPolicy", "NamespacedValidatingPolicy"):
                    documents.extend(_admission_documents(document, taken, rule.notes))
                else:
                    documents.append(document)
            _check(documents)
        except NotConvertible as refusal:
            rule.refusal = refusal if refusal.path else refusal.at(("spec", "rules", rule.index))
            rule.documents = []
            continue
        rule.documents = documents


def _admission_documents(document: dict, taken: set[str], notes: list[str]) -> list[dict]:
    from assertree.languages.kyverno.cel_policies.autogen import variants
    from assertree.migrate.convert.policy import unique_name

    spec = document["spec"]
    name = document["metadata"]["name"]
    dropped = [key for key in ("evaluation", "webhookConfiguration") if key in spec]
    if dropped:
        notes.append(f"{' and '.join(dropped)} left out: a ValidatingAdmissionPolicy has no such field")
    out = _pair(document, name, spec, spec.get("validationActions") or ["Deny"], taken)
    for group, kinds, rewritten in variants(spec, mutating=False):
        variant_name = unique_name(f"{name}-{'cronjobs' if group == 'cronjobs' else 'controllers'}", taken)
        out.extend(_pair(document, variant_name, rewritten, spec.get("validationActions") or ["Deny"], taken))
        notes.append(f"{', '.join(kinds)}: Kubernetes has no autogen, so {variant_name} checks their Pod template")
    return out


def _pair(document: dict, name: str, spec: dict, actions: list[str], taken: set[str]) -> list[dict]:
    """A ValidatingAdmissionPolicy named `name` with `spec`'s Kubernetes fields, and its binding."""
    from assertree.migrate.convert.policy import unique_name

    metadata: dict[str, Any] = {"name": name}
    for key in ("labels", "annotations"):
        if (document.get("metadata") or {}).get(key):
            metadata[key] = copy.deepcopy(document["metadata"][key])
    policy = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": metadata,
              "spec": {key: copy.deepcopy(spec[key]) for key in _SPEC_KEYS if key in spec}}
    binding_spec: dict[str, Any] = {"policyName": name, "validationActions": list(actions)}
    namespace = (document.get("metadata") or {}).get("namespace")
    if document["kind"].startswith("Namespaced") and namespace:
        binding_spec["matchResources"] = {"namespaceSelector": {
            "matchLabels": {"kubernetes.io/metadata.name": namespace}}}
    binding = {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": unique_name(f"{name}-binding", taken)}, "spec": binding_spec}
    return [policy, binding]


def _check(documents: list[dict]) -> None:
    """NotConvertible when an admission document does not compile (CEL Kubernetes does not have)."""
    from assertree.errors import PolicyError
    from assertree.languages.load import compile_document

    for document in documents:
        if not str(document.get("apiVersion", "")).startswith("admissionregistration.k8s.io/"):
            continue
        try:
            compile_document(document)
        except PolicyError as error:
            raise NotConvertible(f"as a {document['kind']} it does not compile: {error.problem.text()}") from None
