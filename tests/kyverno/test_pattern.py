"""Kyverno `validate.pattern` / `anyPattern`: the conformance rows of kyverno/policies, then the rules one by one."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from assertree import jp
from assertree.languages.kyverno.conditions import evaluate_conditions
from assertree.languages.kyverno.pattern import PatternResult, RuleOutcome, match_pattern, validate_rule
from assertree.results import Status

DATA = Path(__file__).resolve().parent.parent / "conformance" / "data" / "kyverno-policies"
_ALLOWED_FEATURES = {"validate", "validate.pattern", "validate.anyPattern"}
_NIL_MAPS = {"annotations", "labels", "matchLabels", "nodeSelector", "data", "stringData"}


# -- loading the conformance data (as `kyverno test` loads it) -------------------------------------


@cache
def _documents(path: Path) -> tuple[Any, ...]:
    with path.open(encoding="utf-8") as stream:
        return tuple(document for document in yaml.safe_load_all(stream) if document)


def _normalize_nil_maps(value: Any) -> None:
    """The CLI's ``normalizeNilMaps``: ``labels:`` (null) and friends become empty maps."""
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None and key in _NIL_MAPS:
                value[key] = {}
            elif isinstance(item, dict):
                _normalize_nil_maps(item)
            elif isinstance(item, list):
                for element in item:
                    _normalize_nil_maps(element)


def _plain_kinds(match: Any) -> list[str] | None:
    """The kinds of a match block that selects on kinds alone, else None."""
    if not isinstance(match, dict):
        return None
    filters = match.get("any") or match.get("all") or [match]
    if set(match) - {"any", "all", "resources"} or not isinstance(filters, list):
        return None
    kinds: list[str] = []
    for entry in filters:
        if not isinstance(entry, dict) or set(entry) != {"resources"}:
            return None
        resources = entry["resources"]
        if not isinstance(resources, dict) or set(resources) != {"kinds"}:
            return None
        kinds.extend(resources["kinds"])
    return kinds


@cache
def _manifest() -> dict:
    return json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))


def _pattern_rows(
    autogen: bool = False, preconditions: bool = False
) -> list[tuple[str, dict, dict, list[str], dict, dict]]:
    """Core rows whose rule is a plain pattern / anyPattern rule: (id, rule, resource, kinds, row, policy).

    With `autogen`, the rows that need Kyverno's autogen instead (a Pod rule checked on a Pod controller);
    with `preconditions`, the rules that also have preconditions.
    """
    manifest = _manifest()
    selected = []
    for test in manifest["tests"]:
        if not {"validate.pattern", "validate.anyPattern"} & set(test["features"]):
            continue  # spare loading the YAML of tests without pattern rules
        test_dir = DATA / test["path"]
        spec = _documents(DATA / test["test"])[0]
        policies = [doc for rel in spec.get("policies", []) for doc in _documents((test_dir / rel).resolve())]
        resources = [doc for rel in spec.get("resources", []) for doc in _documents((test_dir / rel).resolve())]
        for number, row in enumerate(test["rows"]):
            if row.get("tier") != "core" or row.get("vacuous"):
                continue
            if ("autogen" in row.get("needs", ())) is not autogen or row["rule"].startswith("autogen-"):
                continue
            policy = next((p for p in policies if p.get("metadata", {}).get("name") == row["policy"]), None)
            if policy is None:
                continue
            rule = next((r for r in policy["spec"].get("rules", []) if r.get("name") == row["rule"]), None)
            allowed = {"name", "match", "validate"} | ({"preconditions"} if preconditions else set())
            if rule is None or set(rule) - allowed or preconditions is not ("preconditions" in rule):
                continue  # context, exclude ...
            validate = rule.get("validate") or {}
            if set(validate) - {"message", "pattern", "anyPattern", "failureAction", "validationFailureAction"}:
                continue
            body = validate.get("pattern", validate.get("anyPattern"))
            if body is None or "{{" in json.dumps(body):
                continue
            kinds = _plain_kinds(rule.get("match"))
            if kinds is None:
                continue
            wanted = row["resource"]
            resource = next(
                (
                    r for r in resources
                    if r.get("kind") == wanted["kind"] and r.get("metadata", {}).get("name") == wanted["name"]
                ),
                None,
            )
            if resource is None:
                continue
            selected.append((f"{test['path']}#{number}", rule, resource, kinds, row, policy))
    return selected


