"""The ValidatingPolicy model: typed access to a policy document.

Built from a document that already passed the schema check, so constructors
only read fields; free-form parts (assertion trees, context variables,
feedback values) stay plain JSON values. Each object keeps the part of the
document it came from (`document`) because ``$policy`` and ``$rule`` expose
the policy and the rule to expressions as JSON.
"""

from __future__ import annotations

from typing import Any

from assertree.records import Record

API_VERSION = "json.kyverno.io/v1alpha1"
KIND = "ValidatingPolicy"


def document_kind_problem(value: Any) -> tuple[tuple, str] | None:
    """Why a loaded document is not a ValidatingPolicy, as (field path, message); None when it is one."""
    expected = f"policies must be apiVersion {API_VERSION}, kind {KIND}"
    if not isinstance(value, dict):
        return (), f"expected a {KIND} document (a mapping), found {type(value).__name__}"
    api_version, kind = value.get("apiVersion"), value.get("kind")
    if api_version == API_VERSION and kind == KIND:
        return None
    where = ("kind",) if api_version == API_VERSION else ("apiVersion",)
    if api_version is None and kind is None:
        return where, f"not a policy: the document has no apiVersion and kind ({expected})"
    return where, f"unsupported document: apiVersion {api_version!r}, kind {kind!r} ({expected})"


class Assertion(Record):
    """One entry of ``assert.any``/``assert.all``: the assertion tree, its message, its compiler."""

    check: Any
    message: str | None
    compiler: str | None

    __slots__ = ("check", "compiler", "message")

    def __init__(self, check: Any, message: str | None = None, compiler: str | None = None) -> None:
        self.check = check
        self.message = message
        self.compiler = compiler


class AssertBlock(Record):
    """A rule's ``assert``: assertions of which one (``any``) or every one (``all``) must hold."""

    any: list[Assertion]
    all: list[Assertion]
    compiler: str | None

    __slots__ = ("all", "any", "compiler")

    def __init__(
            self, any: list[Assertion] | None = None, all: list[Assertion] | None = None, compiler: str | None = None,
    ) -> None:
        self.any = [] if any is None else any
        self.all = [] if all is None else all
        self.compiler = compiler


class Match(Record):
    """A rule's ``match`` or ``exclude``: assertion trees of which any, or all, must hold."""

    any: list[Any]
    all: list[Any]
    compiler: str | None

    __slots__ = ("all", "any", "compiler")

    def __init__(self, any: list[Any] | None = None, all: list[Any] | None = None, compiler: str | None = None) -> None:
        self.any = [] if any is None else any
        self.all = [] if all is None else all
        self.compiler = compiler


class ContextEntry(Record):
    """One ``context`` entry: a name bound to a value (an expression or a JSON value) for the rule."""

    name: str
    variable: Any
    compiler: str | None

    __slots__ = ("compiler", "name", "variable")

    def __init__(self, name: str, variable: Any = None, compiler: str | None = None) -> None:
        self.name = name
        self.variable = variable
        self.compiler = compiler


class Feedback(Record):
    """One ``feedback`` entry: a named value the report shows beside the rule's result."""

    name: str
    value: Any
    compiler: str | None

    __slots__ = ("compiler", "name", "value")

    def __init__(self, name: str, value: Any = None, compiler: str | None = None) -> None:
        self.name = name
        self.value = value
        self.compiler = compiler


class Rule(Record, hidden=("document",)):
    """One rule of a policy, its parts read from the document (kept in `document` for ``$rule``)."""

    name: str
    assert_: AssertBlock
    index: int
    compiler: str | None
    context: list[ContextEntry]
    match: Match | None
    exclude: Match | None
    identifier: str
    feedback: list[Feedback]
    document: dict

    __slots__ = (
        "assert_", "compiler", "context", "document", "exclude", "feedback", "identifier", "index", "match", "name",
    )

    def __init__(
            self, name: str, assert_: AssertBlock, index: int = 0, compiler: str | None = None,
            context: list[ContextEntry] | None = None, match: Match | None = None, exclude: Match | None = None,
            identifier: str = "", feedback: list[Feedback] | None = None, document: dict | None = None,
    ) -> None:
        self.name = name
        self.assert_ = assert_
        self.index = index
        self.compiler = compiler
        self.context = [] if context is None else context
        self.match = match
        self.exclude = exclude
        self.identifier = identifier
        self.feedback = [] if feedback is None else feedback
        self.document = {} if document is None else document


