"""The interface between a policy language and the engine.

A language package (``kyverno_json``, ``kyverno``, ``cel``) recognises its
documents, checks and compiles them, and yields `CompiledPolicy` objects. The
engine knows nothing else about a language: it asks each compiled rule for a
runner (once per scan) and calls it on each resource; a policy that mutates
gives a mutator that runs before any rule of any policy validates the resource
(Kyverno's order: mutate, then validate the mutated resource).

A compiled rule may also give an explainer (``explainer(context)``, an
`Explain`): asked about a result the rule gave, it evaluates the rule on the
result's resource once more and records how the verdict was reached
(`assertree.explanation`). The engine asks only for failing and erroring
results, and only when the scan context says ``explain``; a rule without an
explainer leaves its results unexplained.

Reports read policies and rules only through `PolicyInfo` and `RuleInfo`, so a
new language adds no code to the reporters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from assertree.records import ValueRecord
from assertree.results import PolicyInfo, RefusedRule, Resource, RuleInfo, RuleResult

if TYPE_CHECKING:  # made by --explain only: a plain scan does not import it
    from assertree.explanation import Explanation

__all__ = ["CompiledPolicy", "CompiledRule", "Explain", "Generator", "Mutator", "PolicyInfo", "RuleInfo",
           "RuleRunner", "ScanContext", "fields_read_by", "generator_of", "locate_refusals", "recompile",
           "reduce_compiled"]


class ScanContext(ValueRecord, hidden=("memo",), uncompared=("memo",)):
    """What a scan knows besides the resources and the policies; each language reads what it needs. Callers
    set fields after making one (`replace` makes another), so it is compared by its fields but not hashed."""

    bindings: Mapping[str, Any]  # kyverno-json: user bindings, as $name
    values: Any  # Kyverno CLI values file (assertree.languages.kyverno.values)
    user_info: Any  # Kyverno CLI user-info file: request.userInfo, roles, clusterRoles
    operation: str  # the admission operation Kyverno evaluates
    exceptions: Sequence[Any]  # PolicyException documents that may exempt resources
    lookups: Any  # Kyverno: a test's context file, cluster resources (a fake cluster), lookup mocks
    params: Sequence[Any]  # parameter resources admission bindings and validate.cel choose from (paramRef)
    run_unbound: bool  # admission policies: run a policy no binding names as if bound (Deny, no params)
    kubernetes_defaults: bool  # admission policies see objects with the apiserver's defaults filled in
    cluster_scoped: frozenset[tuple[str, str]]  # (group, kind) from CRD files: kept out of 'default'
    cluster: Any  # the existing objects rules may read or change (`languages.kubernetes.cluster.Cluster`)
    memo: dict  # one scan's caches (a Scanner's own)
    explain: bool  # explain each failing or erroring result (`assertree.engine.explain`)

    __slots__ = ("bindings", "cluster", "cluster_scoped", "exceptions", "explain", "kubernetes_defaults", "lookups",
                 "memo", "operation", "params", "run_unbound", "user_info", "values")
    __hash__ = None  # type: ignore[assignment]  # changed in place: no hash (as a dataclass that is not frozen)

    def __init__(
            self, bindings: Mapping[str, Any] | None = None, values: Any = None, user_info: Any = None,
            operation: str = "CREATE", exceptions: Sequence[Any] = (), lookups: Any = None, params: Sequence[Any] = (),
            run_unbound: bool = False, kubernetes_defaults: bool = True,
            cluster_scoped: frozenset[tuple[str, str]] = frozenset(), cluster: Any = None, memo: dict | None = None,
            explain: bool = False,
    ) -> None:
        self.bindings = {} if bindings is None else bindings
        self.values = values
        self.user_info = user_info
        self.operation = operation
        self.exceptions = exceptions
        self.lookups = lookups
        self.params = params
        self.run_unbound = run_unbound
        self.kubernetes_defaults = kubernetes_defaults
        self.cluster_scoped = cluster_scoped
        self.cluster = cluster
        self.memo = {} if memo is None else memo
        self.explain = explain


RuleRunner = Callable[[Resource], "RuleResult | None"]
"""One rule on one resource; None when the rule does not select the resource (no result at all)."""

Explain = Callable[[RuleResult], "Explanation | None"]
"""How a rule reached the verdict of one of its results (evaluated again, recorded); None when it cannot say."""

Mutator = Callable[[Resource], tuple[Resource, list[RuleResult]]]
"""A policy's mutate rules on one resource: the mutated resource and one result per rule that applied."""