ROWS = _pattern_rows()
AUTOGEN_ROWS = _pattern_rows(autogen=True)
PRECONDITION_ROWS = _pattern_rows(preconditions=True)
_CONTROLLERS = {"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"}


def _kind_matches(spec: str, resource: dict) -> bool:
    """A match kind (``Pod``, ``apps/v1/Deployment``, ``networking.k8s.io/v1/Ingress``, ``*``) against a resource."""
    if spec == "*":
        return True
    *version, kind = spec.split("/")
    if kind != resource.get("kind"):
        return False
    api_version = resource.get("apiVersion", "")
    return not version or "/".join(version) == api_version or api_version.endswith("/" + "/".join(version))


def _verdict(rule: dict, resource: dict, kinds: list[str]) -> str:
    """The row's result as `kyverno test` computes it: 'excluded' when the rule does not match the kind."""
    if not any(_kind_matches(kind, resource) for kind in kinds):
        return "excluded"
    # `kyverno test` turns every number of a resource into a float64 (convertNumericValuesToFloat64)
    resource = json.loads(json.dumps(resource), parse_int=float)
    _normalize_nil_maps(resource)
    validate = rule["validate"]
    outcome = validate_rule(
        resource,
        rule["name"],
        pattern=validate.get("pattern"),
        any_pattern=validate.get("anyPattern") if "pattern" not in validate else None,
        message=validate.get("message", ""),
    )
    return str(outcome.status)


def test_the_selection_is_large_enough() -> None:
    assert len(ROWS) >= 100


def test_every_plain_pattern_row_agrees_with_kyverno() -> None:
    disagreements = []
    for row_id, rule, resource, kinds, row, _ in ROWS:
        verdict = _verdict(rule, resource, kinds)
        if verdict != row["result"]:
            disagreements.append((row_id, row["rule"], row["resource"]["name"], row["result"], verdict))
    agreed = len(ROWS) - len(disagreements)
    print(f"plain pattern rows: {agreed} of {len(ROWS)} agree")
    assert disagreements == []


def _autogen_rule(policy: dict, rule: dict, kind: str) -> dict | None:
    """The rule Kyverno's autogen makes from a Pod rule for `kind` (its pattern moved under the Pod template)."""
    kinds = _plain_kinds(rule["match"]) or []
    if "Pod" not in kinds or (kind not in _CONTROLLERS and kind != "CronJob"):
        return None
    annotations = policy.get("metadata", {}).get("annotations") or {}
    controllers = annotations.get("pod-policies.kyverno.io/autogen-controllers", "all")
    if controllers == "none" or (controllers != "all" and kind not in controllers.split(",")):
        return None
    validate = dict(rule["validate"])

    def wrap(pattern: Any) -> Any:
        wrapped = {"spec": {"template": pattern}}
        return {"spec": {"jobTemplate": wrapped}} if kind == "CronJob" else wrapped

    if "pattern" in validate:
        validate["pattern"] = wrap(validate["pattern"])
    else:
        validate["anyPattern"] = [wrap(pattern) for pattern in validate["anyPattern"]]
    return {**rule, "validate": validate}


def test_pod_rules_agree_with_kyverno_on_controllers_through_autogen() -> None:
    # Autogen is not this module's job; moving the pattern under the template as Kyverno's autogen does
    # (pkg/autogen/v1/rule.go) checks the pattern engine on several hundred more real resources.
    disagreements = []
    checked = 0
    for row_id, rule, resource, _, row, policy in AUTOGEN_ROWS:
        generated = _autogen_rule(policy, rule, resource["kind"])
        if generated is None:
            continue
        checked += 1
        verdict = _verdict(generated, resource, [resource["kind"]])
        if verdict != row["result"]:
            disagreements.append((row_id, row["rule"], row["resource"]["name"], row["result"], verdict))
    print(f"autogen pattern rows: {checked - len(disagreements)} of {checked} agree")
    assert checked >= 100
    assert disagreements == []


class Unresolvable(Exception):
    pass


def _float_numbers(value: Any) -> Any:
    """JMESPath results as Kyverno holds them: every number a float64."""
    return json.loads(json.dumps(value), parse_int=float)


