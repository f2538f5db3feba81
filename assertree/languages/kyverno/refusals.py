"""The rule parts assertree cannot run offline: each refuses its own rule, never the policy.

A ClusterPolicy often mixes rules assertree runs with one it cannot (a signed
image check that needs the registry, a rule type not implemented yet). Kyverno
would run them all; refusing the whole policy for one rule would hide every
other rule's result, and a scan over a real policy repository would stop at
the first such rule. So `refusal` looks at one rule and says, as a `Problem`
with the field at fault (a warning: the rule is reported once, when the policy
is loaded), what it needs that assertree does not have; the compiler leaves
that rule (and its autogen copies) out and compiles the others.

What is refused, and why:

- ``validate.assert``: not implemented yet;
- ``verifyImages`` entries with ``attestors`` or ``attestations`` (or the
  legacy ``key``, ``issuer`` and ``annotations``, which Kyverno turns into an
  attestor): checking a signature or an attestation reads it from the image's
  registry (Kyverno's cosign and notary verifiers fetch it there; ``kyverno
  test`` does too);
- CEL that needs a cluster (the ``authorizer``, ``resource.Post``) in a
  ``validate.cel`` rule;
- ``validate.manifests`` attestors other than public keys written in the
  policy: keyless signatures need Fulcio and Rekor, certificates chains and
  ``repository`` bundles need the network, ``k8s://`` and KMS keys a cluster
  or a cloud (`assertree.languages.kyverno.signed_manifests`).

A generate rule Kyverno itself would refuse (a target's namespace and scope,
``cloneList`` kinds) is left out the same way, by `generate_checks`.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import Problem, Severity

__all__ = ["refusal"]

_NOT_YET = {
    ("validate", "assert"): "validate.assert (assertion trees in a ClusterPolicy) is not supported yet",
}
REGISTRY = "assertree never reaches the network"


def refusal(rule: dict, at: tuple) -> Problem | None:
    """Why `rule` (at field path `at` of its policy) cannot run offline; None when it can."""
    name = rule.get("name")
    for (section, key), message in _NOT_YET.items():
        part = rule.get(section)
        if isinstance(part, dict) and part.get(key) is not None:
            return _refused(name, message, (*at, section, key))
    for position, entry in enumerate(rule.get("verifyImages") or []):
        if not isinstance(entry, dict):
            continue
        where = (*at, "verifyImages", position)
        # the legacy key, issuer (keyless) and annotations fields are an attestor (ImageVerification.Convert)
        for key, what in (("attestors", "image signatures"), ("attestations", "image attestations"),
                          ("key", "image signatures"), ("issuer", "image signatures"),
                          ("annotations", "image signatures")):
            if entry.get(key):
                return _refused(name, f"verifying {what} needs the image registry, where they are kept ({REGISTRY})",
                                (*where, key))
        if str(entry.get("type") or "Cosign") not in ("Cosign", "Notary"):
            return _refused(name, f"unknown verifyImages type {entry['type']!r}", (*where, "type"))
    validate = rule.get("validate")
    for path, text in _cel_texts(rule):
        from assertree.languages.kyverno.cel_policies.environment import needs_cluster

        why = needs_cluster(text)
        if why is not None:
            return _refused(name, why, (*at, *path))
    if isinstance(validate, dict) and isinstance(validate.get("manifests"), dict):
        from assertree.languages.kyverno.signed_manifests import offline_problem

        found = offline_problem(validate["manifests"])
        if found is not None:
            path, message = found
            return _refused(name, message, (*at, "validate", "manifests", *path))
    return None


def _cel_texts(rule: dict) -> list[tuple[tuple, str]]:
    """The CEL texts of a ``validate.cel`` rule (and its ``celPreconditions``), with their paths in the rule."""
    found: list[tuple[tuple, str]] = []
    for index, item in enumerate(rule.get("celPreconditions") or []):
        if isinstance(item, dict) and isinstance(item.get("expression"), str):
            found.append((("celPreconditions", index, "expression"), item["expression"]))
    validate = rule.get("validate")
    cel = validate.get("cel") if isinstance(validate, dict) else None
    if not isinstance(cel, dict):
        return found
    for section in ("expressions", "variables", "auditAnnotations"):
        for index, item in enumerate(cel.get(section) or []):
            if not isinstance(item, dict):
                continue
            for key in ("expression", "messageExpression", "valueExpression"):
                if isinstance(item.get(key), str):
                    found.append((("validate", "cel", section, index, key), item[key]))
    return found


def _refused(rule_name: Any, why: str, path: tuple) -> Problem:
    return Problem(f"rule {rule_name!r} is not run: {why}", path=path, severity=Severity.WARNING)
