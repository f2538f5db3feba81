"""What ``kyverno apply`` prints, word for word (``commands/apply/command.go``, ``print.go``, ``table.go`` and
``processor/policy_processor.go`` at kyverno/kyverno 111e07bb), and the exit code it ends with.

- `header`: ``Applying 3 policy rule(s) to 2 resource(s)...`` (``with N
  exception(s)`` when there are exceptions);
- `mutated`: each mutating policy's resource as it leaves the policy
  (``policy NAME applied to NS/KIND/NAME:``, the YAML, ``---``; then
  ``patched targets:`` and each existing resource its ``mutate.targets`` rules
  patched), then ``Mutation:`` / ``Mutation has been applied successfully.``;
  for every ClusterPolicy with mutate rules and every resource, as the CLI
  prints them;
- `generated`: each resource a generate rule or GeneratingPolicy generates,
  printed the same way under its trigger's path, then ``Generate:`` /
  ``Generation completed successfully.``;
- `results`: per response, ``skipped mutate policy ...`` and ``error while
  applying mutate policy ...`` lines, the ``policy NAME -> resource PATH
  failed:`` block with ``1 - rule message`` lines (``failed as audit
  warning:`` with ``--audit-warn``), then ``pass: N, fail: N, warn: N, error:
  N, skip: N``;
- `table`: the ``--table`` rows (``--detailed-results`` adds the message);
- `exit_code`: 1 for a failure or an error, ``--warn-exit-code`` for warnings,
  and with ``--warn-no-pass`` when nothing passed.
"""

from __future__ import annotations

from assertree.kyverno_cli.apply import ApplyInputs, ApplyRun
from assertree.kyverno_cli.goyaml import marshal
from assertree.kyverno_cli.responses import Counts, audit, is_kyverno_policy, rule_name, rule_status, rule_type
from assertree.kyverno_cli.table import Paint, render
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN
from assertree.testing.responses import MUTATE, PolicyResponse

__all__ = ["exit_code", "generated", "header", "mutated", "resource_path", "results", "table"]

SCORED = "policies.kyverno.io/scored"


def header(inputs: ApplyInputs) -> str:
    resources = len(inputs.resources) + len(inputs.payloads)
    if inputs.exceptions:
        return (f"\nApplying {inputs.rules} policy rule(s) to {resources} resource(s) with {inputs.exceptions} "
                "exception(s)...\n")
    return f"\nApplying {inputs.rules} policy rule(s) to {resources} resource(s)...\n"


def resource_path(resource: object) -> str:
    """``namespace/Kind/name`` (``/Kind/name`` without a namespace), ``JSON payload`` when all are empty."""
    value = resource if isinstance(resource, dict) else {}
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    path = f"{metadata.get('namespace') or ''}/{value.get('kind') or ''}/{metadata.get('name') or ''}"
    return "JSON payload" if path == "//" else path


def prints_mutation(response: PolicyResponse) -> bool:
    """Whether the CLI prints this response's resource: every mutate response of a ClusterPolicy with mutate
    rules, a MutatingPolicy's when one of its rules applied."""
    return response.phase == MUTATE and (is_kyverno_policy(response.policy) or bool(response.results))


def mutated(response: PolicyResponse, *, stdin: bool = False, to_file: bool = False) -> str:
    """``printOutput`` and the ``Mutation:`` lines for one mutate response (the YAML goes to a file instead
    with ``-o``: then only the two lines)."""
    text = ""
    if not to_file:
        text += _printed(response.policy.name, response.patched, response.patched, stdin)
        targets = patched_targets(response)
        if targets:
            text += "patched targets: \n" + "".join(f"\n{marshal(target)}---\n\n" for target in targets)
    return text + "\n\nMutation:\nMutation has been applied successfully."


def patched_targets(response: PolicyResponse) -> list:
    """The existing resources the response's ``mutate.targets`` rules patched, as patched."""
    return [result.target for result in response.results if result.status == PASS and result.target is not None]


def generated(response: PolicyResponse, resource: object, *, stdin: bool = False, to_file: bool = False) -> str:
    """``processGenerateResponse`` for one generated resource: ``printOutput`` under the trigger's path (the
    YAML goes to a file instead with ``-o``), then the ``Generate:`` lines."""
    text = "" if to_file else _printed(response.policy.name, response.resource, resource, stdin)
    return text + "\n\nGenerate:\nGeneration completed successfully."


