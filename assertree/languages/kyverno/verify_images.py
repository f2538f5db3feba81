"""``verifyImages`` rules, offline: what can be decided without an image registry.

Kyverno runs such a rule in two phases, and ``kyverno test`` shows both:

- the image phase (``VerifyAndPatchImages``, after the mutate rules;
  ``pkg/engine/handlers/mutation/mutate_image.go``, ``internal/imageverifier.go``):
  for each image of the resource that an entry's ``imageReferences`` match
  (``skipImageReferences`` left out), signatures and attestations are verified
  against the registry, and with ``mutateDigest`` an image without a digest is
  given the digest its tag resolves to. Offline, signature and attestation
  entries are refused when the policy is loaded (`refusals`); an image that
  already has a digest needs no lookup (nothing to do); resolving a tag needs
  the registry, so such an image gives an ERROR naming it. A rule whose entries
  do nothing for the resource gives no result, as in Kyverno.
- the check phase (``validate_image.go``), for rules with ``verifyDigest`` or
  ``required``: every matching image must have a digest (``verifyDigest``:
  FAIL "missing digest for <image>"), and must have been verified by this
  policy's rule (``required``: the ``kyverno.io/verify-images-scoped``
  annotation, which Kyverno writes after verifying, must say so: FAIL
  "unverified image <image>" otherwise). PASS "image verified" otherwise.

Images are those of Pods and Pod controllers (init, regular and ephemeral
containers), or those the rule's ``imageExtractors`` name for the resource's
kind (a ``/``-separated path, ``*`` for every item, the image under ``value``,
rewritten by ``jmesPath``). ``imageReferences`` match with Kyverno's wildcards.

As in the Kyverno CLI, which reads policies without the CRD's defaults,
``required``, ``verifyDigest`` and ``mutateDigest`` are false unless written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from assertree.explanation import Trace, active, recording
from assertree.languages.kubernetes.resources import resource_key
from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.images import POD_CONTAINERS, POD_SPEC
from assertree.languages.kyverno.prelude import enter_rule
from assertree.languages.kyverno.wildcard import match as wildcard_match
from assertree.results import ERROR, FAIL, PASS, SKIP, Resource, RuleError, RuleResult, Violation

if TYPE_CHECKING:
    from assertree.explanation import Explanation
    from assertree.languages.base import Explain, RuleRunner, ScanContext
    from assertree.languages.kyverno.compile import CompiledKyvernoRule

__all__ = ["image_check_runner", "patch_images", "rule_images"]

SCOPED_ANNOTATION = "kyverno.io/verify-images-scoped"


class ImageError(Exception):
    """An image Kyverno cannot read (a malformed reference, a bad extractor): the rule errors."""


def rule_images(document: Mapping[str, Any], resource: Any) -> list[tuple[str, Any]]:
    """(reference as Kyverno writes it, `images.ImageInfo`) for every image of `resource` the rule looks at."""
    if not isinstance(resource, dict):
        return []
    kind = str(resource.get("kind") or "")
    extractors = document.get("imageExtractors") if isinstance(document.get("imageExtractors"), dict) else None
    if extractors is not None and kind in extractors:
        configs = [_custom(config) for config in extractors[kind] or [] if isinstance(config, dict)]
    elif kind in POD_SPEC:
        configs = [([*POD_SPEC[kind], field, "*"], "image", None) for field in POD_CONTAINERS]
    else:
        return []
    found: list[tuple[str, Any]] = []
    for fields, value, jmes_path in configs:
        _extract(resource, [], list(fields), value, jmes_path, found)
    return found


def _custom(config: Mapping[str, Any]) -> tuple[list[str], str, str | None]:
    fields = [part.strip() for part in str(config.get("path") or "").split("/") if part.strip()]
    value = str(config.get("value") or "")
    if not value and fields:
        value, fields = fields[-1], fields[:-1]
    return fields, value, config.get("jmesPath") or None


def _extract(value: Any, path: list[str], fields: list[str], key: str, jmes_path: str | None,
             found: list[tuple[str, Any]]) -> None:
    from assertree.languages.kyverno.images import image_info
    from assertree.languages.kyverno.substitution import VariableError

    if value is None:
        return
    if fields and fields[0] == "*":
        items = list(enumerate(value)) if isinstance(value, list) else list(value.items()) if isinstance(
            value, dict) else None
        if items is None:
            raise ImageError("invalid type")
        for step, item in items:
            _extract(item, [*path, str(step)], fields[1:], key, jmes_path, found)
        return
    if not isinstance(value, dict):
        raise ImageError("invalid image config")
    if fields:
        _extract(value.get(fields[0]), [*path, fields[0]], fields[1:], key, jmes_path, found)
        return
    image = value.get(key)
    if not isinstance(image, str) or not image.strip():
        return
    if jmes_path:
        from assertree.languages.kyverno.variables import evaluate

        try:
            image = evaluate(jmes_path, image)
        except VariableError as error:
            raise ImageError(f"failed to apply jmespath {jmes_path}: {error}") from None
        if not isinstance(image, str):
            raise ImageError(f"jmespath {jmes_path} must produce a string, but produced {image!r}")
    try:
        info = image_info(image, "/" + "/".join([*path, key]))
    except VariableError as error:
        raise ImageError(str(error)) from None
    found.append((info.reference, info))


def _entries(document: Mapping[str, Any]) -> list[dict]:
    """The rule's ``verifyImages`` entries, with the legacy ``image`` field folded into ``imageReferences``."""
    out = []
    for entry in document.get("verifyImages") or []:
        if not isinstance(entry, dict):
            continue
        references = [str(item) for item in entry.get("imageReferences") or []]
        if entry.get("image"):
            references.append(str(entry["image"]))
        out.append({**entry, "imageReferences": references})
    return out


