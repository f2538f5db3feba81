"""Reading ``kyverno-test.yaml`` files: the ``cli.kyverno.io/v1alpha1`` Test document.

A Test names the policies, resources and optional inputs (values file,
user info, exceptions) to load, relative to its own folder, and the expected
results: one `ExpectedResult` per entry of ``results``, each covering one or
more resources (``name`` or ``namespace/name``). The older un-typed layout
(no ``apiVersion``/``kind``) is refused with a hint, as current Kyverno CLIs
refuse it; fields of the Test that assertree does not run yet are refused by
name rather than ignored, so a test never passes for checking less than it says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError

TEST_FILE_NAME = "kyverno-test.yaml"
API_VERSION = "cli.kyverno.io/v1alpha1"

# Every field of the Test and of a result that ``kyverno test`` reads (cmd/cli/kubectl-kyverno/apis/v1alpha1
# test.go and test_result.go at kyverno/kyverno 111e07bb); Kyverno decodes strictly, so any other is an error.
_FILE_LIST_FIELDS = ("policies", "resources", "exceptions", "jsonPayloads", "httpPayloads", "envoyPayloads",
                     "targetResources", "paramResources", "clusterResources")
_FILE_FIELDS = ("variables", "userinfo", "context", "jsonPayload")
_KNOWN = {"apiVersion", "kind", "metadata", "name", "values", "results", "apiCallResponses", "globalContextEntries",
          *_FILE_LIST_FIELDS, *_FILE_FIELDS}
POLICY_TYPE_FLAGS = ("isValidatingAdmissionPolicy", "isMutatingAdmissionPolicy", "isValidatingPolicy",
                     "isDeletingPolicy", "isImageValidatingPolicy", "isGeneratingPolicy", "isMutatingPolicy")
_RESULT_FIELDS = {"policy", "rule", "result", "kind", "resources", "resourceSpecs", "patchedResources",
                  "generatedResource", "generatedResources", "cloneSourceResource", "failOnMissingResources",
                  "operation", "namespace", *POLICY_TYPE_FLAGS,
                  "isMUtatingPolicy"}  # Go's JSON decoder matches field names case-insensitively: isMutatingPolicy
RESULTS = ("pass", "fail", "skip", "error", "warn")

# Fields read above that ``assertree test`` does not run yet: refused by name rather than ignored, so a test
# never passes for checking less than it says. Each feature that lands removes its fields from these sets.
NOT_YET: set[str] = set()
NOT_YET_IN_RESULTS: set[str] = set()
OPERATIONS = ("CREATE", "UPDATE", "DELETE")  # a result's operation (the CLI's NormalizeOperation)


class KyvernoTestError(AssertreeError):
    """A kyverno-test.yaml that cannot be used (exit code 2)."""


@dataclass
class ExpectedResult:
    """One entry of a Test's ``results``."""

    index: int  # position in ``results``
    policy: str  # ``name`` or ``namespace/name``
    rule: str | None
    result: str
    kind: str | None = None
    resources: list[str] = field(default_factory=list)
    patched_resources: str | None = None
    fail_on_missing_resources: bool = False
    document: dict = field(default_factory=dict)
    operation: str | None = None  # CREATE, UPDATE, DELETE, CONNECT: checked against that operation's run
    generated_resources: list[str] = field(default_factory=list)  # generatedResources, else [generatedResource]
    clone_source_resource: str | None = None
    resource_specs: list[dict] = field(default_factory=list)  # group, version, kind, namespace, subresource, name
    policy_type: str | None = None  # the is...Policy flag set (isValidatingAdmissionPolicy, ...), if any

    @property
    def policy_name(self) -> str:
        return self.policy.rsplit("/", 1)[-1]


@dataclass
class KyvernoTest:
    """One Test document; paths are as written (relative to `folder`)."""

    file: Path
    document_index: int
    name: str
    policies: list[str]
    resources: list[str]
    results: list[ExpectedResult]
    variables: str | None = None
    values: dict | None = None  # inline ``values:`` (same shape as a Values file's content)
    userinfo: str | None = None
    exceptions: list[str] = field(default_factory=list)
    context: str | None = None
    json_payloads: list[str] = field(default_factory=list)  # jsonPayloads (jsonPayload when there are none)
    http_payloads: list[str] = field(default_factory=list)
    envoy_payloads: list[str] = field(default_factory=list)
    target_resources: list[str] = field(default_factory=list)
    param_resources: list[str] = field(default_factory=list)
    cluster_resources: list[str] = field(default_factory=list)
    api_call_responses: list[dict] = field(default_factory=list)  # {url or urlPath, method, response: {body}}
    global_context_entries: list[dict] = field(default_factory=list)  # {name, data | resources | resourceFiles}
    document: dict = field(default_factory=dict)  # the Test document as read

    @property
    def folder(self) -> Path:
        return self.file.parent

    def path(self, relative: str) -> Path:
        """A file the test names, resolved against the test's folder."""
        return (self.folder / relative) if not Path(relative).is_absolute() else Path(relative)

    def existing(self, name: str, field_name: str) -> Path:
        """The file the test names in `field_name`; one that is not there fails the test, naming it."""
        path = self.path(name)
        if not name.strip() or not path.exists():
            raise KyvernoTestError(f"{field_name}: file not found: {name!r} ({path})", source=str(self.file))
        return path


