"""What a Test gives the lookups that need a cluster: its context file, cluster resources and mocks.

``kyverno test`` (cmd/cli/kubectl-kyverno/commands/test/test.go, store/,
processor/utils.go) serves lookups offline from the test's inputs; this
module reads them into one `Lookups` (`languages.kyverno.cel_policies.
environment`), which the CEL kinds and ClusterPolicy context entries both read:

- ``context``: a Context file's resources (Kyverno's fake provider, which
  knows only what it holds) and image data;
- ``clusterResources``: ClusterResource files. Their ``spec.resources`` and
  the CRDs their ``spec.crds`` name (paths relative to the test) join the
  test's own resources, targets, params and clone sources in the fake
  cluster the test always has (`test_cluster`: the CLI's fake client, with
  discovery: it knows its resource types), which then also answers
  ``resource.Get/List``, ``apiCall`` and ``configMap`` entries instead of the
  context file's resources; the CRDs also name the resources of their kinds;
- ``globalContextEntries``: each entry's ``data`` (a JSON object), inline
  ``resources`` or ``resourceFiles`` (a list of the objects, documents of YAML
  files relative to the test, which must stay inside its folder), then
  ``fieldPath`` and ``projections`` (JMESPath) applied, as
  ``store/gctx_resolve.go`` resolves them; a mock that cannot be resolved is
  an error when read;
- ``apiCallResponses``: ``url`` (absolute http/https) or ``urlPath`` (``/...``),
  ``method`` GET or POST (or none: any), ``response.body`` (a JSON object) and
  ``statusCode`` (100-599, 200 when absent), validated as the CLI validates
  them (``ValidateAPICallResponses``) and indexed ``METHOD:url`` or ``url``.

A problem in any of them is a `KyvernoTestError` naming the field, as the CLI
refuses the test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from assertree.errors import AssertreeError
from assertree.testing.testfile import KyvernoTest, KyvernoTestError

__all__ = ["test_cluster", "test_lookups"]


def test_lookups(test: KyvernoTest, cluster: Any = None) -> Any:
    """The `Lookups` of `test` (None when it gives none); `cluster`: its fake cluster (`test_cluster`), which the
    lookups read when the test has ``clusterResources``."""
    from assertree.languages.kyverno.cel_policies.environment import Lookups, read_context_file

    if not (test.context or test.cluster_resources or test.global_context_entries or test.api_call_responses):
        return None
    lookups = read_context_file(test.existing(test.context, "context")) if test.context else Lookups()
    if test.cluster_resources:
        lookups.cluster = cluster if cluster is not None else test_cluster(test)
    lookups.global_context = _global_context(test)
    lookups.http = _api_call_responses(test)
    return lookups


def _documents(path: Path, what: str) -> list[Any]:
    """The YAML documents of a file, read as the CLI reads Kubernetes inputs (go-yaml v2 through JSON)."""
    import yaml

    from assertree.languages.kyverno.manifests import go_yaml_documents, read_input_text

    try:
        return [document for document in go_yaml_documents(read_input_text(path, what)) if document is not None]
    except yaml.YAMLError as error:
        raise KyvernoTestError(f"cannot read {what} file: {error}".splitlines()[0], source=str(path)) from None
    except AssertreeError as error:
        raise KyvernoTestError(error.message, source=error.source or str(path), line=error.line) from None


def test_cluster(test: KyvernoTest, objects: Iterable[Mapping[str, Any]] = ()) -> Any:
    """The fake client ``kyverno test`` seeds (`assertree.languages.kubernetes.cluster.Cluster`): the CRDs of the
    test's ``clusterResources`` first (they name their kinds' resources), then `objects` (its resources,
    targets, params and clone sources), then the ``clusterResources``' own resources."""
    from assertree.languages.kubernetes.cluster import Cluster
    from assertree.languages.kyverno.manifests import normalise

    cluster = Cluster()
    resources: list[dict] = []
    for name in test.cluster_resources:
        path = test.existing(name, "clusterResources")
        for document in _documents(path, "clusterResources"):
            spec = document.get("spec") if isinstance(document, dict) else None
            if not isinstance(spec, dict):
                raise KyvernoTestError("a ClusterResource needs a spec (crds, resources)", source=str(path))
            for crd in spec.get("crds") or []:
                crd_path = test.existing(str(crd), "clusterResources crds")
                for definition in _documents(crd_path, "CRD"):
                    try:
                        cluster.add_crd(definition)
                    except ValueError as error:
                        raise KyvernoTestError(f"failed to load CRDs from path {crd}: {error}",
                                               source=str(crd_path)) from None
            resources.extend(normalise(dict(item)) for item in spec.get("resources") or [] if isinstance(item, dict))
    cluster.extend(objects)
    cluster.extend(resources)
    return cluster


def _fail(message: str, test: KyvernoTest, *path: str | int) -> KyvernoTestError:
    return KyvernoTestError(message, source=str(test.file), path=path)