def _matches(image: str, patterns: list) -> bool:
    return any(wildcard_match(str(pattern), image) for pattern in patterns)


def _matching(document: Mapping[str, Any], resource: Any) -> list[tuple[str, Any]]:
    entries = _entries(document)
    return [(reference, info) for reference, info in rule_images(document, resource)
            if any(_matches(reference, entry["imageReferences"]) for entry in entries)]


def patch_images(compiled: CompiledKyvernoRule, resource: Resource, current: Any,
                 context: ScanContext) -> RuleResult | None:
    """The image phase of a ``verifyImages`` rule on `current`; None when it does nothing for it."""
    policy, rule = compiled.policy, compiled.rule
    document = rule.document
    try:
        if not _matching(document, current):
            return None
    except ImageError as error:
        return _error_result(resource, compiled, current, str(error))
    entered = enter_rule(policy, rule, current, context, context=document.get("context") or [],
                         preconditions=document.get("preconditions"))
    if entered.stop is not None:
        stop = entered.stop
        return RuleResult(resource, policy, rule, stop.status, message=stop.message, error=stop.error,
                          exception=stop.exception, patched=current)
    if entered.session is None:
        return None
    undigested = []
    for entry in _entries(document):
        if not entry.get("mutateDigest"):
            continue
        for reference, info in rule_images(document, current):
            if (_matches(reference, entry["imageReferences"])
                    and not _matches(reference, entry.get("skipImageReferences") or [])
                    and not info.digest):
                undigested.append(reference)
    if not undigested:
        return None
    text = (f"failed to update digest: resolving the digest of {', '.join(dict.fromkeys(undigested))} needs the "
            "image registry (assertree never reaches the network)")
    return RuleResult(resource, policy, rule, ERROR, message=text, patched=current,
                      error=RuleError(text, ("verifyImages",), kind="registry"))


def _error_result(resource: Resource, compiled: CompiledKyvernoRule, current: Any, text: str) -> RuleResult:
    return RuleResult(resource, compiled.policy, compiled.rule, ERROR, identifier=resource_key(current),
                      message=text, error=RuleError(text, ("verifyImages",)), patched=current)