class Policy(Record, hidden=("document",)):
    """A ValidatingPolicy: its rules, metadata, and where it was read from."""

    name: str
    rules: list[Rule]
    kind: str
    labels: dict[str, str]
    annotations: dict[str, str]
    compiler: str | None
    document: dict
    source: str | None  # file the policy was read from
    document_index: int | None  # its position in that file's YAML stream
    line: int | None  # where its document starts

    __slots__ = (
        "annotations", "compiler", "document", "document_index", "kind", "labels", "line", "name", "rules", "source",
    )

    def __init__(
            self, name: str, rules: list[Rule], kind: str = KIND, labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, compiler: str | None = None, document: dict | None = None,
            source: str | None = None, document_index: int | None = None, line: int | None = None,
    ) -> None:
        self.name = name
        self.rules = rules
        self.kind = kind
        self.labels = {} if labels is None else labels
        self.annotations = {} if annotations is None else annotations
        self.compiler = compiler
        self.document = {} if document is None else document
        self.source = source
        self.document_index = document_index
        self.line = line

    @property
    def severity(self) -> str | None:
        """The ``policies.kyverno.io/severity`` annotation (low, medium, high, critical)."""
        return self.annotations.get("policies.kyverno.io/severity")

    @property
    def title(self) -> str | None:
        return self.annotations.get("title.policy.kyverno.io") or self.annotations.get("policies.kyverno.io/title")

    @property
    def description(self) -> str | None:
        return self.annotations.get("description.policy.kyverno.io") or self.annotations.get(
            "policies.kyverno.io/description"
        )


def _match(data: dict | None) -> Match | None:
    if data is None:
        return None
    return Match(any=list(data.get("any") or []), all=list(data.get("all") or []), compiler=data.get("compiler"))


def _assertions(items: list | None) -> list[Assertion]:
    return [Assertion(check=a.get("check"), message=a.get("message"), compiler=a.get("compiler")) for a in items or []]


def rule_from_document(data: dict, index: int) -> Rule:
    assert_data = data.get("assert") or {}
    return Rule(
        name=data["name"],
        index=index,
        compiler=data.get("compiler"),
        context=[
            ContextEntry(name=c["name"], variable=c.get("variable"), compiler=c.get("compiler"))
            for c in data.get("context") or []
        ],
        match=_match(data.get("match")),
        exclude=_match(data.get("exclude")),
        identifier=data.get("identifier") or "",
        feedback=[
            Feedback(name=f["name"], value=f.get("value"), compiler=f.get("compiler"))
            for f in data.get("feedback") or []
        ],
        assert_=AssertBlock(
            any=_assertions(assert_data.get("any")),
            all=_assertions(assert_data.get("all")),
            compiler=assert_data.get("compiler"),
        ),
        document=data,
    )


def policy_from_document(
    document: dict, *, source: str | None = None, index: int | None = None, line: int | None = None
) -> Policy:
    """The model of a schema-valid ValidatingPolicy document."""
    metadata = document.get("metadata") or {}
    spec = document.get("spec") or {}
    return Policy(
        name=metadata.get("name", ""),
        labels=dict(metadata.get("labels") or {}),
        annotations=dict(metadata.get("annotations") or {}),
        compiler=spec.get("compiler"),
        rules=[rule_from_document(rule, i) for i, rule in enumerate(spec.get("rules") or [])],
        document=document,
        source=source,
        document_index=index,
        line=line,
    )
