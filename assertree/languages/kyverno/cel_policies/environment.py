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

An expression using the ``authorizer`` is refused when compiled
(`uses_authorizer`): authorization checks need the cluster's authorizer.
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
from assertree.languages.kyverno.cluster import Cluster, NotFound, split_api_version

__all__ = ["EXTENSIONS", "FUNCTIONS", "VARIABLES", "GlobalContextError", "Lookups", "environment",
           "read_context_file", "uses_authorizer"]

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "exceptions")
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


@cache
def environment(namespaced: bool = False) -> Environment:
    """Kyverno's policy environment (a namespaced policy's resource lookups take no namespace argument)."""
    from assertree.languages.cel.functions import KYVERNO

    functions = FUNCTIONS if not namespaced else _lookup_functions(True)
    return Environment(name="policies.kyverno.io" + ("/namespaced" if namespaced else ""), variables=VARIABLES,
                       extensions=EXTENSIONS, functions=(*KYVERNO, *functions), cross_type_numeric_comparisons=True)


def uses_authorizer(text: str) -> bool:
    """Whether `text` calls the Kubernetes authorizer (which needs a cluster)."""
    return bool(_AUTHORIZER.search(text))
