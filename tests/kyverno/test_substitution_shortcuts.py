"""`variables.substitute_all` skips what cannot change a document, and gives what the full walk gives.

Without ``{{`` or ``$(`` anywhere it copies; without ``$(`` it skips the reference pass. Both are held to
the full path (`substitute_variables` of `substitute_references`) on random documents: strings with
variables, references, escapes and neither, as values and as keys; the same value or the same error.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.languages.kyverno.references import substitute_references
from assertree.languages.kyverno.substitution import VariableError
from assertree.languages.kyverno.variables import KyvernoContext, substitute_all, substitute_variables

PIECES = ["a", " ", "{{ request.object.kind }}", "{{request.object.metadata.name}}", "$(./../b)", "\\$(./x)",
          "{{ missing.key }}", "\\{{ x }}", "{{- request.namespace }}", "$(<=./../n)", "{{", "$(", "}}", "ok"]
texts = st.lists(st.sampled_from(PIECES), max_size=3).map("".join)
documents = st.recursive(
    st.one_of(texts, st.integers(0, 3), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.sampled_from("abn"), texts),
                                                                          inner, max_size=3)),
    max_leaves=8,
)
RESOURCE = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "team"}}


def outcome(substitute: Any, document: Any) -> tuple:
    try:
        return ("value", substitute(document, KyvernoContext.for_cli(RESOURCE)))
    except VariableError as error:
        return ("error", str(error))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_substitute_all_gives_what_the_full_walk_gives(document):
    def full(value: Any, context: KyvernoContext) -> Any:
        return substitute_variables(substitute_references(value), context)

    assert outcome(substitute_all, document) == outcome(full, document)
