"""The ValidatingPolicy model: typed access to a policy document.

Built from a document that already passed the schema check, so constructors
only read fields; free-form parts (assertion trees, context variables,
feedback values) stay plain JSON values. Each object keeps the part of the
document it came from (`document`) because ``$policy`` and ``$rule`` expose
the policy and the rule to expressions as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


@dataclass(eq=False)
class Assertion:
    """One entry of ``assert.any``/``assert.all``: the assertion tree, its message, its compiler."""

    check: Any
    message: str | None = None
    compiler: str | None = None


@dataclass(eq=False)
class AssertBlock:
    """A rule's ``assert``: assertions of which one (``any``) or every one (``all``) must hold."""

    any: list[Assertion] = field(default_factory=list)
    all: list[Assertion] = field(default_factory=list)
    compiler: str | None = None


@dataclass(eq=False)
class Match:
    """A rule's ``match`` or ``exclude``: assertion trees of which any, or all, must hold."""

    any: list[Any] = field(default_factory=list)
    all: list[Any] = field(default_factory=list)
    compiler: str | None = None


@dataclass(eq=False)
class ContextEntry:
    """One ``context`` entry: a name bound to a value (an expression or a JSON value) for the rule."""

    name: str
    variable: Any = None
    compiler: str | None = None


@dataclass(eq=False)
class Feedback:
    """One ``feedback`` entry: a named value the report shows beside the rule's result."""

    name: str
    value: Any = None
    compiler: str | None = None


@dataclass(eq=False)
class Rule:
    """One rule of a policy, its parts read from the document (kept in `document` for ``$rule``)."""

    name: str
    assert_: AssertBlock
    index: int = 0
    compiler: str | None = None
    context: list[ContextEntry] = field(default_factory=list)
    match: Match | None = None
    exclude: Match | None = None
    identifier: str = ""
    feedback: list[Feedback] = field(default_factory=list)
    document: dict = field(default_factory=dict, repr=False)


@dataclass(eq=False)
class Policy:
    """A ValidatingPolicy: its rules, metadata, and where it was read from."""

    name: str
    rules: list[Rule]
    kind: str = KIND
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    compiler: str | None = None
    document: dict = field(default_factory=dict, repr=False)
    source: str | None = None  # file the policy was read from
    document_index: int | None = None  # its position in that file's YAML stream
    line: int | None = None  # where its document starts

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
