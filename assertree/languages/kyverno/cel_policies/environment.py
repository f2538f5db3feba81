"""The CEL environment of Kyverno's CEL policies, offline: variables, and lookups served from local data.

Kyverno (pkg/cel/compiler) declares ``object``, ``oldObject``, ``request``,
``params``, ``namespaceObject``, ``variables``, ``exceptions`` and the
``authorizer``, plus context libraries that reach a cluster or the network:
``resource.Get/List``, ``image.GetMetadata``, ``globalContext.Get`` and
``http.*``. assertree never reaches either. The lookups are declared here as
namespaced functions that read `Lookups` (a ``kyverno test`` context file:
resources, image data; global context entries from a values file); a lookup
with nothing to read is an evaluation error saying so. ``http.*`` is always
refused, and an expression using the ``authorizer`` is refused when compiled
(`uses_authorizer`): authorization checks need the cluster's authorizer.

Everything else (Kubernetes' and Kyverno's offline libraries, the extensions)
comes from `assertree.languages.cel`; these functions belong there once the
library has an offline-context mechanism, and are listed in `FUNCTIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from assertree.languages.cel.engine import Environment, Function, FunctionError, Overload, evaluation_context
from assertree.languages.kubernetes.resources import plural_of

__all__ = ["FUNCTIONS", "VARIABLES", "Lookups", "environment", "read_context_file", "uses_authorizer"]

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "exceptions")
_AUTHORIZER = re.compile(r"(?<![\w.])authorizer\b")


@dataclass
class Lookups:
    """What the context lookups may read: a ``kyverno test`` context file, global context entries."""

    resources: Sequence[Mapping[str, Any]] = ()
    images: Mapping[str, Any] = field(default_factory=dict)  # image reference -> its data (config, manifest ...)
    global_context: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None  # the file it was read from, for messages


def read_context_file(path: str | Path) -> Lookups:
    """A ``cli.kyverno.io`` Context file (``spec.resources``, ``spec.images``) as `Lookups`."""
    import yaml

    from assertree.errors import PayloadError
    from assertree.languages.kyverno.manifests import go_yaml_documents, normalise, read_input_text

    text = read_input_text(path, "context")
    try:
        documents = [d for d in go_yaml_documents(text) if d]
    except yaml.YAMLError as error:
        raise PayloadError(f"cannot read context file: {error}", source=str(path)) from None
    resources: list[dict] = []
    images: dict[str, Any] = {}
    for document in documents:
        spec = document.get("spec") if isinstance(document, dict) else None
        if not isinstance(spec, dict):
            raise PayloadError("a context file needs a spec with resources or images", source=str(path))
        resources.extend(normalise(dict(item)) for item in spec.get("resources") or [] if isinstance(item, dict))
        for item in spec.get("images") or []:
            if isinstance(item, dict) and isinstance(item.get("image"), str):
                images[item["image"]] = item
    return Lookups(resources=resources, images=images, source=str(path))


def _lookups(what: str) -> Lookups:
    found = evaluation_context()
    if not isinstance(found, Lookups):
        raise FunctionError(f"{what} needs a cluster; offline, give its data in a context file (none given)")
    return found


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _resources(api_version: str, plural: str, namespace: str) -> list[Mapping[str, Any]]:
    lookups = _lookups(f"resource lookup ({api_version} {plural})")
    wanted = _group_version(api_version)
    out = []
    for item in lookups.resources:
        if _group_version(str(item.get("apiVersion") or "")) != wanted:
            continue
        if plural_of(str(item.get("kind") or "")) != plural:
            continue
        if str((item.get("metadata") or {}).get("namespace") or "") != namespace:
            continue
        out.append(item)
    return out


def _resource_get(api_version: str, plural: str, namespace: str, name: str) -> Any:
    for item in _resources(api_version, plural, namespace):
        if (item.get("metadata") or {}).get("name") == name:
            return item
    where = f"{namespace}/{name}" if namespace else name
    raise FunctionError(f'{plural} "{where}" not found (offline: not in the context file)')


def _resource_list(api_version: str, plural: str, namespace: str) -> Any:
    return {"items": list(_resources(api_version, plural, namespace))}


def _image_metadata(reference: str) -> Any:
    lookups = _lookups(f"image metadata ({reference})")
    if reference not in lookups.images:
        raise FunctionError(f"image data for {reference} not found in the context")
    return lookups.images[reference]


def _global_context(name: str, projection: str) -> Any:
    lookups = _lookups(f"global context entry {name!r}")
    if name not in lookups.global_context:
        return None
    data = lookups.global_context[name]
    if not projection:
        return data
    if isinstance(data, Mapping) and projection in data:
        return data[projection]
    raise FunctionError(f"projection {projection!r} not found in global context entry {name!r}")


def _refuse_http(*_: Any) -> Any:
    raise FunctionError("http calls are refused: assertree never reaches the network")


FUNCTIONS = (
    Function("resource.Get", (Overload("resource_get", ("string", "string", "string", "string"), "dyn",
                                       _resource_get),)),
    Function("resource.List", (Overload("resource_list", ("string", "string", "string"), "dyn", _resource_list),)),
    Function("image.GetMetadata", (Overload("image_get_metadata", ("string",), "dyn", _image_metadata),)),
    Function("globalContext.Get", (Overload("global_context_get", ("string", "string"), "dyn", _global_context),)),
    Function("http.Get", (Overload("http_get", ("string",), "dyn", _refuse_http),
                          Overload("http_get_headers", ("string", "map"), "dyn", _refuse_http))),
    Function("http.Post", (Overload("http_post", ("string", "dyn", "map"), "dyn", _refuse_http),)),
)
"""Kyverno's context lookups, served offline (candidates for `assertree.languages.cel.functions`)."""


@cache
def environment() -> Environment:
    """Kyverno's policy environment: Kubernetes' and Kyverno's libraries, the lookups above, its variables."""
    from assertree.languages.cel.functions import KYVERNO
    from assertree.languages.cel.kubernetes import EXTENSIONS

    return Environment(name="policies.kyverno.io", variables=VARIABLES, extensions=EXTENSIONS,
                       functions=(*KYVERNO, *FUNCTIONS), cross_type_numeric_comparisons=True)


def uses_authorizer(text: str) -> bool:
    """Whether `text` calls the Kubernetes authorizer (which needs a cluster)."""
    return bool(_AUTHORIZER.search(text))
