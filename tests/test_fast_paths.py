"""The fast paths give exactly the results of the general path.

Short cuts sit on the evaluation path, and each promises it "must never
change a result":

* `RuleIndex` (assertree/engine/rule_index.py) runs only the rules whose
  literal ``match.any`` can name a resource's value;
* `StaticMapNode.holds` (assertree/tree/nodes.py) answers a literal match tree
  with dict lookups instead of walking the tree;
* a kyverno-json rule's runner binds constant context entries once per scan
  instead of once per resource (assertree/languages/kyverno_json/compile.py);
* a kyverno-json rule of the usual shape (no context entry bound per resource, no exclude, no feedback)
  runs in one function, `evaluate.usual_runner`, rather than through `evaluate_rule`;
* a scan whose policies do not mutate and that explains nothing checks its resources a slice at a time into
  one list (`Scanner.check_many`, assertree/engine/scan.py) rather than through `Scanner.check` one by one;
* a kyverno-json message is rendered from its pieces, split once, rather than by ``re.sub`` over its text
  (`Message.render`, assertree/languages/kyverno_json/messages.py);
* the CEL rewrites lex each fragment they insert once (`lexer.synthetic`, assertree/languages/cel/lexer.py).

The properties below hold them to that against the general path (every rule
on every resource; `Node.holds`, the full tree walk) on random literal trees
and random resources: the values the trees name, other values of the same
type, values of other types (``1`` against ``1.0``, ``true`` or ``"1"``),
nulls, missing keys, scalars where a map is expected, and resources that are
not maps at all. Examples are derandomized (tests/conftest.py);
``HYPOTHESIS_PROFILE=explore`` draws new ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import assertree
from assertree.engine.rule_index import RuleIndex
from assertree.engine.scan import Scanner
from assertree.errors import PolicyError
from assertree.results import ScanResult
from assertree.tree.nodes import Node, StaticMapNode, TreeError, compile_tree

# Budgets of about two seconds each; HYPOTHESIS_PROFILE=explore with more examples searches further.
SCANS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TREES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- generators -----------------------------------------------------------------------------------

# A small vocabulary, so that trees and resources often name the same keys and values.
KEYS = ["kind", "type", "mode", "metadata", "name", "spec"]
STRINGS = ["Pod", "Deployment", "managed", "data", "aws_s3_bucket", "", "pod", "1", "true", "null"]

scalars = st.one_of(
    st.sampled_from(STRINGS),
    st.sampled_from(STRINGS),
    st.integers(-2, 2),
    st.sampled_from([0.0, 1.0, -2.0, 1.5]),
    st.booleans(),
    st.none(),
)
# Literal trees: plain keys, literal leaves, non-empty nested maps (what `StaticMapNode` compiles).
literal_values = st.recursive(
    scalars, lambda inner: st.dictionaries(st.sampled_from(KEYS), inner, min_size=1, max_size=3), max_leaves=6
)
# The shapes real match blocks have (a string the index can key on, next to literals of any type),
# and any literal tree.
literal_trees = st.one_of(
    st.fixed_dictionaries({"kind": st.sampled_from(STRINGS)}),
    st.fixed_dictionaries({"kind": st.sampled_from(STRINGS), "mode": scalars}),
    st.fixed_dictionaries({"mode": st.sampled_from(STRINGS), "type": st.sampled_from(STRINGS)}),
    st.fixed_dictionaries({"type": st.sampled_from(STRINGS), "metadata": st.fixed_dictionaries({"name": scalars})}),
    st.dictionaries(st.sampled_from(KEYS), literal_values, min_size=1, max_size=3),
)
resource_keys = st.sampled_from([*KEYS, "other"])
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(resource_keys, inner, max_size=4)),
    max_leaves=6,
)
fates = st.sampled_from(["like", "like", "like", "like", "like", "drop", "random"])
percent = st.integers(0, 99)
extra_keys = st.dictionaries(resource_keys, scalars, max_size=2)
others = st.one_of(scalars, json_values)  # in place of a literal: often a scalar, sometimes a list or a map


def _variants(leaf: Any) -> list[Any]:
    """Values close to a literal leaf: itself, and the same thing as another type or another value."""
    if isinstance(leaf, bool):
        return [leaf, not leaf, int(leaf), str(leaf).lower()]
    if isinstance(leaf, int):
        return [leaf, leaf + 1, float(leaf), str(leaf), bool(leaf)]
    if isinstance(leaf, float):
        return [leaf, -leaf, int(leaf), str(leaf)] if leaf.is_integer() else [leaf, -leaf, str(leaf)]
    if isinstance(leaf, str):
        return [leaf, leaf.upper(), leaf + "x", [leaf], {"name": leaf}]
    return [None, "null", 0, {}]


def _resembling(draw: st.DrawFn, tree: Any) -> Any:
    """A value shaped like `tree`, with each key kept, dropped, or given a random value, each leaf
    kept or varied, and sometimes extra keys."""
    if not isinstance(tree, dict):
        chance = draw(percent)
        if chance < 60:
            return tree
        return draw(st.sampled_from(_variants(tree))) if chance < 85 else draw(others)
    value: dict[str, Any] = {}
    for key, child in tree.items():
        fate = draw(fates)
        if fate == "like":
            value[key] = _resembling(draw, child)
        elif fate == "random":
            value[key] = draw(others)
    return {**draw(extra_keys), **value}


@st.composite
def values_for(draw: st.DrawFn, trees: list[Any]) -> Any:
    """A resource for `trees`: usually one resembling one of them, else a random map or any JSON value."""
    chance = draw(percent)
    if trees and chance < 80:
        return _resembling(draw, draw(st.sampled_from(trees)))
    return draw(json_values) if chance % 2 else draw(st.dictionaries(resource_keys, json_values, max_size=4))


@st.composite
def policy_documents(draw: st.DrawFn, name: str) -> tuple[dict, list[Any]]:
    """A kyverno-json policy whose rules mostly match with literal trees, and those trees."""
    rules = []
    trees: list[Any] = []
    for number in range(draw(st.integers(1, 4))):
        match = draw(st.sampled_from(["literal", "literal", "literal", "literal and all", "expression", "none"]))
        rule: dict[str, Any] = {"name": f"rule-{number}"}
        if match.startswith("literal"):
            rule["match"] = {"any": draw(st.lists(literal_trees, min_size=1, max_size=2))}
            trees.extend(rule["match"]["any"])
            if match == "literal and all":
                rule["match"]["all"] = [draw(literal_trees)]
        elif match == "expression":  # not literal: the rule is never indexed
            rule["match"] = {"any": [{"(kind)": draw(st.sampled_from(STRINGS))}]}
        # the check: often what the rule matched on (it then mostly passes), else any literal tree
        matched = st.sampled_from(rule["match"]["any"]) if match.startswith("literal") else literal_trees
        rule["assert"] = {"all": [{"check": draw(st.one_of(matched, matched, literal_trees))}]}
        if draw(st.integers(0, 3)) == 0:
            rule["exclude"] = {"any": [draw(literal_trees)]}
        if draw(st.booleans()):
            rule["identifier"] = "metadata.name"
        if draw(st.booleans()):
            rule["feedback"] = [{"name": "kind", "value": "(kind)"}]
        rules.append(rule)
    document = {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy",
                "metadata": {"name": name}, "spec": {"rules": rules}}
    return document, trees


@st.composite
def scans(draw: st.DrawFn) -> tuple[list[Any], list[dict]]:
    """(resources, policy documents) for one scan."""
    drawn = [draw(policy_documents(f"policy-{number}")) for number in range(draw(st.integers(1, 3)))]
    trees = [tree for _, found in drawn for tree in found]
    return draw(st.lists(values_for(trees), min_size=1, max_size=8)), [document for document, _ in drawn]


@st.composite
def trees_and_values(draw: st.DrawFn) -> tuple[dict, list[Any]]:
    """A literal tree and values to hold it against."""
    tree = draw(literal_trees)
    return tree, draw(st.lists(values_for([tree]), min_size=1, max_size=6))


def policy(*rules: dict) -> dict:
    """A policy document with these rules (for the explicit examples)."""
    named = [{"name": f"rule-{number}", "assert": {"all": [{"check": {"kind": "Pod"}}]}, **rule}
             for number, rule in enumerate(rules)]
    return {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy",
            "metadata": {"name": "explicit"}, "spec": {"rules": named}}


def match(*trees: dict) -> dict:
    return {"match": {"any": list(trees)}}


# -- the general paths ----------------------------------------------------------------------------


def _every_rule(self: RuleIndex, value: Any) -> list:
    return self.everything


def outcome(result: ScanResult) -> list[tuple]:
    """Everything a scan reported, in order, as plain data; repr keeps 1, 1.0 and true apart."""
    position = {id(resource): number for number, resource in enumerate(result.resources)}
    return [
        (position[id(r.resource)], r.policy.name, r.rule.name, r.status, r.identifier, repr(r.error),
         [(v.check, v.message, [(e.type, e.field, str(e), repr(e.value)) for e in v.errors]) for v in r.violations],
         repr(r.feedback))
        for r in result.results
    ]


def holding(holds: Callable[[Any, dict], bool], value: Any) -> tuple[str, Any]:
    """What a match tree answers for `value`: whether it holds, or the rule ERROR it raises."""
    try:
        return "holds", holds(value, {})
    except TreeError as error:
        return "error", error.text()


class _NoStatements:
    """The statement compiler for literal trees: they have no ``(statement)`` to compile."""

    def compile(self, compiler: str, statement: str, at: tuple) -> Any:
        raise AssertionError(f"a literal tree compiled a statement: {statement!r} at {at}")

    def report(self, error: PolicyError) -> None:
        raise error


# -- properties -----------------------------------------------------------------------------------


# The cases each part of the index exists for, run before the random ones.
@example(([{"kind": "Deployment", "type": "data"}],  # a rule matches through its second tree, which names no kind
          [policy(match({"kind": "Pod"}, {"type": "data"}), match({"kind": "Deployment"}))]))
@example(([{"kind": "Pod", "mode": "managed"}],  # `mode` is a string to one rule, a number to another: ERROR
          [policy(match({"kind": "Pod", "mode": "managed"}), match({"kind": "Deployment", "mode": 1}))]))
@example(([{"kind": ["Pod"]}, {"kind": 1}, {"kind": None}, {}, ["Pod"], None, "Pod"],  # kind of the wrong type
          [policy(match({"kind": "Pod"}), match({"kind": "Deployment"}), {})]))
@example(([{"metadata": "x", "kind": "Pod"}, {"metadata": None, "kind": "Pod"}],  # a scalar where a map is tested
          [policy(match({"kind": "Pod", "metadata": {"name": "a"}}), match({"kind": "Deployment"}))]))
@SCANS
@given(scans())
def test_rule_index_never_changes_a_result(scan_input):
    resources, documents = scan_input
    policies = [assertree.compile_document(document) for document in documents]
    shortcuts = []
    real_candidates = RuleIndex.candidates

    def recording(self: RuleIndex, value: Any) -> list:
        chosen = real_candidates(self, value)
        shortcuts.append(len(chosen) < len(self.everything))
        return chosen

    with patch.object(RuleIndex, "candidates", recording):
        indexed = outcome(assertree.scan(resources, policies))
    with patch.object(RuleIndex, "candidates", _every_rule):
        general = outcome(assertree.scan(resources, policies))
    event("the index skipped rules" if any(shortcuts) else "the index skipped no rule")
    assert indexed == general


@example(({"mode": 1}, [{"mode": 1.0}, {"mode": True}, {"mode": "1"}, {"mode": None}, {"mode": [1]}]))
@example(({"kind": "Pod", "mode": 1.5}, [{"kind": "Pod", "mode": 1.5}, {"kind": "Pod", "mode": 2}, {}, [], None]))
@example(({"metadata": {"name": "a"}}, [{"metadata": None}, {"metadata": "a"}, {"metadata": {}}, {"metadata": []}]))
@example(({"mode": None, "type": False}, [{"mode": None, "type": 0}, {"mode": 0, "type": False}, {"type": False}]))
@TREES
@given(trees_and_values())
def test_static_map_node_holds_like_the_general_walk(tree_and_values):
    tree, values = tree_and_values
    node = compile_tree(tree, _NoStatements())
    assert isinstance(node, StaticMapNode)  # the fast path is the one under test
    for value in values:
        fast = holding(node.holds, value)
        assert fast == holding(lambda value, scope: Node.holds(node, value, scope), value), value
        event(f"fast path: {fast[0]} {fast[1] if fast[0] == 'holds' else ''}".strip())


# Context entries whose names shadow bindings, each other, and the engine's own names.
CONTEXT_NAMES = ["limit", "payload", "policy", "rule", "given"]
context_entries = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(CONTEXT_NAMES),
                           "variable": st.one_of(scalars, st.sampled_from(["$payload.kind", "kind"]))}),
    max_size=4,
)


@example(([{"name": "payload", "variable": 1}], [{"kind": "Pod"}]))  # a constant named like the payload
@example(([{"name": "limit", "variable": 1}, {"name": "limit", "variable": 2}], [{"kind": "Pod"}]))
@SCANS
@given(st.tuples(context_entries, st.lists(values_for([{"kind": "Pod"}]), min_size=1, max_size=4)))
def test_constant_context_bound_once_gives_the_per_resource_results(case):
    from assertree.languages.kyverno_json import evaluate
    from assertree.languages.load import compile_document

    entries, resources = case
    document = policy({
        "context": [{"name": e["name"], "variable": f"({e['variable']})" if str(e["variable"]).startswith("$")
                     else e["variable"]} for e in entries],
        "assert": {"all": [{"check": {"(to_string([$limit, $given, $policy.metadata.name, kind]))": "x"}}]},
    })
    compiled = compile_document(document, source=None)
    bindings = {"given": "bound", "limit": 0}
    fast = assertree.scan(resources, [compiled], bindings)
    original = evaluate.evaluate_rule

    def per_resource(rule, resource, scope, context=None):  # the general path: every entry, every resource
        return original(rule, resource, scope, None)

    with patch.object(evaluate, "evaluate_rule", per_resource), \
            patch("assertree.languages.kyverno_json.compile.evaluate_rule", per_resource):
        general = assertree.scan(resources, [compiled], bindings)
    assert outcome(fast) == outcome(general)


def _check_each(self: Scanner, resources: Any, results: list) -> None:
    """The general path of `Scanner.check_many`: `check`, one resource at a time."""
    for resource in resources:
        results.extend(self.check(resource)[1])


@SCANS
@given(scans())
def test_checking_many_resources_at_once_gives_the_results_of_checking_each(scan_input):
    resources, documents = scan_input
    policies = [assertree.compile_document(document) for document in documents]
    many = outcome(assertree.scan(resources, policies))
    with patch.object(Scanner, "check_many", _check_each):
        each = outcome(assertree.scan(resources, policies))
    assert many == each


_MESSAGE_PIECES = st.sampled_from(["{{", "}}", "{{ address }}", "{{name}}", "{{ missing }}", "{{ n }}", "{{ `1` }}",
                                   "{{ to_string(n) }}", "{{ address", "}} x {{", "{", "}", "\n", " ", "is wrong", "é"])


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_MESSAGE_PIECES, max_size=8),
       value=st.fixed_dictionaries({"address": st.sampled_from(["a.b", "", "{{ n }}"]), "n": st.integers(0, 2)}))
def test_a_message_renders_as_re_sub_over_its_text(pieces, value):
    from assertree.languages.kyverno_json import messages

    text = "".join(pieces)
    try:
        message = messages.Message(text)
    except PolicyError:  # a placeholder that is not an expression: refused at load time, never rendered
        return
    scope = {"payload": value}
    expected = messages._PLACEHOLDER.sub(lambda found: message._substitute(found.group(1).strip(), value, scope), text)
    assert message.render(value, scope) == expected


# Rules of every shape the usual runner takes, and some it leaves to `evaluate_rule`: messages that name the
# resource, `any` assertions, identifiers that are a plain field (of any type, or missing) or an expression,
# checks that fail, and ones that are rule ERRORs (a map expected where the resource has a scalar).
usual_rules = st.fixed_dictionaries({
    "match": st.one_of(st.none(), st.builds(lambda trees: {"any": trees}, st.lists(literal_trees, min_size=1,
                                                                                   max_size=2)),
                       st.builds(lambda tree: {"all": [tree]}, literal_trees)),
    "assert": st.one_of(
        st.builds(lambda checks: {"all": checks}, st.lists(st.one_of(literal_trees, st.just({"metadata": {}})),
                                                           min_size=1, max_size=2)),
        st.builds(lambda checks: {"any": checks}, st.lists(literal_trees, min_size=1, max_size=2))),
    "message": st.sampled_from([None, "{{ kind }} is wrong", "plain"]),
    "identifier": st.sampled_from([None, "name", "kind", "metadata.name", "missing", "to_string(mode)"]),
    "context": st.sampled_from([[], [{"name": "limit", "variable": 1}], [{"name": "k", "variable": "(kind)"}]]),
    "exclude": st.sampled_from([None, {"any": [{"kind": "Deployment"}]}]),
})


def _usual_policy(drawn: list[dict]) -> dict:
    rules = []
    for number, rule in enumerate(drawn):
        block = next(iter(rule["assert"]))
        written: dict[str, Any] = {
            "name": f"rule-{number}",
            "assert": {block: [{"check": check, **({"message": rule["message"]} if rule["message"] else {})}
                               for check in rule["assert"][block]]},
        }
        for key in ("match", "identifier", "exclude"):
            if rule[key] is not None:
                written[key] = rule[key]
        if rule["context"]:
            written["context"] = rule["context"]
        rules.append(written)
    return {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy",
            "metadata": {"name": "usual"}, "spec": {"rules": rules}}


def _usual(assert_: dict | None = None, **fields: Any) -> dict:
    return {"match": None, "assert": assert_ or {"all": [{"kind": "Pod"}]}, "message": None, "identifier": None,
            "context": [], "exclude": None, **fields}


# Identifiers of every type (a string is looked up in place, the rest go the general way), and resources that
# are not maps; a check that is a rule ERROR; a match with an `all` tree.
@example(([_usual(identifier="name"), _usual(identifier="kind", message="{{ kind }}")],
          [{"kind": "Pod", "name": 1}, {"kind": "Pod", "name": ["x"]}, {"kind": "Pod", "name": None},
           {"kind": "Pod", "name": "x"}, {"kind": "Job"}, ["Pod"], None]))
@example(([_usual(identifier="name", assert_={"all": [{"metadata": {}}]}, match={"all": [{"kind": "Pod"}]})],
          [{"kind": "Pod", "metadata": 1, "name": "n"}, {"kind": "Pod", "metadata": {}, "name": "n"}]))
@SCANS
@given(st.lists(usual_rules, min_size=1, max_size=4).flatmap(
    lambda rules: st.tuples(st.just(rules), st.lists(values_for([{"kind": "Pod", "name": "x"}, {"mode": "managed"}]),
                                                     min_size=1, max_size=6))))
def test_a_usual_rule_runs_as_evaluate_rule_runs_it(case):
    from assertree.languages.kyverno_json import compile as kyverno_json_compile
    from assertree.languages.load import compile_document

    rules, resources = case
    compiled = compile_document(_usual_policy(rules), source=None)
    fast = assertree.scan([assertree.Resource(value, default_identifier="default") for value in resources],
                          [compiled])

    def general(rule, scope):  # what the runner does for any other rule
        return lambda resource: kyverno_json_compile.evaluate_rule(rule, resource, {**scope, "payload": resource.value},
                                                                   [])

    with patch.object(kyverno_json_compile, "usual_runner", general):
        slow = assertree.scan([assertree.Resource(value, default_identifier="default") for value in resources],
                              [compiled])
    event(f"statuses {sorted({str(r.status) for r in fast.results})}")
    found = any(r.identifier not in (None, "default") for r in fast.results)
    event("an identifier found" if found else "no identifier")
    assert outcome(fast) == outcome(slow)
    assert [(r.identifier_error, r.feedback, r.message) for r in fast.results] == [
        (r.identifier_error, r.feedback, r.message) for r in slow.results]


# -- CEL rewrites: the fragments they insert, lexed once --------------------------------------------------

@given(st.lists(st.sampled_from(["[dyn(", ")].map(x, x != null)[0", "'a\\'b'", "1.5e3", " ", "&&", "r\"q\"",
                                 "has(a.b)", "\u00e9", "//c\n", "?"]), max_size=6).map("".join))
def test_a_rewrite_fragment_is_lexed_as_anew(text):
    """`lexer.synthetic` (memoised per fragment) gives the pieces lexing `text` now gives, each call a new list
    (a rewrite splices into it)."""
    from assertree.languages.cel import lexer

    fresh = [(lexer.Token(token.kind, token.text, -1, -1), "") for token in lexer.tokens(text)]
    first = lexer.synthetic(text)
    assert first == fresh
    first.append(("changed", ""))
    assert lexer.synthetic(text) == fresh