def find_test_files(paths: Iterable[str | Path], file_name: str = TEST_FILE_NAME,
                    exclude: Iterable[str] = ()) -> list[Path]:
    """The test files named, and every `file_name` under the folders named, in sorted order; what the
    `exclude` patterns name is left out (`assertree.documents.paths`)."""
    from assertree.documents.paths import Exclude

    excluded = Exclude.of(exclude)
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob(file_name) if p.is_file() and not excluded.matches(p, path)))
        elif path.is_file():
            if not excluded.matches(path):
                found.append(path)
        else:
            raise KyvernoTestError("test file or folder not found", source=str(raw))
    return found


def read_test_file(path: str | Path) -> list[KyvernoTest]:
    """Every Test document of the file at `path`; raises KyvernoTestError naming the field at fault.

    A file whose bytes were read before and held only good Tests is taken from the cache of test files
    (`assertree.documents.cache`: no YAML parse; positions parsed again only if a problem needs one)."""
    from assertree.documents.reader import decode_text, load_documents, read_bytes

    name = str(path)
    try:
        data = read_bytes(path)
        documents, entry = _cached_documents(name, data), None
        if documents is None:
            documents = load_documents(name, decode_text(data, name))
            entry = _test_cache().pack([(document.index, document.line, document.value) for document in documents])
    except KyvernoTestError:
        raise
    except AssertreeError as error:  # the file is not YAML
        raise KyvernoTestError(error.message, source=error.source or name, line=error.line,
                               column=error.column) from None
    tests = []
    for document in documents:
        try:
            tests.append(parse_test(document.value, Path(path), document.index))
        except KyvernoTestError as error:
            line, column = document.locate(error.path) if error.path else (document.line, None)
            raise error.located(source=name, line=line, column=column) from None
    if entry is not None:  # every document is a good Test: the next run takes them from the cache
        _test_cache().put_packed(data, entry)
    return tests


def _cached_documents(name: str, data: bytes) -> list | None:
    """The documents of a test file of these bytes, from the cache (None when it holds none)."""
    stored = _test_cache().get(data)
    if type(stored) is not list or not all(type(item) is tuple and len(item) == 3 and type(item[0]) is int
                                           and type(item[1]) is int for item in stored):
        return None
    from assertree.documents.document import Document
    from assertree.languages.checked_files import positions_on_demand

    return [Document(value, name, index, line, positions_on_demand(name, data, index)) for index, line, value in stored]


@cache
def _test_cache() -> Any:
    """Test files read before (their documents), decided by the document readers and this module."""
    from assertree.documents.cache import DocumentCache

    return DocumentCache("tests", [str(Path(__file__).resolve().parents[1] / "documents"), __file__])