def _resolver(resource: dict) -> Callable[[Any], Any]:
    """A minimal stand-in for Kyverno's substitution: a string that is one whole ``{{ expr }}`` only."""
    scope = {"request": {"object": resource, "operation": "CREATE"}}

    def resolve(raw: Any) -> Any:
        if not isinstance(raw, str) or "{{" not in raw:
            return raw
        text = raw.strip()
        if not (text.startswith("{{") and text.endswith("}}")) or text.count("{{") != 1:
            raise Unresolvable(f"this test resolves whole {{{{ }}}} expressions only: {raw}")
        result = jp.search(text[2:-2].strip(), scope)
        if result is None:
            raise Unresolvable(f"variable {raw} resolved to null")
        return _float_numbers(result)

    return resolve


def test_rules_with_preconditions_agree_with_kyverno() -> None:
    # Preconditions with whole `{{ }}` keys over request.object / request.operation, then the pattern.
    disagreements = []
    checked = 0
    for row_id, rule, resource, kinds, row, _ in PRECONDITION_ROWS:
        resource = _float_numbers(resource)
        _normalize_nil_maps(resource)
        outcome = evaluate_conditions(rule["preconditions"], _resolver(resource))
        if outcome.error is not None and isinstance(outcome.error.cause, Unresolvable):
            continue
        checked += 1
        if not any(_kind_matches(kind, resource) for kind in kinds):
            verdict = "excluded"
        elif outcome.error is not None:
            verdict = "error"
        elif not outcome.passed:
            verdict = "skip"
        else:
            verdict = _verdict(rule, resource, kinds)
        if verdict != row["result"]:
            disagreements.append((row_id, row["rule"], row["resource"]["name"], row["result"], verdict))
    print(f"pattern rows with preconditions: {checked - len(disagreements)} of {checked} agree")
    assert checked >= 15
    assert disagreements == []


@pytest.mark.parametrize("status", ["pass", "fail", "skip"])
def test_the_selection_covers_each_result(status: str) -> None:
    assert any(row["result"] == status for *_, row, _ in ROWS) or status == "skip"


# -- match_pattern: maps, lists, scalars ---------------------------------------------------------------


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web", "app.kubernetes.io/name": "shop"}},
    "spec": {
        "containers": [
            {"name": "nginx", "image": "nginx:1.25", "resources": {"limits": {"memory": "256Mi"}}},
            {"name": "sidecar", "image": "busybox:latest"},
        ],
        "hostNetwork": False,
    },
}


def check(pattern: Any, resource: Any = POD) -> PatternResult:
    return match_pattern(resource, pattern)


def test_a_matching_map_passes() -> None:
    assert check({"metadata": {"labels": {"app": "web"}}}) == PatternResult(Status.PASS)


def test_a_mismatching_leaf_fails_with_kyverno_path_and_text() -> None:
    result = check({"metadata": {"labels": {"app": "api"}}})
    assert result == PatternResult(
        Status.FAIL, "/metadata/labels/app/", "resource value 'web' does not match 'api' at path /metadata/labels/app/"
    )


def test_a_list_pattern_applies_its_first_map_to_every_item() -> None:
    result = check({"spec": {"containers": [{"image": "!*:latest"}]}})
    assert result.status is Status.FAIL
    assert result.path == "/spec/containers/1/image/"


def test_a_star_leaf_requires_the_field_and_reports_the_parent_path() -> None:
    result = check({"spec": {"containers": [{"resources": {"limits": {"memory": "?*"}}}]}})
    assert result.status is Status.FAIL and result.path == "/spec/containers/1/resources/"
    star = check({"spec": {"containers": [{"name": "*", "securityContext": "*"}]}})
    assert star == PatternResult(Status.FAIL, "/spec/containers/0/", "/spec/containers/0//securityContext not found")


def test_structure_mismatches_fail() -> None:
    assert check({"spec": {"hostNetwork": {"x": 1}}}).error == (
        "pattern and resource have different structures. Path: /spec/hostNetwork/. "
        "Expected map[string]interface {}, found bool"
    )
    result = check({"metadata": {"name": ["web"]}})
    assert result.status is Status.FAIL
    assert result.error.endswith("resource does not satisfy the expected overlay pattern")


def test_a_scalar_pattern_against_a_list_checks_every_item() -> None:
    resource = {"spec": {"args": ["--a", "--b"]}}
    assert check({"spec": {"args": "--*"}}, resource).status is Status.PASS
    result = check({"spec": {"args": "--a"}}, resource)
    assert result.error == "resource value '[--a --b]' does not match '--a' at path /spec/args/"


