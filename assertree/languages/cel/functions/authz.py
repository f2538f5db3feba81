"""Kubernetes' authz library (k8s.io/apiserver/pkg/cel/library/authz.go), offline: every check has no opinion.

``authorizer.group('apps').resource('deployments').namespace('ns').check('create').allowed()``,
``authorizer.path('/healthz').check('get')``, ``authorizer.serviceAccount(ns, name)``,
``subresource``, ``name``, ``fieldSelector``, ``labelSelector``, and a decision's
``allowed()``, ``reason()``, ``errored()`` and ``error()``; ``authorizer.requestResource``
is the check for the request's own resource (`request_resource`).

A cluster answers such checks with its authorizers (RBAC, webhooks). assertree
has none, so every check is answered as an authorizer chain that has no rule
for it answers: *no opinion*. ``allowed()`` is false, ``errored()`` false,
``error()`` empty and ``reason()`` says why. A policy that grants an exception
to users allowed to do something grants none offline; a policy that denies
what is not allowed denies. The builders check their arguments as Kubernetes
does (an empty path or resource, a service account name that is not a DNS
subdomain, are errors), so an expression that fails in a cluster fails here.

Each builder's value is a tagged map (`declare`) holding its fields as JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text

__all__ = ["DECISION_REASON", "DECLARATIONS", "authorizer", "request_resource"]

DECISION_REASON = "assertree runs offline and has no authorizer: every check has no opinion"

_AUTHORIZER, _PATH, _GROUP = "authorizer", "authzPath", "authzGroup"
_RESOURCE, _DECISION = "authzResource", "authzDecision"
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _fields(value: Any, tag: str) -> dict:
    return json.loads(opaque_text(value, tag))


def _value(tag: str, **fields: Any) -> dict:
    return opaque(tag, json.dumps(fields, sort_keys=True))


def authorizer(user: str = "") -> dict:
    """The ``authorizer`` variable, acting for `user` (the request's user, when known)."""
    return _value(_AUTHORIZER, user=user)


def request_resource(group: str, resource: str, subresource: str, namespace: str, name: str, user: str = "") -> dict:
    """The ``authorizer.requestResource`` variable: the check for the request's own resource."""
    return _value(_RESOURCE, user=user, group=group, resource=resource, subresource=subresource, namespace=namespace,
                  name=name)


def _path(check: dict, path: str) -> dict:
    if not path.strip():
        raise FunctionError("path must not be empty")
    return _value(_PATH, **_fields(check, _AUTHORIZER), path=path)


def _group(check: dict, group: str) -> dict:
    return _value(_GROUP, **_fields(check, _AUTHORIZER), group=group)


def _service_account(check: dict, namespace: str, name: str) -> dict:
    if len(namespace) > 63 or not _DNS1123_LABEL.fullmatch(namespace):
        raise FunctionError(f"error validating service account namespace {namespace!r}: not a DNS-1123 label")
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(name):
        raise FunctionError(f"error validating service account name {name!r}: not a DNS-1123 subdomain")
    return _value(_AUTHORIZER, **{**_fields(check, _AUTHORIZER), "user": f"system:serviceaccount:{namespace}:{name}"})


def _resource(check: dict, resource: str) -> dict:
    if not resource.strip():
        raise FunctionError("resource must not be empty")
    return _value(_RESOURCE, **_fields(check, _GROUP), resource=resource)


def _setter(field: str):
    def set_field(check: dict, text: str) -> dict:
        return _value(_RESOURCE, **{**_fields(check, _RESOURCE), field: text})

    return set_field


def _check(tag: str):
    def check(target: dict, verb: str) -> dict:
        if not verb.strip():
            raise FunctionError("verb must not be empty")
        return _value(_DECISION, **_fields(target, tag), verb=verb)

    return check


def _decision(answer: Any):
    return lambda decision: (_fields(decision, _DECISION), answer)[1]


DECLARATIONS = (
    Declaration("path", ("map", "string"), "map", _path, member=True, receiver=_AUTHORIZER),
    Declaration("group", ("map", "string"), "map", _group, member=True, receiver=_AUTHORIZER),
    Declaration("serviceAccount", ("map", "string", "string"), "map", _service_account, member=True,
                receiver=_AUTHORIZER),
    Declaration("resource", ("map", "string"), "map", _resource, member=True, receiver=_GROUP),
    *(Declaration(field, ("map", "string"), "map", _setter(field), member=True, receiver=_RESOURCE)
      for field in ("subresource", "namespace", "name", "fieldSelector", "labelSelector")),
    Declaration("check", ("map", "string"), "map", _check(_PATH), member=True, receiver=_PATH),
    Declaration("check", ("map", "string"), "map", _check(_RESOURCE), member=True, receiver=_RESOURCE),
    Declaration("allowed", ("map",), "bool", _decision(False), member=True, receiver=_DECISION),
    Declaration("errored", ("map",), "bool", _decision(False), member=True, receiver=_DECISION),
    Declaration("error", ("map",), "string", _decision(""), member=True, receiver=_DECISION),
    Declaration("reason", ("map",), "string", _decision(DECISION_REASON), member=True, receiver=_DECISION),
)