def _global_context(test: KyvernoTest) -> dict[str, Any]:
    from assertree.languages.kyverno.cel_policies.environment import GlobalContextError

    out: dict[str, Any] = {}
    for index, entry in enumerate(test.global_context_entries):
        at = ("globalContextEntries", index)
        name = str(entry.get("name") or "").strip()
        if not name:
            raise _fail("globalContextEntries: name is required", test, *at, "name")
        if name in out:
            raise _fail(f"globalContextEntries: duplicate name {name!r}", test, *at, "name")
        sources = [key for key in ("data", "resources", "resourceFiles") if entry.get(key) is not None]
        if len(sources) != 1:
            problem = "are mutually exclusive" if sources else "one of them is required"
            raise _fail(f"globalContextEntries entry {name!r}: data, resources, and resourceFiles: {problem}", test,
                        *at)
        for position, projection in enumerate(entry.get("projections") or []):
            if not isinstance(projection, dict) or not str(projection.get("name") or "").strip():
                raise _fail(f"globalContextEntries entry {name!r}: projection name is required", test, *at,
                            "projections", position)
            if not str(projection.get("path") or "").strip():
                raise _fail(f"globalContextEntries entry {name!r} projection {projection['name']!r}: path is "
                            "required", test, *at, "projections", position)
        if entry.get("data") is not None:
            if not isinstance(entry["data"], dict):
                raise _fail(f"globalContextEntries entry {name!r}: data must be a JSON object", test, *at, "data")
            root: Any = entry["data"]
        elif entry.get("resources") is not None:
            root = list(entry["resources"])
            if not all(isinstance(item, dict) for item in root):
                raise _fail(f"globalContextEntries entry {name!r}: resources must be JSON objects (Kubernetes "
                            "resource manifests)", test, *at, "resources")
        else:
            root = _resource_files(test, name, entry["resourceFiles"], at)
        try:
            out[name] = _projected(entry, root)
        except ValueError as error:
            out[name] = GlobalContextError(f"globalContextEntries {name!r}: {error}")
    return out


def _resource_files(test: KyvernoTest, name: str, files: Any, at: tuple) -> list[dict]:
    import posixpath

    if not isinstance(files, list):
        raise _fail(f"globalContextEntries entry {name!r}: resourceFiles must be a list of paths", test, *at,
                    "resourceFiles")
    out: list[dict] = []
    for position, raw in enumerate(files):
        text = str(raw).strip()
        clean = posixpath.normpath(text.replace("\\", "/"))
        if not text or text.startswith("/") or Path(text).is_absolute() or clean == ".." or clean.startswith("../"):
            raise _fail(f"globalContextEntries entry {name!r} resourceFiles[{position}]: file path must be relative "
                        "and stay inside the test directory", test, *at, "resourceFiles", position)
        path = test.existing(text, "globalContextEntries resourceFiles")
        out.extend(document for document in _documents(path, "global context") if isinstance(document, dict)
                   and document)
    return out


def _projected(entry: Mapping[str, Any], root: Any) -> Any:
    """`root` through the entry's ``fieldPath`` and ``projections`` (Kyverno's JMESPath); ValueError if one fails."""
    from assertree.languages.kyverno.substitution import VariableError
    from assertree.languages.kyverno.variables import evaluate

    try:
        if entry.get("fieldPath"):
            root = evaluate(str(entry["fieldPath"]), root)
        projections = entry.get("projections") or []
        if not projections:
            return root
        return {str(item["name"]): evaluate(str(item["path"]), root) for item in projections}
    except VariableError as error:
        raise ValueError(str(error)) from None


def _api_call_responses(test: KyvernoTest) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for index, entry in enumerate(test.api_call_responses):
        at = ("apiCallResponses", index)
        url, url_path = str(entry.get("url") or "").strip(), str(entry.get("urlPath") or "").strip()
        if bool(url) == bool(url_path):
            raise _fail(f"apiCallResponses[{index}]: exactly one of url and urlPath is required", test, *at)
        if url:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise _fail(f"apiCallResponses[{index}]: url {url!r} must be an absolute https/http URL", test,
                            *at, "url")
        elif not url_path.startswith("/"):
            raise _fail(f"apiCallResponses[{index}]: urlPath {url_path!r} must be an absolute path starting with "
                        "'/'", test, *at, "urlPath")
        method = str(entry.get("method") or "").strip().upper()
        if method not in ("", "GET", "POST"):
            raise _fail(f"apiCallResponses[{index}]: method must be GET or POST", test, *at, "method")
        raw = entry.get("response")
        response: dict = raw if isinstance(raw, dict) else {}
        body = response.get("body")
        if not isinstance(body, dict):
            raise _fail(f"apiCallResponses[{index}] {url or url_path!r}: response.body must be a JSON object", test,
                        *at, "response", "body")
        status = response.get("statusCode") or 200
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
            raise _fail(f"apiCallResponses[{index}] {url or url_path!r}: statusCode must be between 100 and 599",
                        test, *at, "response", "statusCode")
        key = f"{method}:{url or url_path}" if method else url or url_path
        if key in out:
            raise _fail(f"apiCallResponses: duplicate entry for {url or url_path!r} (key {key!r}): each method+url "
                        "combination must be unique", test, *at)
        out[key] = {"body": body, "statusCode": status}
    return out