def test_null_and_missing_fields() -> None:
    assert check({"spec": {"hostPID": None}}).status is Status.PASS  # missing reads as null
    assert check({"spec": {"hostNetwork": None}}).status is Status.PASS  # false is a zero value
    assert check({"metadata": {"name": None}}).status is Status.FAIL
    assert check({"spec": {"hostPID": ""}}).status is Status.FAIL  # "" does not accept a missing field


def test_an_empty_list_pattern_is_an_error_without_path() -> None:
    assert check({"spec": {"containers": []}}) == PatternResult(Status.FAIL, "/spec/containers/", "pattern Array empty")


def test_nested_list_patterns_length_mismatch_is_an_error() -> None:
    resource = {"matrix": [[1], [2]]}
    result = check({"matrix": [[1], [2], [3]]}, resource)
    assert result.status is Status.ERROR and "array length mismatch" in result.error
    assert check({"matrix": [[1], [2]]}, resource).status is Status.PASS


# -- anchors ------------------------------------------------------------------------------------------------


def test_conditional_anchor_not_met_skips() -> None:
    result = check({"metadata": {"labels": {"(app)": "api", "tier": "backend"}}})
    assert result.status is Status.SKIP
    assert result.error == (
        "conditional anchor mismatch: resource value 'web' does not match 'api' at path /metadata/labels/app/"
    )


def test_conditional_anchor_key_missing_skips() -> None:
    result = check({"spec": {"(dnsPolicy)": "None", "hostNetwork": True}})
    assert result == PatternResult(
        Status.SKIP, "", "conditional anchor mismatch: conditional anchor key doesn't exist in the resource"
    )


def test_conditional_anchor_met_validates_the_rest() -> None:
    assert check({"metadata": {"labels": {"(app)": "web", "app.kubernetes.io/name": "shop"}}}).status is Status.PASS
    result = check({"metadata": {"labels": {"(app)": "web", "tier": "backend"}}})
    assert result.status is Status.FAIL and result.path == "/metadata/labels/tier/"


def test_conditional_anchor_in_a_list_checks_only_matching_items() -> None:
    pattern = {"spec": {"containers": [{"(name)": "nginx", "image": "nginx:*"}]}}
    assert check(pattern).status is Status.PASS
    failing = {"spec": {"containers": [{"(name)": "sidecar", "image": "nginx:*"}]}}
    assert check(failing).path == "/spec/containers/1/image/"
    none = {"spec": {"containers": [{"(name)": "db", "image": "nginx:*"}]}}
    assert check(none).status is Status.SKIP


def test_global_anchor_not_met_skips_the_rule() -> None:
    pattern = {"spec": {"containers": [{"<(image)": "*:v9", "name": "never"}]}}
    result = check(pattern)
    assert result.status is Status.SKIP
    assert result.error.startswith("global anchor mismatch: resource value 'nginx:1.25'")
    # in a list, items where the global anchor holds are still validated
    partly = check({"spec": {"containers": [{"<(image)": "*:latest", "name": "never"}]}})
    assert partly.path == "/spec/containers/1/name/"


def test_negation_anchor() -> None:
    result = check({"spec": {"X(hostNetwork)": None}})
    assert result == PatternResult(
        Status.FAIL, "/spec/hostNetwork/", "negation anchor matched in resource: /spec/hostNetwork/ is not allowed"
    )
    assert check({"spec": {"X(hostPID)": None}}).status is Status.PASS


def test_equality_anchor_checks_only_present_keys() -> None:
    assert check({"spec": {"=(hostPID)": True}}).status is Status.PASS
    assert check({"spec": {"=(hostNetwork)": False}}).status is Status.PASS
    assert check({"spec": {"=(hostNetwork)": True}}).path == "/spec/hostNetwork/"


def test_existence_anchor_needs_one_matching_item() -> None:
    assert check({"spec": {"^(containers)": [{"name": "sidecar"}]}}).status is Status.PASS
    result = check({"spec": {"^(containers)": [{"name": "db"}]}})
    assert result == PatternResult(
        Status.FAIL, "/spec/containers/", "existence anchor validation failed at path /spec/containers/"
    )
    wrong = check({"spec": {"^(hostNetwork)": [{"a": 1}]}})
    assert wrong.error.startswith("invalid resource type bool: Existence ^ () anchor")


