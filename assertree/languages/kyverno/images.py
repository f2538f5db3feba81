"""Kyverno's ``images`` variable: the container images of a Pod or Pod controller, split into parts.

A rule can read ``{{ images.containers.nginx.tag }}``; Kyverno builds that map
from the resource's init, regular and ephemeral containers
(``pkg/utils/api/image.go``), splitting each reference as
``pkg/utils/image/infos.go`` does: docker.io is the default registry and
``latest`` the default tag, and each image knows its JSON pointer in the
resource. Docker's reference grammar itself is `jp.functions.images`'
(`parse_reference`), shared with the ``image_normalize``-style functions.
`KyvernoContext` loads this variable lazily, only when a rule names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assertree.jp.functions.images import DEFAULT_REGISTRY, ImageReferenceError, parse_reference
from assertree.languages.kyverno.substitution import VariableError

__all__ = ["POD_CONTAINERS", "POD_SPEC", "ImageInfo", "image_info", "images"]

POD_CONTAINERS = ("initContainers", "containers", "ephemeralContainers")
POD_SPEC = {  # where each kind keeps its Pod spec
    "Pod": ("spec",),
    "DaemonSet": ("spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


@dataclass(frozen=True)
class ImageInfo:
    """One container image as Kyverno splits it (``pkg/utils/image.ImageInfo``)."""

    registry: str
    path: str
    name: str
    tag: str
    digest: str
    pointer: str = field(default="")

    @property
    def reference(self) -> str:
        base = f"{self.registry}/{self.path}" if self.registry else self.path
        return f"{base}@{self.digest}" if self.digest else f"{base}:{self.tag}"

    @property
    def reference_with_tag(self) -> str:
        base = f"{self.registry}/{self.path}" if self.registry else self.path
        return f"{base}:{self.tag}"

    def to_json(self) -> dict:
        """The JSON Kyverno puts under ``images`` (empty registry/tag/digest left out, as ``omitempty``)."""
        out: dict[str, Any] = {}
        if self.registry:
            out["registry"] = self.registry
        out["name"] = self.name
        out["path"] = self.path
        if self.tag:
            out["tag"] = self.tag
        if self.digest:
            out["digest"] = self.digest
        out["reference"] = self.reference
        out["referenceWithTag"] = self.reference_with_tag
        out["jsonPointer"] = self.pointer
        return out


def image_info(image: str, pointer: str = "") -> ImageInfo:
    """Split an image reference as Kyverno does (default registry docker.io, default tag latest).

    Raises `VariableError` with Kyverno's message for a reference Docker's grammar rejects.
    """
    first, slash, _ = image.partition("/")
    looks_like_host = any(c in first for c in ".:") or first == "localhost" or first.lower() != first
    full = image if slash and looks_like_host else f"{DEFAULT_REGISTRY}/{image}"
    try:
        registry, path, tag, digest = parse_reference(full)
    except ImageReferenceError as error:
        raise VariableError(f"invalid image '{image}' (bad image: {full}, defaultRegistry: {DEFAULT_REGISTRY}, "
                            f"enableDefaultRegistryMutation: true: {error})") from None
    if not tag and not digest:
        tag = "latest"
    return ImageInfo(registry, path, path.rsplit("/", 1)[-1], tag, digest, pointer)


def images(resource: Mapping) -> dict:
    """Kyverno's ``images`` variable for `resource`: container kind -> container name -> image info.

    Only Pods and the built-in Pod controllers have images; containers without
    an image are left out, and so are container kinds with none. Raises
    `VariableError` for an image Kyverno cannot parse or a malformed container list.
    """
    spec_path = POD_SPEC.get(str(resource.get("kind") or ""))
    if spec_path is None:
        return {}
    spec: Any = resource
    for step in spec_path:
        spec = spec.get(step) if isinstance(spec, dict) else None
        if spec is None:
            return {}
    if not isinstance(spec, dict):
        raise VariableError("invalid image config")
    out: dict[str, dict] = {}
    for kind in POD_CONTAINERS:
        containers = spec.get(kind)
        if containers is None:
            continue
        if isinstance(containers, dict):
            entries = list(containers.items())
        elif isinstance(containers, list):
            entries = [(str(index), item) for index, item in enumerate(containers)]
        else:
            raise VariableError("invalid type")
        found: dict[str, dict] = {}
        for step, container in entries:
            if container is None:
                continue
            if not isinstance(container, dict):
                raise VariableError("invalid image config")
            pointer = "/" + "/".join((*spec_path, kind, step)) + "/image"
            name = container.get("name")
            if not isinstance(name, str):
                raise VariableError("invalid key")
            image = container.get("image")
            if not isinstance(image, str) or not image.strip():
                continue
            found[name] = image_info(image, pointer).to_json()
        if found:
            out[kind] = found
    return out
