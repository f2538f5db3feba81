"""Runs compiled policies of any language over resources and collects the results.

For each resource: every policy that mutates, in order, each on the output of
the previous one; then every rule that can apply (`RuleIndex`), in policy and
rule order, on the mutated resource (Kyverno's order: mutate, then validate).
What a rule does is its language's business (`assertree.languages.base`); the
engine only prepares each rule once per scan and collects what it returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping
from typing import Any

from assertree.documents.collector import collector_paused
from assertree.documents.nesting import TOO_DEEP
from assertree.engine.rule_index import RuleIndex
from assertree.errors import PayloadError
from assertree.languages.base import CompiledPolicy, ScanContext
from assertree.results import ERROR, Resource, RuleError, RuleResult, ScanResult


def scan(
    resources: Iterable[Any],
    policies: Iterable[Any],
    bindings: Mapping[str, Any] | None = None,
    *,
    context: ScanContext | None = None,
    jobs: int = 1,
    freeze: bool = False,
) -> ScanResult:
    """Check every resource against every policy.

    `resources` are JSON values (or `Resource`s carrying their source);
    `policies` come from `load_policies` (kyverno-json `Policy` models are
    compiled here); `bindings` are extra variables for kyverno-json policies
    (``$name``); `context` carries what other languages need (values files,
    user info, exceptions) and, when given, its own bindings; with
    ``context.explain`` each failing or erroring result is explained
    (`assertree.engine.explain`). `jobs` > 1 lets forked worker processes check shares of a large list
    of resources (`assertree.engine.forked`), with the same result. `freeze`: the results live as long as
    the process (a one-shot CLI run), so they leave the collector's sight as the scan ends (`gc.freeze`).

    The cyclic garbage collector is paused meanwhile: the results are a scan's only lasting objects and
    hold no cycle, yet its passes would walk each of them twice (~10% of the checking at 10,000
    resources, for nothing collected); with `freeze` they are never walked. Rule errors can still leave
    cycles (an exception and its traceback), so past `YOUNG_LIMIT` new objects one pass of the young
    generations runs (`_collect_young`): what a hostile payload can pile up stays bounded.
    """
    items = [item if isinstance(item, Resource) else Resource(item) for item in resources]
    scanner = Scanner(policies, bindings, context=context)
    results: list[RuleResult] = []
    extend = results.extend
    units: Iterable[tuple[Resource, list[RuleResult]]] | None = None if scanner.plain else map(scanner.check, items)
    if jobs > 1:  # imported only then: start-up time
        from assertree.engine.forked import check_forked, forks

        if forks(scanner, items, jobs):
            units = check_forked(scanner, items, jobs)
    collecting = gc.isenabled()  # a caller that paused the collector itself keeps it paused
    with collector_paused():
        if units is None:  # every resource stays itself: checked a slice at a time into one list
            for start in range(0, len(items), _SLICE):
                scanner.check_many(items[start:start + _SLICE], results)
                if collecting:
                    _collect_young()
        else:
            for position, (resource, found) in enumerate(units):
                items[position] = resource
                extend(found)
                if collecting and not position % _SLICE:
                    _collect_young()
        if freeze:
            gc.freeze()
    return ScanResult(items, scanner.policies, results)


_SLICE = 1024  # resources checked between two looks at what the collector counts (`_collect_young`)


YOUNG_LIMIT = 200_000  # objects the collector tracks, created since its last pass, before `scan` runs one


def _collect_young() -> None:
    """While `scan` holds the collector paused: one pass over the young generations once `YOUNG_LIMIT` objects
    have been made since the last (each object it keeps is then walked once, and moved out of their sight)."""
    if gc.get_count()[0] > YOUNG_LIMIT:
        gc.collect(1)


class Scanner:
    """One scan's prepared policies: `check` runs them on one resource at a time.

    What `scan` loops over; a stream of resources (or a worker holding a share
    of them) calls `check` itself and never keeps more than one resource.
    """

    def __init__(
        self,
        policies: Iterable[Any],
        bindings: Mapping[str, Any] | None = None,
        *,
        context: ScanContext | None = None,
    ) -> None:
        compiled = [_compiled(policy) for policy in policies]
        if context is None:
            context = ScanContext(bindings=dict(bindings or {}))
        else:  # its own caches: a context may serve several scans, in several threads
            context = context.replace(bindings={**context.bindings, **(bindings or {})}, memo={})
        self.policies = [policy.policy for policy in compiled]
        self._mutators = [mutator for policy in compiled if (mutator := policy.mutator(context)) is not None]
        runners = [(rule, rule.runner(context)) for policy in compiled for rule in policy.rules]
        self._index = RuleIndex(runners)
        self._rule_of = {id(runner): rule for rule, runner in runners}
        self.plain = not self._mutators and not context.explain  # `check_many` may stand for `check`
        if context.explain:  # chosen once: a scan that explains nothing runs `check` as it is
            from assertree.engine.explain import Explainer

            self._explainer = Explainer([rule for policy in compiled for rule in policy.rules], context)
            self.check = self._check_explained  # type: ignore[method-assign]

    @property
    def mutates(self) -> bool:
        """Whether a policy of this scan mutates: `check` may then hand on another resource than it was given."""
        return bool(self._mutators)

    def check(self, resource: Resource) -> tuple[Resource, list[RuleResult]]:
        """`resource` after the mutating policies, and every result of a rule that applied to it."""
        try:
            return self._check(resource)
        except RecursionError:  # rare: run again, rule by rule, to tell which rules it was (`_check_deep`)
            return self._check_deep(resource)

    def check_many(self, resources: Iterable[Resource], results: list[RuleResult]) -> None:
        """`check` of each resource, its results appended to `results`, for a `plain` scanner (no policy
        mutates, nothing is explained: each resource stays itself): one call for many resources and no list
        per resource, since most give one result or none. Invariant: `results` gains what ``check`` returns
        for each, in order (`tests/test_fast_paths.py` holds the two to each other)."""
        candidates = self._index.candidates
        append = results.append
        for resource in resources:
            mark = len(results)
            try:
                for run in candidates(resource.value):
                    result = run(resource)
                    if result is not None:
                        append(result)
            except RecursionError:  # as `check`: this resource again, rule by rule
                del results[mark:]
                results.extend(self._check_deep(resource)[1])

    def _check(self, resource: Resource) -> tuple[Resource, list[RuleResult]]:
        results: list[RuleResult] = []
        for mutator in self._mutators:
            resource, mutated = mutator(resource)
            results.extend(mutated)
        for run in self._index.candidates(resource.value):
            result = run(resource)
            if result is not None:
                results.append(result)
        return resource, results

    def _check_deep(self, resource: Resource) -> tuple[Resource, list[RuleResult]]:
        """`check` for a resource on which some rule recursed past the limit (a value a rule built deeper than
        the readers would have accepted): each such rule is an ERROR on it, the other rules run as usual. A
        mutating policy that does so stops the scan, naming the resource's file (its result is the resource
        every later rule would see)."""
        results: list[RuleResult] = []
        for mutator in self._mutators:
            try:
                resource, mutated = mutator(resource)
            except RecursionError:
                raise PayloadError(f"{TOO_DEEP} (a mutate rule)", source=resource.source) from None
            results.extend(mutated)
        for run in self._index.candidates(resource.value):
            try:
                result = run(resource)
            except RecursionError:
                compiled = self._rule_of[id(run)]
                result = RuleResult(resource, compiled.policy, compiled.rule, ERROR, error=RuleError(TOO_DEEP),
                                    message=TOO_DEEP)
            if result is not None:
                results.append(result)
        return resource, results

    def _check_explained(self, resource: Resource) -> tuple[Resource, list[RuleResult]]:
        """`check`, then every failing or erroring result explained (``ScanContext.explain``)."""
        resource, results = Scanner.check(self, resource)
        self._explainer.apply(results)
        return resource, results


def _compiled(policy: Any) -> CompiledPolicy:
    """A compiled policy; a kyverno-json `Policy` model is compiled on the spot."""
    if hasattr(policy, "mutator"):
        return policy
    from assertree.languages.kyverno_json.compile import compile_policy

    return compile_policy(policy)