Generator = Callable[[Resource], list[RuleResult]]
"""A policy's rules that create resources (Kyverno ``generate``, GeneratingPolicy) on one trigger: one result per
rule that applied, the objects in `RuleResult.generated`. An optional member of a compiled policy
(``generator(context)``): `assertree apply` writes what it gives; a scan reports the same rules as results."""


def generator_of(policy: Any, context: ScanContext) -> Generator | None:
    """`policy`'s `Generator` for `context`, or None when it generates nothing."""
    make = getattr(policy, "generator", None)
    return make(context) if make is not None else None


def fields_read_by(policies: Sequence[Any]) -> frozenset[str] | None:
    """The top-level fields of a resource that some rule of `policies` can read, or None when one may read
    any. A policy says so with an optional member ``fields_read()`` (a language that does not know leaves it
    out): what lets a reader leave the rest of a large payload unbuilt (`assertree.inputs.plan_reading`)."""
    found: set[str] = set()
    for policy in policies:
        read = getattr(policy, "fields_read", None)
        fields = read() if read is not None else None
        if fields is None:
            return None
        found.update(fields)
    return frozenset(found)


class CompiledRule(Protocol):
    """A rule ready to run. Members are read-only, so a language's own (narrower) policy and rule
    types satisfy the protocol."""

    @property
    def policy(self) -> PolicyInfo: ...
    @property
    def rule(self) -> RuleInfo: ...

    def runner(self, context: ScanContext) -> RuleRunner:
        """Everything that depends only on the scan (bindings, values) is prepared here, once."""
        ...


class CompiledPolicy(Protocol):
    """A policy ready to run; read-only members, as in `CompiledRule`."""

    @property
    def policy(self) -> PolicyInfo: ...
    @property
    def rules(self) -> Sequence[CompiledRule]: ...  # the rules that validate (run on the mutated resource)

    def mutator(self, context: ScanContext) -> Mutator | None:
        """None when the policy mutates nothing."""
        ...


def locate_refusals(compiled: Any, document: Any) -> Any:
    """`compiled` with the warnings of its refused rules (`results.RefusedRule`) given the file, line and column
    of their field in `document` (an `assertree.documents.reader.Document`); returns `compiled`.

    A language compiles a document without knowing where it was read; whoever read it locates the problems.
    """

    from assertree.errors import Location

    info = getattr(compiled, "policy", None)
    refused = getattr(info, "refused", None)
    if info is None or not refused:
        return compiled
    located = []
    for item in refused:
        problem = item.problem
        line, column = document.locate(problem.path) if problem.path else (document.line, None)
        located.append(RefusedRule(item.rule, problem.located(Location(document.path, line, column))))
    info.refused = located
    return compiled


# Pickling compiled policies (for worker processes: `assertree.scale`). A compiled policy holds closures, regexes,
# re2 objects and CEL programs, none of which pickle; what does is the document it was compiled from. So a compiled
# policy pickles as "compile this document again" (a few kB: the document, where it was read, and a reference to
# the language's compile function), and each process compiles a given document once (`recompile`'s cache).

_RECOMPILED: dict[tuple, Any] = {}
_RECOMPILED_LIMIT = 4096  # distinct policies one process keeps compiled; the oldest is dropped past that


def reduce_compiled(compile_document: Callable[..., Any], policy: PolicyInfo) -> tuple[Any, tuple]:
    """What a compiled policy's ``__reduce__`` returns: `recompile` with the policy's document and its place.

    `compile_document(document, source=, index=, line=)` must be a module-level function of the language
    (pickled by name) that compiles an already checked document to an equal compiled policy.
    """
    return recompile, (compile_document, policy.document, policy.source, policy.document_index, policy.line)


def recompile(compile_document: Callable[..., Any], document: Any, source: str | None, index: int | None,
              line: int | None) -> Any:
    """The compiled policy of `document` (unpickling's side of `reduce_compiled`), compiled once per process:
    unpickling the same policy again (each task of a distributed scan receives it) costs a hash, not a compile."""
    import hashlib  # here, not at the top: only worker processes need them (~2 ms of every command's start-up)
    import pickle

    digest = hashlib.blake2b(pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL), digest_size=16).digest()
    key = (compile_document.__module__, compile_document.__qualname__, digest, source, index, line)
    found = _RECOMPILED.get(key)
    if found is None:
        found = compile_document(document, source=source, index=index, line=line)
        if len(_RECOMPILED) >= _RECOMPILED_LIMIT:
            _RECOMPILED.pop(next(iter(_RECOMPILED)), None)
        _RECOMPILED[key] = found
    return found
