"""ImageValidatingPolicy, offline: the checks on a resource's image references that need no registry.

Kyverno's evaluation (``pkg/image/verification/evaluator/policy.go``): match
conditions (false: SKIP), then the images of the resource (Pods' and Pod
controllers' containers, init and ephemeral containers, under those three
names, plus the policy's own ``images`` extractors, CEL lists of strings) are
filtered by ``matchImageReferences`` (a ``glob``, or a CEL ``expression`` on
``ref``; none keeps every image); with ``validationConfigurations.verifyDigest``
an image without a digest FAILs ("image X does not have a digest"); then each
validation in order (``images`` holds the filtered images by name): the first
false FAILs with its message, an error is an ERROR; PASS otherwise.

What reads a registry cannot run here: signatures and attestations
(``verifyImageSignatures``, ``verifyAttestationSignatures``, ``extractPayload``)
and image data (``getImageData``). A policy that calls them is refused when it
is loaded (`compile`, `environment.registry_function`), naming the function;
``required`` (every matched image must have been verified by such a call)
then cannot hold either, so a policy that asks for it FAILs its matched images.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from assertree.languages.cel.engine import CelError
from assertree.languages.cel.limits import budgeted
from assertree.languages.kyverno.cel_policies.evaluate import CompiledSpec, Outcome, begin, noted, run_validations
from assertree.languages.kyverno.cel_policies.exceptions import CompiledException
from assertree.results import ERROR, FAIL, PASS, RuleError

__all__ = ["evaluate_images", "glob_matches", "standard_images"]

_CONTAINERS = ("containers", "initContainers", "ephemeralContainers")
_TEMPLATES = {"pods": ("spec",), "jobs": ("spec", "template", "spec"), "deployments": ("spec", "template", "spec"),
              "statefulsets": ("spec", "template", "spec"), "daemonsets": ("spec", "template", "spec"),
              "replicasets": ("spec", "template", "spec"),
              "cronjobs": ("spec", "jobTemplate", "spec", "template", "spec")}


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    """gobwas/glob without separators, as Kyverno compiles ``glob`` references: ``*`` any text, ``?`` one
    character, ``[...]`` a class (``[!...]`` negated), ``{a,b}`` alternatives, ``\\`` escapes."""
    out, position, depth = [], 0, 0
    while position < len(pattern):
        char = pattern[position]
        if char == "\\" and position + 1 < len(pattern):
            out.append(re.escape(pattern[position + 1]))
            position += 2
            continue
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "[":
            end = pattern.find("]", position + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[position + 1:end]
                negated = body.startswith("!")
                body = body[1:] if negated else body
                out.append("[" + ("^" if negated else "") + body.replace("\\", "\\\\") + "]")
                position = end
        elif char == "{":
            out.append("(?:")
            depth += 1
        elif char == "}" and depth:
            out.append(")")
            depth -= 1
        elif char == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(char))
        position += 1
    out.extend(")" * depth)
    return re.compile("".join(out), re.DOTALL)


def glob_matches(pattern: str, image: str) -> bool:
    try:
        return _glob(pattern).fullmatch(image) is not None
    except re.error:
        return False


def standard_images(resource: Any, plural: str) -> dict[str, list[str]]:
    """The images Kyverno extracts by default for a resource of `plural` (empty for other kinds)."""
    path = _TEMPLATES.get(plural)
    out: dict[str, list[str]] = {}
    if path is None:
        return out
    spec: Any = resource
    for step in path:
        spec = spec.get(step) if isinstance(spec, dict) else None
    for name in _CONTAINERS:
        containers = spec.get(name) if isinstance(spec, dict) else None
        out[name] = [str(item.get("image")) for item in containers or [] if isinstance(item, dict)
                     and isinstance(item.get("image"), str)] if isinstance(containers, list) else []
    return out


@budgeted  # the policy's expressions share one cost budget, as in Kubernetes
def evaluate_images(spec: CompiledSpec, data: dict[str, Any], lookups: Any, plural: str,
                    exceptions: Sequence[CompiledException] = ()) -> Outcome:
    """PASS, FAIL, SKIP (match conditions, an exception) or ERROR for one resource (see the module docstring)."""
    scope, stopped, note = begin(spec, data, lookups, exceptions)
    if stopped is not None:
        return noted(stopped, note)
    return noted(_check_images(spec, scope, data, lookups, plural), note)


def _check_images(spec: CompiledSpec, scope: dict[str, Any], data: dict[str, Any], lookups: Any,
                  plural: str) -> Outcome:
    obj = data.get("object") if data.get("object") is not None else data.get("oldObject")
    images = standard_images(obj, plural)
    try:
        for name, program, _path in spec.image_extractors:
            found = program.evaluate(scope, lookups)
            images[name] = [str(item) for item in found] if isinstance(found, list) else []
        filtered = {name: [image for image in found if _selected(spec, image, lookups)]
                    for name, found in images.items()}
    except CelError as failure:
        return Outcome(ERROR, failure.message, error=RuleError(failure.message, kind="evaluation"))
    matched = [image for found in filtered.values() for image in found]
    if spec.verify_digest:
        for image in matched:
            if "@" not in image:
                return Outcome(FAIL, f"image {image} does not have a digest")
    failed = run_validations(spec, {**scope, "images": filtered, "attestors": {}, "attestations": {}}, lookups)
    if failed is not None:
        return failed
    if spec.required and matched:
        return Outcome(FAIL, f"image {matched[0]} was not verified (required: only a signature or attestation "
                             "check verifies it, and those need the registry)")
    return Outcome(PASS, "success")


def _selected(spec: CompiledSpec, image: str, lookups: Any) -> bool:
    if not spec.image_references:
        return True
    for reference, program in spec.image_references:
        if program is not None:
            if program.evaluate({"ref": image}, lookups) is True:
                return True
        elif reference.glob is not None and glob_matches(reference.glob, image):
            return True
    return False
