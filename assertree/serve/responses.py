"""Scan results as kyverno-json's server answers them (pkg/server/model/response.go).

One entry per rule that applied, per resource, in scan order:

    {"policy": name, "rule": name, "identifier": text (left out when empty),
     "result": "pass" | "fail" | "error", "message": text}

``message`` is empty for a pass, the error's text for an error, and for a failure
the violations as kyverno-json's ``Results.Error("")`` joins them: for each failing
assertion ``-> <message> (CHECK=...)``, then `` -> <field error> (PATH=...)`` per
field error, all joined with newlines (values are printed as JSON, as in every
assertree report, where kyverno-json prints Go syntax). Policy languages with more outcomes (Kyverno's ``skip`` and
``warn``) keep their status name and give their rule message.

Rules the policies hold but assertree does not run offline (`results.RefusedRule`) are listed
once under ``notRun`` (``{"policy", "rule", "message"}``), a key left out when there are none.

With ``details`` each entry also says where things are, for the playground page:
``resource`` (index in the scan), ``violations`` with each field error's ``line`` and
``column`` in the payload text (when the payload was text), and the resource's own;
for a result explained (``?explain=true``), ``explanation``: its steps as in the
JSON report, each also with its ``text`` (`assertree.report.explain`) and, for a
field of the resource, its ``line`` and ``column``.
"""

from __future__ import annotations

from typing import Any

from assertree.results import ERROR, FAIL, PASS, RuleResult, ScanResult


def message_of(result: RuleResult) -> str:
    """The ``message`` of one result (see the module docstring), in kyverno-json's wording: the text
    report's own lines for it (`assertree.report.text.rule_lines`), one leading space fewer."""
    from assertree.report.text import rule_lines
    from assertree.report.wording import rule_error

    if result.status == ERROR:
        return rule_error(result.error, kyverno_json=True) if result.error is not None else (result.message or "")
    if result.status in (PASS, FAIL) and result.violations:
        return "\n".join(line[1:] for line in rule_lines(result, kyverno_json=True, explained=False)[1:])
    if result.status != PASS and result.message:
        return result.message
    return ""


def results_of(scan: ScanResult, *, details: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The response body: ``{"results": [...]}`` (see the module docstring)."""
    locator = None
    positions: dict[int, int] = {}
    if details:
        from assertree.report.locate import Locator

        locator = Locator()
        positions = {id(resource): index for index, resource in enumerate(scan.resources)}
    entries = []
    for result in scan.results:
        entry: dict[str, Any] = {"policy": result.policy.name, "rule": result.rule.name}
        if result.identifier:
            entry["identifier"] = result.identifier
        entry["result"] = str(result.status)
        entry["message"] = message_of(result)
        if locator is not None:
            entry.update(_details(result, locator, positions))
        entries.append(entry)
    body: dict[str, Any] = {"results": entries}
    refused = not_run(scan.policies)
    if refused:
        body["notRun"] = refused
    return body


def not_run(policies: Any) -> list[dict[str, str]]:
    """The refused rules of `policies` (compiled policies or `PolicyInfo`s), one entry each."""
    from assertree.results import refused_rules

    return [{"policy": getattr(policy, "policy", policy).name, "rule": item.rule, "message": str(item.problem)}
            for policy in policies for item in refused_rules(policy)]


def _where(location: Any) -> dict[str, int]:
    if location is None or location.line is None:
        return {}
    return {"line": location.line, "column": location.column or 1}


def _details(result: RuleResult, locator: Any, positions: dict[int, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"resource": positions.get(id(result.resource)), "kind": result.policy.kind}
    out.update(_where(locator.field(result.resource)))
    if result.explanation is not None:
        out["explanation"] = _explanation(result, locator)
    if result.status == FAIL or result.violations:
        out["violations"] = [
            {
                "check": violation.check,
                "message": violation.message,
                "errors": [
                    {"type": error.type, "field": error.field, "body": error.body(),
                     **_where(locator.field(result.resource, error))}
                    for error in violation.errors
                ],
            }
            for violation in result.violations
        ]
    return out


def _explanation(result: RuleResult, locator: Any) -> dict[str, Any]:
    from assertree.report.explain import step_text

    explanation = result.explanation
    assert explanation is not None
    steps = []
    for step in explanation.steps:
        entry = {**step.as_dict(), "text": step_text(step)}
        if step.resource_path is not None:
            entry.update(_where(locator.field(result.resource, steps=step.resource_path)))
        steps.append(entry)
    return {"steps": steps, "truncated": explanation.truncated}
