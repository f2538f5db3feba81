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
from assertree.languages.kyverno.cel_policies.resources import plural_of
from assertree.languages.kyverno.cel_policies.rewrite import INDEX_FUNCTIONS

__all__ = ["FUNCTIONS", "GENERATOR", "IMAGE_VARIABLES", "VARIABLES", "Generated", "Lookups", "environment",
           "generating_environment", "image_environment", "needs_cluster", "read_context_file", "registry_function",
           "uses_authorizer"]

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "exceptions")
IMAGE_VARIABLES = ("images", "attestors", "attestations", "ref")
_AUTHORIZER = re.compile(r"(?<![\w.])authorizer\b")


@dataclass
class Lookups:
    """What the context lookups may read: a ``kyverno test`` context file, global context entries."""

    resources: Sequence[Mapping[str, Any]] = ()
    images: Mapping[str, Any] = field(default_factory=dict)  # image reference -> its data (config, manifest ...)
    global_context: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None  # the file it was read from, for messages
    given: bool = True  # False: no data was given (lookups then fail, saying what they need)


@dataclass
class Generated(Lookups):
    """The lookups of one GeneratingPolicy evaluation, and where ``generator.Apply`` puts what it generates.

    As the Kyverno CLI's fake context (``pkg/cel/libs/fake_context.go``, ``GenerateResources``) does, every
    object given (each item of a list, ``{"items": [...]}``, on its own) is kept with its namespace set to
    the one named (``""`` removes it), its keys in Go's order; a namespaced policy's generator names no
    namespace: its own.
    """

    generated: list[dict] = field(default_factory=list)
    namespace: str = ""  # a namespaced policy's namespace

    def generate(self, namespace: str, items: Any) -> bool:
        for item in items if isinstance(items, (list, tuple)) else [items]:
            if not isinstance(item, Mapping):
                raise FunctionError("generator.Apply takes a list of objects")
            listed = item.get("items")
            for found in listed if isinstance(listed, list) else [item]:
                resource = _go_ordered(found) if isinstance(found, Mapping) else {}
                metadata = dict(resource.get("metadata") or {}) if isinstance(resource.get("metadata"),
                                                                               Mapping) else {}
                if namespace:
                    metadata["namespace"] = namespace
                else:
                    metadata.pop("namespace", None)
                resource["metadata"] = metadata
                self.generated.append(resource)
        return True


def _go_ordered(value: Any) -> Any:
    """`value` with every map's keys sorted, as Go writes them (the CEL library hands maps over in a hash's
    order, different in every process)."""
    if isinstance(value, Mapping):
        return {key: _go_ordered(item) for key, item in sorted(value.items(), key=lambda pair: str(pair[0]))}
    if isinstance(value, (list, tuple)):
        return [_go_ordered(item) for item in value]
    return value


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
    if not isinstance(found, Lookups) or not found.given:
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


def _string_index(text: str, part: str, offset: int | None = None, *, last: bool = False) -> int:
    if offset is not None and not 0 <= offset <= len(text):
        raise FunctionError(f"index out of range: {offset}")
    if last:
        return text.rfind(part, 0, len(text) if offset is None else offset + len(part))
    return text.find(part, 0 if offset is None else offset)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _list_index(items: list, wanted: Any, *, last: bool = False) -> int:
    indexes = range(len(items) - 1, -1, -1) if last else range(len(items))
    return next((i for i in indexes if items[i] == wanted and _is_bool(items[i]) == _is_bool(wanted)), -1)


def _index_function(name: str, last: bool) -> Function:
    """Strings' ``indexOf``/``lastIndexOf`` and Kubernetes' list ones under one name (see `rewrite`)."""
    overloads = [
        Overload(f"{name}_string", ("string", "string"), "int", lambda t, p: _string_index(t, p, last=last), True),
        Overload(f"{name}_string_int", ("string", "string", "int"), "int",
                 lambda t, p, o: _string_index(t, p, o, last=last), True),
    ]
    for kind in ("string", "int", "uint", "double", "bool", "bytes", "null", "list", "map"):
        overloads.append(Overload(f"{name}_list_{kind}", ("list", kind), "int",
                                  lambda items, wanted: _list_index(list(items), wanted, last=last), True))
    return Function(name, tuple(overloads))


def _generated() -> Generated:
    found = evaluation_context()
    if not isinstance(found, Generated):
        raise FunctionError("generator.Apply only works in a GeneratingPolicy")
    return found


def _generator_apply(namespace: str, items: Any) -> bool:
    return _generated().generate(namespace, items)


def _generator_apply_own(items: Any) -> bool:
    sink = _generated()
    return sink.generate(sink.namespace, items)