def generated_resources(response: PolicyResponse) -> list:
    """Every resource the response's generate rules (or GeneratingPolicy) would create, in order."""
    return [resource for result in response.results for resource in result.generated]


def _printed(policy: str, trigger: object, resource: object, stdin: bool) -> str:
    """``printOutput`` to standard output: ``policy NAME applied to PATH:`` (not with ``--stdin``), the YAML."""
    head = "" if stdin else f"\npolicy {policy} applied to {resource_path(trigger)}:"
    return head + "\n" + marshal(resource) + "---\n"


def mutated_document(response: PolicyResponse) -> str:
    """What ``-o FILE`` (or a folder) gets for one mutate response: the YAML, ``---`` and an empty line, then
    each patched target's YAML and ``---``."""
    return marshal(response.patched) + "---\n\n" + "".join(marshal(target) + "---\n"
                                                          for target in patched_targets(response))


def results(run: ApplyRun, counts: Counts, *, audit_warn: bool = False) -> str:
    """The lines after the run, ending with the counts (the CLI's default output)."""
    out: list[str] = []
    for _item, response in run.responses():
        policy, path = response.policy, resource_path(response.resource)
        failed = []
        for result in response.results:
            status = rule_status(policy, result)
            if status == FAIL:
                failed.append(result)
            if rule_type(response) == "Mutation":
                if status == SKIP:
                    out.append(f"\nskipped mutate policy {policy.name} -> resource {path}\n")
                elif status == ERROR:
                    out.append(f"\nerror while applying mutate policy {policy.name} -> resource {path} \nerror:  "
                               f"{result.message or ''}\n")
        if failed:
            warned = audit_warn and audit(policy, _namespace(response))
            out.append(f"policy {policy.name} -> resource {path} failed{' as audit warning' if warned else ''}:\n")
            for number, result in enumerate(failed, start=1):
                out.append(f"{number} - {rule_name(policy, result)} {result.message or 'validation failed'}\n")
    out.append(f"\n{counts.line()}\n")
    return "".join(out)


def table(run: ApplyRun, *, detailed: bool = False, audit_warn: bool = False, color: bool = False) -> str:
    """``--table``: one row per rule response of every response (``printTable``)."""
    paint = Paint(color)
    rows: list[list[str]] = []
    for _item, response in run.responses():
        policy = response.policy
        scored = str((policy.annotations or {}).get(SCORED, "")) != "false"
        namespace = _namespace(response)
        for result in response.results:
            status = rule_status(policy, result)
            if status == FAIL:
                word = "Warn" if not scored or (audit_warn and audit(policy, namespace)) else "Fail"
            else:
                word = {str(PASS): "Pass", str(WARN): "Warn", str(ERROR): "Error", str(SKIP): "Skip"}.get(status, "")
            resource = response.resource if isinstance(response.resource, dict) else {}
            metadata = resource.get("metadata") if isinstance(resource.get("metadata"), dict) else {}
            assert isinstance(metadata, dict)
            row = [str(len(rows) + 1), paint.policy(str(getattr(policy, "namespace", None) or ""), policy.name),
                   paint.cyan(result.rule.name) if is_kyverno_policy(policy) else "",
                   paint.resource(str(resource.get("kind") or ""), str(metadata.get("namespace") or ""),
                                  str(metadata.get("name") or "")),
                   paint.result(word) if word else "", ""]
            if detailed:
                row.append(result.message or "")
            rows.append(row)
    headers = ["id", "policy", "rule", "resource", "result", "reason"] + (["message"] if detailed else [])
    return render(headers, rows, color=color)


def exit_code(counts: Counts, *, warn_exit_code: int = 0, warn_no_pass: bool = False) -> tuple[int, str]:
    """The CLI's ``exit``: (code, what it prints on standard output before exiting)."""
    if counts.failed or counts.errors:
        return 1, ""
    if counts.warned and warn_exit_code != 0:
        return warn_exit_code, f"exit as warnExitCode is {warn_exit_code}"
    if counts.passed == 0 and warn_no_pass:
        return warn_exit_code, "exit as no objects satisfied policy\n"
    return 0, ""


def _namespace(response: PolicyResponse) -> str:
    resource = response.patched if isinstance(response.patched, dict) else {}
    metadata = resource.get("metadata") if isinstance(resource.get("metadata"), dict) else {}
    return str(metadata.get("namespace") or "") if isinstance(metadata, dict) else ""