def test_a_failure_after_a_missing_anchor_key_is_an_error() -> None:
    # Kyverno's KeysAreMissing: an existence anchor key absent from the resource turns a failure into an error.
    result = check({"spec": {"^(volumes)": [{"name": "x"}], "hostNetwork": True}})
    assert result.status is Status.ERROR
    assert result.error == "resource value 'false' does not match 'true' at path /spec/hostNetwork/"


def test_a_conditional_anchor_sibling_skip_wins_over_an_equality_failure() -> None:
    pattern = {"spec": {"(dnsPolicy)": "None", "=(hostNetwork)": True}}
    assert check(pattern).status is Status.SKIP


def test_anchor_keys_are_read_after_trimming_spaces() -> None:
    assert check({"spec": {" X(hostNetwork) ": None}}).status is Status.FAIL


def test_wildcard_keys_expand_in_labels_only() -> None:
    assert check({"metadata": {"labels": {"app.kubernetes.io/*": "shop"}}}).status is Status.PASS
    assert check({"metadata": {"labels": {"app.kubernetes.io/*": "other"}}}).path == (
        "/metadata/labels/app.kubernetes.io/name/"
    )
    assert check({"metadata": {"labels": {"=(team*)": "x"}}}).status is Status.PASS
    assert check({"metadata": {"labels": {"team*": "?*"}}}).path == "/metadata/labels/team*/"
    # elsewhere a wildcard key is literal
    assert check({"spec": {"host*": False}}).status is Status.FAIL


def test_wildcard_expansion_drops_non_string_label_patterns() -> None:
    assert check({"metadata": {"labels": {"app": 1}}}).status is Status.PASS  # dropped, as Kyverno does


def test_the_pattern_given_is_not_modified() -> None:
    pattern = {"metadata": {"labels": {"app.kubernetes.io/*": "shop"}}}
    check(pattern)
    assert pattern == {"metadata": {"labels": {"app.kubernetes.io/*": "shop"}}}


# -- validate_rule: Kyverno's messages --------------------------------------------------------------------


def test_rule_messages_for_pattern() -> None:
    assert validate_rule(POD, "r", pattern={"spec": {"hostNetwork": False}}) == RuleOutcome(
        Status.PASS, "validation rule 'r' passed."
    )
    failed = validate_rule(POD, "r", pattern={"spec": {"hostNetwork": True}}, message="No host network")
    assert failed == RuleOutcome(
        Status.FAIL, "validation error: No host network. rule r failed at path /spec/hostNetwork/", "/spec/hostNetwork/"
    )
    bare = validate_rule(POD, "r", pattern={"spec": {"hostNetwork": True}})
    assert bare.message == "validation error: rule r failed at path /spec/hostNetwork/"
    skipped = validate_rule(POD, "r", pattern={"spec": {"(dnsPolicy)": "None"}})
    assert skipped.status is Status.SKIP
    error = validate_rule(POD, "r", pattern={"spec": {"^(volumes)": [{"a": "b"}], "hostNetwork": True}}, message="m.")
    assert error.status is Status.ERROR
    assert error.message.startswith("validation error: m. rule r execution error: resource value 'false'")


def test_rule_messages_for_any_pattern() -> None:
    passing = validate_rule(POD, "r", any_pattern=[{"spec": {"hostNetwork": True}}, {"spec": {"hostNetwork": False}}])
    assert passing == RuleOutcome(Status.PASS, "validation rule 'r' anyPattern[1] passed.")
    failing = validate_rule(
        POD, "r", any_pattern=[{"spec": {"hostNetwork": True}}, {"spec": {"(dnsPolicy)": "x"}}], message="need one"
    )
    assert failing == RuleOutcome(
        Status.FAIL, "validation error: need one. rule r[0] failed at path /spec/hostNetwork/"
    )
    skipped = validate_rule(POD, "r", any_pattern=[{"spec": {"(dnsPolicy)": "x"}}])
    assert skipped.status is Status.SKIP
    assert skipped.message.startswith("rule r[0] skipped: conditional anchor mismatch")
    assert validate_rule(POD, "r", any_pattern={"a": 1}).status is Status.ERROR


def test_any_pattern_numbers_go_through_json() -> None:
    resource = {"spec": {"replicas": "1.0"}}
    assert validate_rule(resource, "r", pattern={"spec": {"replicas": 1}}).status is Status.FAIL
    assert validate_rule(resource, "r", any_pattern=[{"spec": {"replicas": 1}}]).status is Status.PASS
