"""Kyverno's ``images`` variable in CEL: an image reference split as Kyverno splits it.

Kyverno builds ``images.<containers|initContainers|ephemeralContainers>.<container name>`` from the Pod
spec (`assertree.languages.kyverno.images`): the registry is the reference's first part when that looks
like a host (it holds ``.`` or ``:``, is ``localhost`` or has capitals), else ``docker.io``; the tag is
``latest`` when neither a tag nor a digest is given; an empty part is left out (null). CEL's ``image()``
library reads references another way (``index.docker.io``, ``library/`` added), so each part is written
with string functions here. References Kyverno rejects as invalid (an error there) are not detected.

The parts are cut with regular expressions (``find``), which keeps the CEL shallow enough to parse inside
an apply configuration.
"""

from __future__ import annotations

from assertree.migrate.convert import cel
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["CONTAINER_KINDS", "PARTS", "containers", "image_part", "pod_spec_of"]

CONTAINER_KINDS = ("containers", "initContainers", "ephemeralContainers")
PARTS = ("registry", "path", "name", "tag", "digest", "reference", "referenceWithTag")

_TEMPLATE_CONTROLLERS = frozenset({"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job",
                                   "ReplicationController"})


# The registry and its slash, when the first part of the reference looks like a host (empty otherwise).
_HOST = "^(localhost|[^/]*[.:A-Z][^/]*)/"


def _rest(image: str) -> str:
    """The reference after its registry (path, tag, digest)."""
    return f"{image}.substring(size({image}.find({cel.string(_HOST)})))"


def image_part(image: str, part: str) -> str:
    """CEL: the `part` (one of `PARTS`) of the image reference `image` (a CEL string), as Kyverno's ``images``
    variable gives it (null for an empty tag or digest)."""
    host = f"{image}.find({cel.string(_HOST)})"
    rest = _rest(image)
    registry = f"({host} != '' ? {image}.find('^[^/]+') : 'docker.io')"
    path = f"{rest}.find('^[^:@]+')"
    named = f"{rest}.find('^[^@]*')"
    tag_text = (f"({named}.find(':.*') != '' ? {named}.find(':.*').substring(1) : "
                f"({rest}.contains('@') ? '' : 'latest'))")
    tag = f"({tag_text} == '' ? dyn(null) : dyn({tag_text}))"
    digest = f"({rest}.contains('@') ? dyn({rest}.substring({rest}.indexOf('@') + 1)) : dyn(null))"
    if part == "registry":
        return registry
    if part == "path":
        return path
    if part == "name":
        return f"{path}.find('[^/]+$')"
    if part == "tag":
        return tag
    if part == "digest":
        return digest
    base = f"{registry} + '/' + {path}"
    if part == "referenceWithTag":
        return f"{base} + ':' + {tag_text}"
    if part == "reference":
        return f"{base} + ({rest}.contains('@') ? '@' + {rest}.substring({rest}.indexOf('@') + 1) : ':' + {tag_text})"
    raise NotConvertible(f"the image field {part!r} of Kyverno's `images` variable has no CEL form here "
                         f"(known: {', '.join(PARTS)})")


def pod_spec_of(rule: dict) -> str | None:
    """Where the Pod spec Kyverno's ``images`` reads is, in CEL, for the kinds `rule` matches (``object.spec``
    for Pods, which CEL autogen moves under the template for controllers); None when its kinds differ."""
    kinds: set[str] = set()
    match = rule.get("match") or {}
    blocks = [match, *(match.get("any") or []), *(match.get("all") or [])] if isinstance(match, dict) else []
    for block in blocks:
        resources = block.get("resources") if isinstance(block, dict) else None
        for kind in (resources or {}).get("kinds") or [] if isinstance(resources, dict) else []:
            kinds.add(str(kind).rsplit("/", 1)[-1])
    if not kinds:
        return None
    if kinds == {"Pod"}:
        return "object.spec"
    if kinds <= _TEMPLATE_CONTROLLERS:
        return "object.spec.template.spec"
    if kinds == {"CronJob"}:
        return "object.spec.jobTemplate.spec.template.spec"
    return None


def containers(pod_spec: str, kind: str) -> str:
    """CEL: the containers of `kind` that have an image (Kyverno's ``images`` leaves the others out)."""
    if kind not in CONTAINER_KINDS:
        raise NotConvertible(f"Kyverno's `images` variable has no {kind!r} (known: {', '.join(CONTAINER_KINDS)})")
    return f"{cel.or_empty(f'{pod_spec}.?{kind}', '[]')}.filter(container, has(container.image))"
