"""matchConstraints on admission requests, as Kubernetes matches them."""

from __future__ import annotations

import pytest
from cel_helpers import POD_RULES, pod

from assertree.languages.kubernetes.matching import MatchConstraints, ResourceRule, matches
from assertree.languages.kubernetes.request import admission_request
from assertree.languages.kyverno.cel_policies.reading import read_spec


def _constraints(**match: object) -> MatchConstraints:
    spec = read_spec({"matchConstraints": match, "validations": [{"expression": "true"}]}, "ValidatingPolicy")
    assert spec.match is not None
    return spec.match


def _rule(**fields: object) -> dict:
    return {**POD_RULES[0], **fields}


@pytest.mark.parametrize(("rule", "selected"), [
    (_rule(), True),
    (_rule(resources=["*"]), True),
    (_rule(resources=["pods/*"]), True),  # Kubernetes: "*" as the subresource also matches none
    (_rule(resources=["pods/status"]), False),
    (_rule(resources=["deployments"]), False),
    (_rule(apiGroups=["apps"]), False),
    (_rule(apiVersions=["*"]), True),
    (_rule(operations=["UPDATE"]), False),
    (_rule(operations=["*"]), True),
    (_rule(scope="Cluster"), False),
    (_rule(scope="Namespaced"), True),
    (_rule(resourceNames=["web"]), True),
    (_rule(resourceNames=["db"]), False),
])
def test_resource_rules(rule: dict, selected: bool) -> None:
    assert matches(_constraints(resourceRules=[rule]), admission_request(pod()).attributes) is selected


def test_exclusions_win() -> None:
    constraints = _constraints(resourceRules=POD_RULES, excludeResourceRules=[_rule(resourceNames=["web"])])
    assert not matches(constraints, admission_request(pod("web")).attributes)
    assert matches(constraints, admission_request(pod("db")).attributes)


def test_object_selector_reads_labels() -> None:
    constraints = _constraints(resourceRules=POD_RULES, objectSelector={"matchLabels": {"app": "web"}})
    assert matches(constraints, admission_request(pod(labels={"app": "web"})).attributes)
    assert not matches(constraints, admission_request(pod(labels={"app": "db"})).attributes)


def test_namespace_selector_uses_the_values_file_or_the_name_label() -> None:
    class Values:
        def namespace(self, name: str) -> dict | None:
            return {"metadata": {"name": name, "labels": {"env": "prod"}}} if name == "prod" else None

    constraints = _constraints(resourceRules=POD_RULES, namespaceSelector={"matchLabels": {"env": "prod"}})
    assert matches(constraints, admission_request(pod(namespace="prod"), values=Values()).attributes)
    assert not matches(constraints, admission_request(pod(namespace="dev"), values=Values()).attributes)
    by_name = _constraints(resourceRules=POD_RULES,
                           namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "dev"}})
    assert matches(by_name, admission_request(pod(namespace="dev")).attributes)


def test_operations_shape_object_and_old_object() -> None:
    resource = pod()
    create, update, delete = (admission_request(resource, operation=op) for op in ("CREATE", "UPDATE", "DELETE"))
    assert (create.object, create.old_object) == (resource, None)
    assert (update.object, update.old_object) == (resource, resource)
    assert (delete.object, delete.old_object) == (None, resource)
    assert delete.request["operation"] == "DELETE"
    assert create.request["resource"] == {"group": "", "version": "v1", "resource": "pods"}


def test_a_model_rule_without_constraints_matches_all() -> None:
    everything = MatchConstraints(resource_rules=())
    assert matches(everything, admission_request(pod()).attributes)
    assert ResourceRule((), (), (), ()).scope == "*"
