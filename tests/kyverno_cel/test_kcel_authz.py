"""Authorization ValidatingPolicies (HTTP and Envoy modes) on check requests, and jwt.Decode."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from assertree.languages.base import ScanContext
from assertree.languages.kyverno.cel_policies.language import compile_document
from assertree.results import Resource


def _policy(mode: str, *validations: str, **spec) -> object:
    return compile_document({"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy",
                             "metadata": {"name": "authz"},
                             "spec": {"evaluation": {"mode": mode},
                                      "validations": [{"expression": text} for text in validations], **spec}})


def _check(mode: str, request: dict, *validations: str, **spec) -> tuple[str, str]:
    result = _policy(mode, *validations, **spec).check_request(mode, Resource(request), ScanContext())
    return str(result.status), result.message


def _segment(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _token(claims: dict, secret: str = "secret") -> str:
    signed = f"{_segment({'alg': 'HS256', 'typ': 'JWT'})}.{_segment(claims)}"
    signature = hmac.new(secret.encode(), signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


ENVOY = "object.attributes.request.http.headers[?'authorization'].orValue('')"


@pytest.mark.parametrize(("claims", "secret", "expected"), [
    ({"role": "admin", "exp": 4102444800}, "secret", ("pass", "request allowed")),
    ({"role": "dev", "exp": 4102444800}, "secret", ("fail", "request denied with status code 403")),
    ({"role": "admin", "exp": 946684800}, "secret", ("fail", "request denied with status code 401")),  # expired
])
def test_envoy_policies_decode_jwts(claims, secret, expected):
    validations = [
        f"!jwt.Decode({ENVOY}.split(' ')[1], 'secret').Valid ? envoy.Denied(401).Response() : null",
        f"jwt.Decode({ENVOY}.split(' ')[1], 'secret').Claims.role != 'admin' ? envoy.Denied(403).Response() : null",
        "envoy.Allowed().WithHeader(envoy.Header('x-user', 'a').KeepEmptyValue()).Response().WithMessage('ok')",
    ]
    request = {"attributes": {"request": {"http": {"headers": {"authorization": f"Bearer {_token(claims, secret)}"}}}}}
    assert _check("Envoy", request, *validations) == expected


def test_a_token_that_does_not_verify_is_an_error_unless_failure_policy_ignores_it():
    request = {"attributes": {"request": {"http": {"headers": {"authorization": f"Bearer {_token({}, 'other')}"}}}}}
    validation = f"jwt.Decode({ENVOY}.split(' ')[1], 'secret').Valid ? envoy.Allowed().Response() : null"
    status, message = _check("Envoy", request, validation)
    assert status == "error" and "could not verify" in message
    assert _check("Envoy", request, validation, failurePolicy="Ignore") == ("skip", "request does not match")


def test_http_requests_read_headers_by_their_canonical_name_and_query_parameters():
    request = {"attributes": {"method": "GET", "header": {"X-Team": ["core"]}, "query": {"debug": ["1"]}}}
    allowed = ("object.attributes.Header('x-team') == ['core'] && object.attributes.QueryParam('debug') == ['1'] "
               "? http.Allowed().Response() : http.Denied('no').Response()")
    assert _check("HTTP", request, allowed) == ("pass", "request allowed")
    assert _check("HTTP", request, "http.Denied('nope').Response()") == ("fail", "request denied, reason: nope")
    assert _check("HTTP", request, "null") == ("skip", "request does not match")
    matched = _check("HTTP", request, "http.Allowed().Response()",
                     matchConditions=[{"name": "post", "expression": "object.attributes.method == 'POST'"}])
    assert matched == ("skip", "request does not match")


def test_authorization_policies_do_not_run_on_resources():
    from cel_helpers import pod, run

    document = {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": "authz"},
                "spec": {"evaluation": {"mode": "HTTP"}, "validations": [{"expression": "http.Allowed().Response()"}]}}
    assert run(document, pod()) == []
