"""Kubernetes' format and authz libraries in the apiserver's environment.

Expected values of the format library are those of k8s.io/apiserver/pkg/cel/library/format_test.go;
the authorizer answers every check with "no opinion" (`functions.authz`).
"""

from __future__ import annotations

import pytest

from assertree.languages.cel.engine import CelEvaluationError
from assertree.languages.cel.functions.authz import DECISION_REASON, authorizer, request_resource
from assertree.languages.cel.functions.format import FORMATS
from assertree.languages.cel.kubernetes import kubernetes_environment
from assertree.languages.cel.rewrite import rewrite

ENV = kubernetes_environment("test-format", ("object", "authorizer", "authorizer.requestResource"))
DATA = {"object": {"metadata": {"name": "web"}}, "authorizer": authorizer("alice"),
        "authorizer.requestResource": request_resource("apps", "deployments", "", "prod", "web", "alice")}


def run(text: str):
    return ENV.compile(rewrite(text)).evaluate(DATA)


LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


@pytest.mark.parametrize(("text", "errors"), [
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("apiextensions.k8s.io")', None),
    ('format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', None),
    ('format.dns1123LabelPrefix().validate("my-label-prefix-")', None),
    ('format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', None),
    ('format.dns1035LabelPrefix().validate("my-label-prefix-")', None),
    ('format.uri().validate("http://example.com")', None),
    ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', None),
    ('format.byte().validate("aGVsbG8=")', None),
    ('format.date().validate("2021-01-01")', None),
    ('format.datetime().validate("2021-01-01T00:00:00Z")', None),
    ('format.dns1123Label().validate("contains a space")', [LABEL]),
    ('format.dns1123Subdomain().validate("contains a space")', [SUBDOMAIN]),
    ('format.dns1035Label().validate("contains a space")', [DNS1035]),
    ('format.qualifiedName().validate("contains a space")', [QUALIFIED]),
    ('format.dns1123LabelPrefix().validate("contains a space-")', [LABEL]),
    ('format.dns1123SubdomainPrefix().validate("contains a space-")', [SUBDOMAIN]),
    ('format.dns1035LabelPrefix().validate("contains a space-")', [DNS1035]),
    ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
    ('format.date().validate("2020-01-32")', ["invalid date"]),
    ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
    ('format.labelValue().validate("my-cool-label-Value")', None),
    ('format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")', [LABEL_VALUE]),
    (f'format.dns1123Label().validate("{"a" * 64}")', ["must be no more than 63 characters"]),
    ('format.uri().validate("example.com")', ['parse "example.com": invalid URI for request']),
    ('format.uuid().validate("not-a-uuid")', ["does not match the UUID format"]),
])
def test_validate_is_none_or_the_errors(text: str, errors: list[str] | None) -> None:
    assert run(f"{text}.hasValue()") is (errors is not None)
    if errors is not None:
        assert run(f"{text}.value()") == errors


def test_named_formats_are_the_constants() -> None:
    for name in FORMATS:
        assert run(f'format.named("{name}").hasValue()') is True
        assert run(f'format.named("{name}").value() == format.{name}()') is True
    assert run('format.dns1123Label() == format.labelValue()') is False
    assert run('format.named("unknown").hasValue()') is False
    assert run('format.named("unknown").orValue(format.uuid()).validate("x").orValue(["none"])') == [
        "does not match the UUID format"]


def test_a_message_expression_can_join_the_errors() -> None:
    text = 'format.dns1123Label().validate(object.metadata.name + "_").value().join(", ")'
    assert run(text) == LABEL


def test_the_authorizer_has_no_opinion_offline() -> None:
    check = "authorizer.group('apps').resource('deployments').namespace('prod').name('web').check('create')"
    assert run(f"{check}.allowed()") is False
    assert run(f"{check}.errored()") is False
    assert run(f"{check}.error()") == ""
    assert run(f"{check}.reason()") == DECISION_REASON
    assert run("authorizer.path('/healthz').check('get').allowed()") is False
    assert run("authorizer.serviceAccount('default', 'builder').group('').resource('pods').check('list').allowed()") \
        is False
    assert run("authorizer.requestResource.subresource('scale').check('update').allowed()") is False
    assert run("authorizer.group('').resource('pods').labelSelector('app=web').fieldSelector('a=b')"
               ".check('list').allowed()") is False


@pytest.mark.parametrize(("text", "message"), [
    ("authorizer.path(' ').check('get')", "path must not be empty"),
    ("authorizer.group('apps').resource('').check('get')", "resource must not be empty"),
    ("authorizer.serviceAccount('Not_A_Label', 'sa').path('/x').check('get')", "service account namespace"),
])
def test_the_authorizer_checks_its_arguments_as_kubernetes_does(text: str, message: str) -> None:
    with pytest.raises(CelEvaluationError, match=message):
        run(text)


@pytest.mark.parametrize(("text", "rewritten"), [
    ("format.named('uuid').value()", "format.named('uuid')[?'format'].value()"),
    ("f.validate(g(x), ')').hasValue()", "f.validate(g(x), ')')[?'errors'].hasValue()"),
    ("validate(x)", "validate(x)"),  # not a method: not Kubernetes' validate
    ("'a.validate(b)'", "'a.validate(b)'"),  # text in a string is left alone
])
def test_calls_returning_an_optional_are_indexed(text: str, rewritten: str) -> None:
    assert rewrite(text) == rewritten


def test_kyvernos_cel_policies_have_the_format_library_too() -> None:
    from assertree.languages.cel.kubernetes import environment

    kyverno = environment("kyverno-format", ("object",))
    program = kyverno.compile(rewrite("format.labelValue().validate(object.v).hasValue()"))
    assert program.evaluate({"object": {"v": "not valid!"}}) is True
    assert program.evaluate({"object": {"v": "fine"}}) is False