def parse_test(value: Any, file: Path, index: int = 0) -> KyvernoTest:
    """The Test in one YAML document (already parsed)."""
    if not isinstance(value, dict):
        raise KyvernoTestError("a kyverno test must be a mapping")
    if "apiVersion" not in value and "kind" not in value:
        raise KyvernoTestError(
            f"this test uses the old un-typed kyverno-test.yaml schema; add 'apiVersion: {API_VERSION}' and "
            "'kind: Test' and move 'name' under metadata (`kyverno fix test` migrates such files)")
    if value.get("kind") != "Test":  # Kyverno decodes any document as a Test; assertree wants to be sure
        raise KyvernoTestError("must be 'Test'", path=("kind",))
    for key in value:
        if key not in _KNOWN:
            raise KyvernoTestError(f"unknown field {key!r}", path=(key,))
        if key in NOT_YET:
            raise KyvernoTestError("not supported by assertree test yet", path=(key,))
    metadata = value.get("metadata") or {}
    name = metadata.get("name") if isinstance(metadata, dict) else None
    name = name or value.get("name") or file.parent.name
    for key in _FILE_LIST_FIELDS:
        items = value.get(key) or []
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise KyvernoTestError("must be a list of file paths", path=(key,))
    for key in _FILE_FIELDS:
        if value.get(key) is not None and not isinstance(value[key], str):
            raise KyvernoTestError("must be a file path", path=(key,))
    for key in ("apiCallResponses", "globalContextEntries"):
        items = value.get(key) or []
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise KyvernoTestError("must be a list of mappings", path=(key,))
    if value.get("values") is not None and not isinstance(value["values"], dict):
        raise KyvernoTestError("must be a mapping", path=("values",))
    results = value.get("results") or []
    if not isinstance(results, list):
        raise KyvernoTestError("must be a list", path=("results",))
    json_payloads = list(value.get("jsonPayloads") or []) or ([value["jsonPayload"]] if value.get("jsonPayload")
                                                              else [])
    return KyvernoTest(
        file=file,
        document_index=index,
        name=str(name),
        policies=_unique(value.get("policies") or []),
        resources=_unique(value.get("resources") or []),
        results=[_expected(item, position) for position, item in enumerate(results)],
        variables=value.get("variables"),
        values=value.get("values"),
        userinfo=value.get("userinfo"),
        exceptions=list(value.get("exceptions") or []),
        context=value.get("context"),
        json_payloads=_unique([payload for payload in json_payloads if payload.strip()]),
        http_payloads=list(value.get("httpPayloads") or []),
        envoy_payloads=list(value.get("envoyPayloads") or []),
        target_resources=list(value.get("targetResources") or []),
        param_resources=list(value.get("paramResources") or []),
        cluster_resources=list(value.get("clusterResources") or []),
        api_call_responses=list(value.get("apiCallResponses") or []),
        global_context_entries=list(value.get("globalContextEntries") or []),
        document=value,
    )


def _expected(item: Any, index: int) -> ExpectedResult:
    at = ("results", index)
    if not isinstance(item, dict):
        raise KyvernoTestError("must be a mapping", path=at)
    for key in item:
        if key not in _RESULT_FIELDS:
            raise KyvernoTestError(f"unknown field {key!r}", path=(*at, key))
    if not isinstance(item.get("policy"), str) or not item["policy"]:
        raise KyvernoTestError("required field is missing", path=(*at, "policy"))
    result = item.get("result")
    if result not in RESULTS:
        raise KyvernoTestError(f"must be one of: {', '.join(RESULTS)}", path=(*at, "result"))
    for key in NOT_YET_IN_RESULTS:
        if item.get(key):
            raise KyvernoTestError("not supported by assertree test yet", path=(*at, key))
    generated = item.get("generatedResources") or []
    if not isinstance(generated, list) or not all(isinstance(name, str) for name in generated):
        raise KyvernoTestError("must be a list of file paths", path=(*at, "generatedResources"))
    for key in ("generatedResource", "cloneSourceResource", "operation", "patchedResources"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise KyvernoTestError("must be a string", path=(*at, key))
    if item.get("operation") and item["operation"] not in OPERATIONS:
        raise KyvernoTestError(f"invalid test result for policy {item['policy']}: invalid operation "
                               f"{item['operation']!r}, must be one of {', '.join(OPERATIONS)}",
                               path=(*at, "operation"))
    if item.get("operation") and any(key.lower() == "isdeletingpolicy" and item[key] for key in item):
        raise KyvernoTestError(f"invalid test result for policy {item['policy']}: operation is not supported for "
                               "deleting policies", path=(*at, "operation"))
    specs = item.get("resourceSpecs") or []
    if not isinstance(specs, list) or not all(isinstance(spec, dict) for spec in specs):
        raise KyvernoTestError("must be a list of mappings (group, version, kind, namespace, name)",
                               path=(*at, "resourceSpecs"))
    flags = [flag for flag in POLICY_TYPE_FLAGS if any(key.lower() == flag.lower() and item[key] for key in item)]
    resources = item.get("resources") or []
    if not isinstance(resources, list) or not all(isinstance(r, str) for r in resources):
        raise KyvernoTestError("must be a list of resource names (name or namespace/name)", path=(*at, "resources"))
    rule = item.get("rule")
    return ExpectedResult(
        index=index,
        policy=item["policy"],
        rule=str(rule) if rule else None,
        result=result,
        kind=item.get("kind"),
        resources=list(resources),
        patched_resources=item.get("patchedResources") or None,
        fail_on_missing_resources=bool(item.get("failOnMissingResources")),
        document=item,
        operation=item.get("operation") or None,
        # with generatedResources, kyverno test's checkResult ignores generatedResource
        generated_resources=list(generated) or ([item["generatedResource"]] if item.get("generatedResource") else []),
        clone_source_resource=item.get("cloneSourceResource") or None,
        resource_specs=list(specs),
        policy_type=flags[0] if flags else None,
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
