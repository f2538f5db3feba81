"""What a scan route does with a request once it is parsed: resources in, policies compiled, one scan.

Both routes follow kyverno-json's handlers (pkg/server/scan, pkg/server/playground):
pre-processors apply to the payload in order, a list payload is one resource per
item, and every policy runs on every resource. Everything the library already
does is the library's: reading payload text (`assertree.inputs.payload`), Terraform
plans, compiling policies of any language (`assertree.languages.load`), the scan.
A problem with the input is a `RequestError` with a located message; the scan
itself never raises for a failing or erroring rule (those are results).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assertree.errors import AssertreeError, PolicyError
from assertree.serve.requests import RequestError

PAYLOAD_SOURCE = "payload"  # how messages and reports name the request's payload
POLICY_SOURCE = "policy"  # ... and the playground's policy text


def compile_policy_text(text: str) -> list[Any]:
    """Every policy document of `text` (YAML stream or JSON), compiled and linked; any language assertree reads
    (an admission policy's bindings may come in the same text)."""
    from assertree.documents.reader import load_documents
    from assertree.languages.load import compile_read, link

    try:
        documents = load_documents(POLICY_SOURCE, text)
    except AssertreeError as error:
        raise RequestError(f"failed to parse policies ({error})") from None
    except RecursionError:
        raise RequestError("failed to parse policies (nested too deeply)") from None
    if not documents:
        raise RequestError("input policy is null: the policy text holds no YAML or JSON document")
    policies = []
    for document in documents:
        try:
            policies.append(compile_read(document))
        except PolicyError as error:
            raise RequestError(f"invalid policy: {error.problem}") from None
    policies, unlinked = link(policies)  # admission policies and the bindings that name them
    if unlinked:
        raise RequestError(f"invalid policy: {unlinked[0]}")
    return policies


def compile_preprocessors(texts: Sequence[str]) -> list[Any]:
    """The request's pre-processors, compiled; a `RequestError` names the one that does not parse
    (worded for the API: the CLI's own check speaks of ``--pre-process``)."""
    from assertree import jp
    from assertree.jp.errors import quoted

    compiled = []
    for text in texts:
        try:
            expression = jp.compile(text)
        except jp.ParseError as error:
            raise RequestError(f"invalid preprocessor {quoted(text, error)}: {error.located()}") from None
        except jp.JMESPathError as error:
            raise RequestError(f"invalid preprocessor {quoted(text)}: {error}") from None
        if expression.problems:
            raise RequestError(f"invalid preprocessor {quoted(text)}: {'; '.join(expression.problems)}")
        compiled.append(expression)
    return compiled


def _resources(payload: Any, preprocessors: Sequence[str]) -> list[Any]:
    from assertree.inputs.payload import resources_from

    compiled = compile_preprocessors(preprocessors)
    try:
        return resources_from(payload, compiled)
    except AssertreeError as error:
        raise RequestError(str(error)) from None


def resources_of_value(value: Any, preprocessors: Sequence[str] = ()) -> list[Any]:
    """The resources of a JSON payload (``/api/scan``): each item of a list, or the value itself."""
    from assertree.inputs.payload import Payload

    return _resources(Payload(PAYLOAD_SOURCE, value), preprocessors)


def resources_of_text(text: str, preprocessors: Sequence[str] = (), *, terraform: bool = False) -> list[Any]:
    """The resources of payload text (the playground): JSON, or a YAML stream (one resource per
    document), or with `terraform` one resource per planned resource of a plan. The text is kept
    so that reports and the page can point at the line of each failing field."""
    from assertree.inputs.payload import parse_payload
    from assertree.inputs.terraform import plan_resources

    try:
        payload = parse_payload(text.encode(), PAYLOAD_SOURCE, kind=None)
    except AssertreeError as error:
        raise RequestError(f"failed to parse payload ({error})") from None
    except RecursionError:
        raise RequestError("failed to parse payload (nested too deeply)") from None
    if not terraform:
        return _resources(payload, preprocessors)
    if preprocessors:
        raise RequestError("'terraform' and 'preprocessors' do not go together: the plan's resources are "
                           "picked out already")
    try:
        return plan_resources(payload.value, PAYLOAD_SOURCE, file=payload)
    except AssertreeError as error:
        raise RequestError(str(error)) from None


def run_scan(resources: Sequence[Any], policies: Sequence[Any], bindings: Mapping[str, Any] | None = None,
             context: Any = None, *, explain: bool = False):
    """The scan; a ScanResult. `context` is the server's `ScanContext` (admission policies' params ...); with
    `explain`, failing and erroring results are explained."""
    from assertree.engine.scan import scan
    from assertree.languages.base import ScanContext

    try:
        if explain:
            context = context.replace(explain=True) if context is not None else ScanContext(explain=True)
        return scan(resources, policies, bindings, context=context)
    except RecursionError:
        raise RequestError("payload nested too deeply to check") from None
