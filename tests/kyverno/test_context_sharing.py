"""The request context shares the resource instead of copying it, so it must never change it.

`KyvernoContext` puts the resource in as ``request.object`` without a deep
copy and checkpoints by copying its top level only; `_merge_maps` copies
each nested map before it changes. These tests fail if any write reaches a
map the context shares: the caller's resource or an earlier checkpoint. And a
rule's context is made only when the rule selects the resource.
"""

from __future__ import annotations

import copy

from assertree.languages.kyverno.variables import KyvernoContext


def _resource() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_variables_under_request_object_leave_the_resource_alone():
    resource = _resource()
    before = copy.deepcopy(resource)
    context = KyvernoContext.for_request(resource)
    context.add_variable("request.object.metadata.labels.team", "a")
    context.add_variable("request.object.metadata.name", "renamed")
    assert context.query("request.object.metadata.labels") == {"app": "web", "team": "a"}
    assert context.query("request.object.metadata.name") == "renamed"
    assert resource == before


def test_restore_returns_to_the_checkpoint_and_leaves_the_resource_alone():
    resource = _resource()
    before = copy.deepcopy(resource)
    context = KyvernoContext.for_request(resource, request_info={"userInfo": {"username": "me"}})
    context.checkpoint()
    context.add_variable("request.object.metadata.labels.team", "a")
    context.add_element({"name": "c"}, 0)
    context.add_context_entry("entry", {"x": 1})
    context.reset()
    assert context.query("request.object.metadata.labels") == {"app": "web"}
    context.add_variable("request.userInfo.username", "other")
    context.restore()
    assert context.query("request.userInfo.username") == "me"
    assert context.query("request.object.metadata.labels") == {"app": "web"}
    assert resource == before


def test_replacing_the_object_keeps_the_old_context_and_resource():
    first, second = _resource(), {**_resource(), "kind": "Service"}
    kept = copy.deepcopy(first)
    context = KyvernoContext.for_request(first, old_resource=first)
    context.checkpoint()
    context.add_resource(second)
    assert context.query("request.object.kind") == "Service"
    assert context.query("request.oldObject.kind") == "Pod"
    context.restore()
    assert context.query("request.object.kind") == "Pod"
    assert first == kept


_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: team-label}
spec:
  rules:
  - name: pods-need-a-team
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: "{{ request.object.metadata.name }} needs a team label"
      pattern: {metadata: {labels: {team: "?*"}}}
"""


def test_a_rule_that_does_not_select_the_resource_makes_no_context(monkeypatch):
    """The request context is made when a rule first needs it: matching reads only the request's facts,
    so a rule that does not apply costs no context, and one that applies gets the same results."""
    import yaml

    from assertree import compile_document
    from assertree.engine.scan import scan

    made = []
    for_cli = KyvernoContext.for_cli.__func__

    def counted(cls, *args, **kwargs):
        made.append(args[0].get("kind"))
        return for_cli(cls, *args, **kwargs)

    monkeypatch.setattr(KyvernoContext, "for_cli", classmethod(counted))
    policy = compile_document(yaml.safe_load(_POLICY))
    service = {**_resource(), "kind": "Service"}
    result = scan([service, _resource()], [policy])
    assert made == ["Pod"]  # the Service matched no rule: no context was made for it
    message = "validation error: web needs a team label. rule pods-need-a-team failed at path /metadata/labels/team/"
    assert [(found.status, found.message) for found in result.results] == [("fail", message)]