def _refuse_http(*_: Any) -> Any:
    raise FunctionError("http calls are refused: assertree never reaches the network")


FUNCTIONS = (
    Function("resource.Get", (Overload("resource_get", ("string", "string", "string", "string"), "dyn",
                                       _resource_get),)),
    Function("resource.List", (Overload("resource_list", ("string", "string", "string"), "dyn", _resource_list),)),
    # the lower-case names Kyverno's resource library also has since 1.18 (sdk extensions/cel/libs/resource)
    Function("resource.get", (Overload("resource_get_camel", ("string", "string", "string", "string"), "dyn",
                                       _resource_get),)),
    Function("resource.list", (Overload("resource_list_camel", ("string", "string", "string"), "dyn",
                                        _resource_list),)),
    Function("image.GetMetadata", (Overload("image_get_metadata", ("string",), "dyn", _image_metadata),)),
    Function("globalContext.Get", (Overload("global_context_get", ("string", "string"), "dyn", _global_context),)),
    Function("http.Get", (Overload("http_get", ("string",), "dyn", _refuse_http),
                          Overload("http_get_headers", ("string", "map"), "dyn", _refuse_http))),
    Function("http.Post", (Overload("http_post", ("string", "dyn", "map"), "dyn", _refuse_http),)),
    _index_function(INDEX_FUNCTIONS["indexOf"], last=False),
    _index_function(INDEX_FUNCTIONS["lastIndexOf"], last=True),
)
"""Kyverno's context lookups, served offline (candidates for `assertree.languages.cel.functions`)."""

GENERATOR = tuple(
    Function(f"generator.{name}", (Overload(f"generator_{name}_string_list", ("string", "list"), "bool",
                                            _generator_apply),
                                   Overload(f"generator_{name}_list", ("list",), "bool", _generator_apply_own)))
    for name in ("Apply", "apply"))
"""The generator library of GeneratingPolicies (sdk extensions/cel/libs/generator): ``generator.Apply``."""

_CLUSTER_ONLY = re.compile(r"(?<![\w.])resource\s*\.\s*([Pp]ost)\s*\(")
_REGISTRY_FUNCTIONS = re.compile(r"(?<![\w.])(verifyImageSignatures|verifyAttestationSignatures|extractPayload|"
                                 r"getImageData)\s*\(")


@cache
def environment() -> Environment:
    """Kyverno's policy environment: Kubernetes' and Kyverno's libraries, the lookups above, its variables."""
    from assertree.languages.cel.functions import KYVERNO
    from assertree.languages.cel.kubernetes import EXTENSIONS

    return Environment(name="policies.kyverno.io", variables=VARIABLES, extensions=EXTENSIONS,
                       functions=(*KYVERNO, *FUNCTIONS), cross_type_numeric_comparisons=True)


@cache
def image_environment() -> Environment:
    """The environment of ImageValidatingPolicies: Kyverno's, with ``images``, ``attestors``, ``attestations``
    and, for ``matchImageReferences`` expressions, ``ref``."""
    from assertree.languages.cel.functions import KYVERNO
    from assertree.languages.cel.kubernetes import EXTENSIONS

    return Environment(name="policies.kyverno.io images", variables=(*VARIABLES, *IMAGE_VARIABLES),
                       extensions=EXTENSIONS, functions=(*KYVERNO, *FUNCTIONS), cross_type_numeric_comparisons=True)


@cache
def generating_environment() -> Environment:
    """The environment of GeneratingPolicies: Kyverno's, with ``generator.Apply``."""
    from assertree.languages.cel.functions import KYVERNO
    from assertree.languages.cel.kubernetes import EXTENSIONS

    return Environment(name="policies.kyverno.io generating", variables=VARIABLES, extensions=EXTENSIONS,
                       functions=(*KYVERNO, *FUNCTIONS, *GENERATOR), cross_type_numeric_comparisons=True)


def registry_function(text: str) -> str | None:
    """The image-verification function of ImageValidatingPolicies `text` calls (each reads signatures,
    attestations or image data from the registry), or None."""
    found = _REGISTRY_FUNCTIONS.search(text)
    return found.group(1) if found else None


def needs_cluster(text: str) -> str | None:
    """Why `text` cannot run offline because it needs a cluster (the authorizer, ``resource.Post``), or None."""
    if uses_authorizer(text):
        return "the Kubernetes authorizer needs a cluster (expressions using `authorizer` cannot run offline)"
    found = _CLUSTER_ONLY.search(text)
    if found:
        return f"resource.{found.group(1)} creates objects in a cluster (assertree has none)"
    return None


def uses_authorizer(text: str) -> bool:
    """Whether `text` calls the Kubernetes authorizer (which needs a cluster)."""
    return bool(_AUTHORIZER.search(text))
