"""The CEL environment of Kyverno's CEL policies, offline: variables, and lookups served from local data.

Kyverno (pkg/cel/policies/*/compiler) declares ``object``, ``oldObject``,
``request``, ``namespaceObject``, ``variables``, ``exceptions`` and the
``authorizer`` over its base environment (pkg/cel/compiler/env.go) and the
libraries of github.com/kyverno/sdk (extensions/cel/libs). Those that reach a
cluster, a registry or the network are declared here and read `Lookups`
instead, as ``kyverno test`` serves them offline (cmd/cli/kubectl-kyverno/
processor/utils.go ``NewContextProvider``, pkg/cel/libs/fake_context.go):

- ``resource.Get/List`` (and ``get``/``list``, the 1.18 names): a `Cluster` of
  the test's context-file resources or cluster resources. ``Get`` of an object
  that does not exist is null, as the SDK's library returns it; ``List`` of a
  resource no context-file object has is an error ("resource not found"), a
  cluster lists none. Namespaced policies (``NamespacedValidatingPolicy`` ...)
  read their own namespace: ``resource.Get(apiVersion, resource, name)``,
  ``resource.List(apiVersion, resource)``, which is why there are two
  environments (`environment`). ``resource.Post`` would create an object: it
  is refused.
- ``image.GetMetadata`` (``getMetadata``): a context file's ``spec.images``.
- ``globalContext.Get`` (``get``): the test's ``globalContextEntries``; an
  unknown entry is null, as in the CLI.
- ``http.Get/Post`` (``get``/``post``, also on ``http.Client(ca)``): the test's
  ``apiCallResponses`` answer them (keyed ``METHOD:url`` first, then ``url``)
  as ``{"body": ..., "statusCode": ...}``; any other call is refused, because
  assertree never reaches the network.

GeneratingPolicies also have ``generator.Apply`` (`GENERATOR`, writing into
`Generated`), and ImageValidatingPolicies the variables ``images``,
``attestors``, ``attestations`` and ``ref`` (`IMAGE_VARIABLES`): each kind
compiles in its own environment (`environment`'s `purpose`).

An expression using the ``authorizer`` is refused when compiled
(`uses_authorizer`): authorization checks need the cluster's authorizer.
`needs_cluster` and `registry_function` say which expressions cannot run
offline at all, so that the policy can be refused when it is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from assertree.languages.cel.engine import Environment, Function, FunctionError, Overload, evaluation_context
from assertree.languages.cel.functions.declare import opaque, opaque_text
from assertree.languages.kubernetes.cluster import Cluster, NotFound, split_api_version

__all__ = ["EXTENSIONS", "FUNCTIONS", "GENERATOR", "IMAGE_VARIABLES", "VARIABLES", "Generated", "GlobalContextError",
           "Lookups", "environment", "needs_cluster", "read_context_file", "registry_function", "uses_authorizer"]

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "exceptions")
IMAGE_VARIABLES = ("images", "attestors", "attestations", "ref")
# cel-go's extensions in Kyverno's base environment (pkg/cel/compiler/env.go), as the CEL library names them
EXTENSIONS = ("optional", "strings", "sets", "lists", "two-var-comprehensions", "math", "encoders", "bindings",
              "regex")
_AUTHORIZER = re.compile(r"(?<![\w.])authorizer\b")
_KINDS = ("string", "int", "uint", "double", "bool", "bytes", "null", "list", "map", "timestamp", "duration")


class GlobalContextError(ValueError):
    """A global context entry whose mock could not be built; reading it fails with this text."""


@dataclass
class Lookups:
    """What the context lookups read offline; see the module docstring."""

    cluster: Cluster | None = None  # resources: a context file's, or a test's cluster resources
    images: Mapping[str, Any] = field(default_factory=dict)  # image reference -> its data (config, manifest ...)
    global_context: Mapping[str, Any] = field(default_factory=dict)  # entry name -> data (or GlobalContextError)
    http: Mapping[str, Any] = field(default_factory=dict)  # "METHOD:url" or "url" -> {"body", "statusCode"}
    namespace: str = ""  # a namespaced policy's namespace (its resource lookups stay in it)
    source: str | None = None  # the file it was read from, for messages

    @property
    def resources(self) -> list[dict]:
        """Every object the lookups can find."""
        return list(self.cluster.objects()) if self.cluster is not None else []


@dataclass
class Generated(Lookups):
    """The lookups of one GeneratingPolicy evaluation, and where ``generator.Apply`` puts what it generates.

    As the Kyverno CLI's fake context (``pkg/cel/libs/fake_context.go``, ``GenerateResources``) does, every
    object given (each item of a list, ``{"items": [...]}``, on its own) is kept with its namespace set to
    the one named (``""`` removes it), its keys in Go's order; a namespaced policy's generator names no
    namespace: its own (`Lookups.namespace`).
    """

    generated: list[dict] = field(default_factory=list)

    @classmethod
    def of(cls, lookups: Any, namespace: str) -> Generated:
        """A sink reading what `lookups` (a `Lookups`, or None: nothing given) read, for a policy in `namespace`."""
        found = lookups if isinstance(lookups, Lookups) else Lookups()
        return cls(cluster=found.cluster, images=found.images, global_context=found.global_context,
                   http=found.http, namespace=namespace, source=found.source)

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
    cluster = Cluster(discovery=False)
    images: dict[str, Any] = {}
    for document in documents:
        spec = document.get("spec") if isinstance(document, dict) else None
        if not isinstance(spec, dict):
            raise PayloadError("a context file needs a spec with resources or images", source=str(path))
        cluster.extend(normalise(dict(item)) for item in spec.get("resources") or [] if isinstance(item, dict))
        for item in spec.get("images") or []:
            if isinstance(item, dict) and isinstance(item.get("image"), str):
                images[item["image"]] = item
    return Lookups(cluster=cluster, images=images, source=str(path))


def _lookups() -> Lookups:
    found = evaluation_context()
    return found if isinstance(found, Lookups) else Lookups()


def _cluster(what: str) -> Cluster:
    cluster = _lookups().cluster
    if cluster is None:
        raise FunctionError(f"{what}: no context file or cluster resources were given (offline, lookups read "
                            "only those)")
    return cluster


def _labels(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise FunctionError("labels must be a map of strings")
    return dict(value)


def _get(api_version: str, plural: str, namespace: str, name: str) -> Any:
    cluster = _cluster(f"resource.Get({api_version!r}, {plural!r})")
    try:
        return cluster.get(api_version, plural, namespace, name)
    except NotFound:
        return None  # the SDK's library: a missing object is null


def _list(api_version: str, plural: str, namespace: str, labels: Any = None) -> Any:
    cluster = _cluster(f"resource.List({api_version!r}, {plural!r})")
    try:
        return {"items": cluster.list(api_version, plural, namespace, _labels(labels))}
    except NotFound as error:
        raise FunctionError(f"failed to list resource: {error}") from None


def _gvr(value: Any) -> tuple[str, str]:
    if not isinstance(value, Mapping) or not isinstance(value.get("Resource"), str):
        raise FunctionError("no such overload: expected a GroupVersionResource (resource.ToGVR)")
    group, version = str(value.get("Group") or ""), str(value.get("Version") or "")
    return (f"{group}/{version}" if group else version), value["Resource"]


def _to_gvr(api_version: str, kind: str) -> dict[str, str]:
    cluster = _lookups().cluster or Cluster()
    group, version = split_api_version(api_version)
    return {"Group": group, "Version": version, "Resource": cluster.type_of(group, version, kind).plural}


def _refuse_post(*_: Any) -> Any:
    raise FunctionError("failed to create resource: resource.Post writes to a cluster; assertree never does")


def _resource_functions(namespaced: bool) -> list[Function]:
    """``resource.*`` as the SDK declares it for cluster-wide or namespaced policies (both spellings)."""
    def here(call: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *args: call(*args[:2], _lookups().namespace, *args[2:])

    out = []
    for get, list_, post, to_gvr in (("Get", "List", "Post", "ToGVR"), ("get", "list", "post", "toGVR")):
        if namespaced:
            gets = [Overload(f"resource_{get}_ns", ("string", "string", "string"), "dyn", here(_get)),
                    Overload(f"resource_{get}_ns_gvr", ("map", "string"), "dyn",
                             lambda gvr, name: _get(*_gvr(gvr), _lookups().namespace, name))]
            lists = [Overload(f"resource_{list_}_ns", ("string", "string"), "dyn", here(_list)),
                     Overload(f"resource_{list_}_ns_labels", ("string", "string", "map"), "dyn", here(_list)),
                     Overload(f"resource_{list_}_ns_gvr", ("map",), "dyn",
                              lambda gvr: _list(*_gvr(gvr), _lookups().namespace))]
        else:
            gets = [Overload(f"resource_{get}", ("string", "string", "string", "string"), "dyn", _get),
                    Overload(f"resource_{get}_gvr", ("map", "string", "string"), "dyn",
                             lambda gvr, ns, name: _get(*_gvr(gvr), ns, name))]
            lists = [Overload(f"resource_{list_}", ("string", "string", "string"), "dyn", _list),
                     Overload(f"resource_{list_}_labels", ("string", "string", "string", "map"), "dyn", _list),
                     Overload(f"resource_{list_}_gvr", ("map", "string"), "dyn",
                              lambda gvr, ns: _list(*_gvr(gvr), ns))]
        posts = [Overload(f"resource_{post}_{'_'.join(params)}", params, "dyn", _refuse_post)
                 for params in (("string", "string", "map"), ("string", "string", "string", "map"))]
        out += [Function(f"resource.{get}", tuple(gets)), Function(f"resource.{list_}", tuple(lists)),
                Function(f"resource.{post}", tuple(posts)),
                Function(f"resource.{to_gvr}", (Overload(f"resource_{to_gvr}", ("string", "string"), "map",
                                                         _to_gvr),))]
    return out


def _image_metadata(reference: str) -> Any:
    images = _lookups().images
    if reference not in images:
        raise FunctionError(f"failed to get image data: image data for {reference} not found in the context")
    return images[reference]


def _global_context(name: str, projection: str = "") -> Any:
    entries = _lookups().global_context
    if name not in entries:
        return None  # the CLI's fake provider: an unknown entry is null
    data = entries[name]
    if isinstance(data, GlobalContextError):
        raise FunctionError(f"failed to get global reference: {data}")
    if not projection:
        return data
    if isinstance(data, Mapping) and projection in data:
        return data[projection]
    raise FunctionError(f"failed to get global reference: projection {projection!r} not found in global context "
                        f"entry {name!r}")


def _http(method: str, url: str) -> Any:
    mocks = _lookups().http
    for key in (f"{method}:{url}", url):
        if key in mocks:
            return mocks[key]
    raise FunctionError(f"request failed: {method} {url}: assertree never reaches the network (mock the call "
                        "with apiCallResponses in the test)")


def _client(ca_bundle: str) -> dict[str, str]:
    return opaque("httpclient", ca_bundle)


def _http_functions() -> list[Function]:
    def member(method: str) -> Callable[..., Any]:
        return lambda client, url, *_: (opaque_text(client, "httpclient"), _http(method, url))[1]

    out = []
    for get, post, client in (("Get", "Post", "Client"), ("get", "post", "client")):
        out.append(Function(f"http.{get}", (
            Overload(f"http_{get}", ("string",), "dyn", lambda url: _http("GET", url)),
            Overload(f"http_{get}_headers", ("string", "map"), "dyn", lambda url, _headers: _http("GET", url)))))
        out.append(Function(f"http.{post}", tuple(
            overload for kind in _KINDS for overload in (
                Overload(f"http_{post}_{kind}", ("string", kind), "dyn", lambda url, _data: _http("POST", url)),
                Overload(f"http_{post}_{kind}_headers", ("string", kind, "map"), "dyn",
                         lambda url, _data, _headers: _http("POST", url))))))
        out.append(Function(f"http.{client}", (Overload(f"http_{client}", ("string",), "map", _client),)))
        out.append(Function(get, (Overload(f"httpclient_{get}", ("map", "string"), "dyn", member("GET"), True),
                                  Overload(f"httpclient_{get}_headers", ("map", "string", "map"), "dyn",
                                           member("GET"), True))))
        out.append(Function(post, tuple(
            overload for kind in _KINDS for overload in (
                Overload(f"httpclient_{post}_{kind}", ("map", "string", kind), "dyn", member("POST"), True),
                Overload(f"httpclient_{post}_{kind}_headers", ("map", "string", kind, "map"), "dyn",
                         member("POST"), True)))))
    return out


def _lookup_functions(namespaced: bool) -> tuple[Function, ...]:
    image = tuple(Function(f"image.{name}", (Overload(f"image_{name}", ("string",), "dyn", _image_metadata),))
                  for name in ("GetMetadata", "getMetadata"))
    context = tuple(Function(f"globalContext.{name}", (
        Overload(f"global_context_{name}", ("string",), "dyn", _global_context),
        Overload(f"global_context_{name}_projection", ("string", "string"), "dyn", _global_context)))
        for name in ("Get", "get"))
    return (*_resource_functions(namespaced), *image, *context, *_http_functions())


FUNCTIONS = _lookup_functions(False)
"""Kyverno's context lookups, served offline (cluster-wide policies' declarations)."""


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


GENERATOR = tuple(
    Function(f"generator.{name}", (Overload(f"generator_{name}_string_list", ("string", "list"), "bool",
                                            _generator_apply),
                                   Overload(f"generator_{name}_list", ("list",), "bool", _generator_apply_own)))
    for name in ("Apply", "apply"))
"""The generator library of GeneratingPolicies (sdk extensions/cel/libs/generator): ``generator.Apply``."""

GENERATING, IMAGES = "generating", "images"  # `environment`'s purposes besides the validating/mutating kinds'
_CLUSTER_ONLY = re.compile(r"(?<![\w.])resource\s*\.\s*([Pp]ost)\s*\(")
_REGISTRY_FUNCTIONS = re.compile(r"(?<![\w.])(verifyImageSignatures|verifyAttestationSignatures|extractPayload|"
                                 r"getImageData)\s*\(")


@cache
def environment(namespaced: bool = False, purpose: str = "") -> Environment:
    """Kyverno's policy environment (a namespaced policy's resource lookups take no namespace argument);
    `purpose` `GENERATING` adds ``generator.Apply``, `IMAGES` the variables of ImageValidatingPolicies."""
    from assertree.languages.cel.functions import KYVERNO

    functions = FUNCTIONS if not namespaced else _lookup_functions(True)
    if purpose == GENERATING:
        functions = (*functions, *GENERATOR)
    variables = (*VARIABLES, *IMAGE_VARIABLES) if purpose == IMAGES else VARIABLES
    name = "policies.kyverno.io" + ("/namespaced" if namespaced else "") + (f" {purpose}" if purpose else "")
    return Environment(name=name, variables=variables, extensions=EXTENSIONS, functions=(*KYVERNO, *functions),
                       cross_type_numeric_comparisons=True)


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