def image_check_runner(compiled: CompiledKyvernoRule, context: ScanContext) -> RuleRunner:
    """The check phase of a ``verifyImages`` rule (``verifyDigest``, ``required``) on one resource."""
    from assertree.languages.kyverno.manifests import to_float64

    document = compiled.rule.document
    entries = [entry for entry in _entries(document) if entry.get("verifyDigest") or entry.get("required")]

    def run(resource: Resource) -> RuleResult | None:
        if not entries or not isinstance(resource.value, dict):
            return None
        value = to_float64(resource.value)
        try:
            if not _matching(document, value):
                return None
        except ImageError as error:
            return _error_result(resource, compiled, value, str(error))
        entered = enter_rule(compiled.policy, compiled.rule, value, context,
                             context=document.get("context") or [], preconditions=document.get("preconditions"))
        if entered.stop is not None:
            stop = entered.stop
            return RuleResult(resource, compiled.policy, compiled.rule, stop.status, identifier=resource_key(value),
                              message=stop.message, error=stop.error, exception=stop.exception)
        if entered.session is None or bridge.is_delete(entered.session):
            return None
        status, message = _check(compiled, entries, value)
        violations = [Violation(f"spec.rules[{compiled.rule.index}].verifyImages", message, [])] if status == FAIL \
            else []
        return RuleResult(resource, compiled.policy, compiled.rule, status, identifier=resource_key(value),
                          message=message, violations=violations)

    return run


def image_check_explainer(compiled: CompiledKyvernoRule, context: ScanContext) -> Explain:
    """How an image check failed or errored (``--explain``): the rule runs once more with a trace, each image
    it checked a step; a result decided before any image (an error, a precondition) is one step saying so."""
    run = image_check_runner(compiled, context)
    where = f"spec.rules[{compiled.rule.index}].verifyImages"

    def explain(result: RuleResult) -> Explanation | None:
        trace = Trace()
        with recording(trace):
            run(result.resource)
        if not trace.explanation.steps:
            trace.add("verifyImages", str(result.status), depth=0, policy_path=where, detail=result.message or "")
        return trace.explanation

    return explain


def _check(compiled: CompiledKyvernoRule, entries: list[dict], resource: dict) -> tuple[str, str]:
    """Kyverno's ``validateImage`` over the images its ``images`` context holds (the standard containers)."""
    passed: list[str] = []
    skipped: list[str] = []
    trace = active()  # an explanation is being made (--explain): each image checked is a step
    try:
        standard = rule_images({}, resource)
    except ImageError:
        standard = []
    for entry in entries:
        for reference, info in standard:
            if not _matches(reference, entry["imageReferences"]):
                continue
            if entry.get("verifyDigest") and not info.digest:
                if trace is not None:
                    trace.add(reference, FAIL, depth=0, detail="verifyDigest: the image has no digest")
                return FAIL, f"missing digest for {reference}"
            if entry.get("required"):
                verified = _scoped_status(resource, compiled, reference)
                if trace is not None:
                    trace.add(reference, verified, depth=0,
                              detail=f"required: the {SCOPED_ANNOTATION} annotation records {verified!r}")
                if verified == "fail":
                    return FAIL, f"unverified image {reference}"
                (passed if verified == "pass" else skipped).append(reference)
            elif trace is not None:
                trace.add(reference, PASS, depth=0, detail="verifyDigest: the image has a digest")
    if passed or not skipped:
        return PASS, "image verified" if not skipped else " ".join(["image verified, skipped images:", *skipped])
    return SKIP, " ".join(["image skipped, skipped images:", *skipped])


def _scoped_status(resource: dict, compiled: CompiledKyvernoRule, image: str) -> str:
    """The verification status the ``kyverno.io/verify-images-scoped`` annotation records ("fail" without it)."""
    annotations = (resource.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(SCOPED_ANNOTATION) if isinstance(annotations, dict) else None
    if not isinstance(text, str):
        return "fail"
    try:
        data = json.loads(text)
    except ValueError:
        return "fail"
    policies = data.get("policies") if isinstance(data, dict) and data.get("version") == 1 else None
    if not isinstance(policies, dict):
        return "fail"
    key = f"{compiled.policy.namespace or ''}/{compiled.policy.name}"
    rule_name = compiled.rule.autogen_of or compiled.rule.name
    status = ((policies.get(key) or {}).get(compiled.rule.name) or (policies.get(key) or {}).get(rule_name) or {}
              ).get(image)
    return status if status in ("pass", "skip", "fail") else "fail"
