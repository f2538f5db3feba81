"""Rewriting a ``kyverno-test.yaml`` for the converted policies, beside them under DIR.

Every expected result is kept as it was (result, resources, kind, patched
resources); only what names a policy changes:

- a row of a converted rule names the converted document (its namespace kept
  for a ``Policy``), loses ``rule`` (the new kinds have none; autogen rows
  ``autogen-<rule>`` fold into theirs) and gains ``isValidatingPolicy: true``,
  which ``kyverno test`` needs to find a ValidatingPolicy's results; a
  ReplicationController row names the rule's ReplicationController policy;
- a row without ``rule`` (every rule of the policy) becomes one row per
  converted rule, plus itself when some rules stayed in the source policy;
- a row of a rule that stayed (not converted) is unchanged: the remainder of
  its policy, under the same name, is written beside the converted ones;
- a row naming a rule the policy does not have checks nothing (``kyverno
  test`` passes it as Excluded whatever the policy does); the new kinds have
  no rule to miss, so the row is left out, with a note, rather than made to
  check something the test's author did not write;
- likewise a resource the source rule does not select (an ``exclude``, a
  ``match`` filter the converted policy says as a match condition), which the
  converted policy skips: ``kyverno test`` passes any row on it for the source
  (Excluded), so a row expecting anything but ``skip`` loses that resource,
  with a note (the row, when it names no other).

A values file giving one resource its own ``request.operation`` or
``serviceAccountName`` speaks to a ClusterPolicy only: the CEL kinds take
the operation of ``globalValues`` and the requester of a user info file.
The converted rows naming such resources move to a Test of their own (in
the same file, after the first) whose values file sets that operation in
``globalValues`` and whose user info names that service account
(`split_requests`).

Paths in the test (policies, resources, values, user info, patched
resources ...) are rewritten relative to the new test's folder: to the copy
under DIR when the file is under a SRC, else to the original.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PolicyNames", "Request", "rewrite_test", "service_account_user", "split_requests"]

_PATH_LISTS = ("policies", "resources", "exceptions", "jsonPayloads", "httpPayloads", "envoyPayloads",
               "targetResources", "paramResources", "clusterResources")
_PATH_FIELDS = ("variables", "userinfo", "context", "jsonPayload")
_RESULT_PATHS = ("patchedResources", "generatedResource", "cloneSourceResource")
_RESULT_PATH_LISTS = ("generatedResources",)


@dataclass
class PolicyNames:
    """What a source policy's rules became: rule -> converted documents (kind, name, namespace); rules left
    in the remainder are absent; `kinds` is the kind each converted document name has."""

    name: str
    namespace: str | None
    rules: dict[str, list[tuple[str, str, frozenset[str]]]]  # rule -> [(kind, name, resources it checks)]
    all_rules: list[str]
    remainder: bool
    # rule -> the test resources (namespace, name) the source rule does not select and its conversion skips
    unselected: Mapping[str, frozenset[tuple[str, str]]] = field(default_factory=dict)

    def qualified(self, name: str) -> str:
        return f"{self.namespace}/{name}" if self.namespace else name


_FLAGS = {"ValidatingPolicy": "isValidatingPolicy", "NamespacedValidatingPolicy": "isValidatingPolicy",
          "MutatingPolicy": "isMutatingPolicy", "NamespacedMutatingPolicy": "isMutatingPolicy",
          "ValidatingAdmissionPolicy": "isValidatingAdmissionPolicy"}


def rewrite_test(document: dict, policies: Mapping[str, PolicyNames], relocate: Callable[[str], str],
                 notes: list[str] | None = None) -> dict:
    """`document` (one Test) for the converted policies: `policies` by source policy name, `relocate` maps a
    path as written in the test to the path to write; rows left out are said in `notes`."""
    out = copy.deepcopy(document)
    for key in _PATH_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [relocate(item) if isinstance(item, str) else item for item in out[key]]
    for key in _PATH_FIELDS:
        if isinstance(out.get(key), str):
            out[key] = relocate(out[key])
    results = out.get("results")
    if isinstance(results, list):
        rows = []
        for index, row in enumerate(results):
            if not isinstance(row, dict):
                rows.append(row)
                continue
            for key in _RESULT_PATHS:
                if isinstance(row.get(key), str):
                    row[key] = relocate(row[key])
            for key in _RESULT_PATH_LISTS:
                if isinstance(row.get(key), list):
                    row[key] = [relocate(item) if isinstance(item, str) else item for item in row[key]]
            told: list[str] = []
            rewritten = _rows(row, policies, told)
            if not rewritten and not told and notes is not None:
                notes.append(f"row {index + 1} (policy {row.get('policy')}, rule {row.get('rule')}) left out: the "
                             "policy has no such rule, so kyverno test passes the row whatever the policy does")
            if notes is not None:
                notes.extend(f"row {index + 1} (policy {row.get('policy')}): {text}" for text in told)
            rows.extend(rewritten)
        out["results"] = rows
    return out


def _rows(row: dict, policies: Mapping[str, PolicyNames], told: list[str]) -> list[dict]:
    policy = str(row.get("policy") or "")
    found = policies.get(policy.rsplit("/", 1)[-1])
    if found is None:
        return [row]
    rule = row.get("rule")
    if not rule:
        rows = [kept for name, documents in found.rules.items()
                if (kept := _without_unselected(_converted(row, found, documents), row, found, name, told))]
        if found.remainder:
            rows.append(row)
        return rows
    name = str(rule)
    for prefix in ("autogen-cronjob-", "autogen-"):
        if name.startswith(prefix) and name[len(prefix):] in found.all_rules:
            name = name[len(prefix):]
            break
    if name in found.rules:
        kept = _without_unselected(_converted(row, found, found.rules[name]), row, found, name, told)
        return [kept] if kept else []
    if name not in found.all_rules and not found.remainder:
        return []
    return [row]


def _without_unselected(converted: dict, row: dict, found: PolicyNames, rule: str, told: list[str]) -> dict | None:
    """The `converted` row of `rule` without the resources the source rule does not select and its conversion
    skips, where the row expects more than a skip (for the source such a row checks nothing there); None when
    it names nothing else. What is left out is said in `told`."""
    named = row.get("resources")
    unselected = found.unselected.get(rule) or frozenset()
    if not unselected or str(row.get("result")) == "skip" or not isinstance(named, list):
        return converted

    def left_out(entry: Any) -> bool:
        namespace, _, name = str(entry).rpartition("/")
        return any(name == known and namespace in ("", where) for where, known in unselected)

    dropped = [str(entry) for entry in named if left_out(entry)]
    if not dropped:
        return converted
    kept = [entry for entry in named if not left_out(entry)]
    them = "it" if len(dropped) == 1 else "them"
    told.append(f"{', '.join(dropped)} left out of the row of rule {rule}: the source rule does not select {them}, "
                "so kyverno test passes the row there whatever it expects (Excluded), while the converted policy, "
                f"which says the exclusion as a match condition, skips {them}"
                + ("" if kept else "; the row names nothing else and is left out"))
    return {**converted, "resources": kept} if kept else None


def _converted(row: dict, found: PolicyNames, documents: list[tuple[str, str, frozenset[str]]]) -> dict:
    """`row` for the converted document that checks the row's kind (the first, when none says)."""
    from assertree.languages.kubernetes.resources import plural_of

    policies = [document for document in documents if not document[0].endswith("Binding")]
    plural = plural_of(str(row.get("kind") or "").rsplit("/", 1)[-1]) if row.get("kind") else ""
    kind, name, _ = next((document for document in policies if plural in document[2] or "*" in document[2]),
                         policies[0])
    out = {key: value for key, value in row.items() if key != "rule"}
    out["policy"] = found.qualified(name)
    flag = _FLAGS.get(kind)
    if flag:
        out[flag] = True
    return out


def relocator(source_folder: Path, target_folder: Path, target_of: Callable[[Path], Path | None]) -> Callable[
        [str], str]:
    """A `relocate` for `rewrite_test`: a path written relative to `source_folder` (the test's folder), for a
    test written in `target_folder`."""

    def relocate(text: str) -> str:
        path = Path(text)
        absolute = path if path.is_absolute() else (source_folder / path)
        resolved = Path(os.path.normpath(absolute.resolve() if absolute.exists() else absolute.absolute()))
        target = target_of(resolved)
        destination = target if target is not None else resolved
        try:
            relative = os.path.relpath(os.path.abspath(destination), os.path.abspath(target_folder))
        except ValueError:  # another drive (Windows)
            return str(destination)
        return Path(relative).as_posix()

    return relocate



def service_account_user(given: Mapping[str, Any]) -> str | None:
    """The user name Kyverno's ``serviceAccountName``/``serviceAccountNamespace`` variables come from, when
    values give them (the CEL kinds read the requester's name: ``system:serviceaccount:<namespace>:<name>``)."""
    name, namespace = given.get("serviceAccountName"), given.get("serviceAccountNamespace")
    if name is None and namespace is None:
        return None
    return f"system:serviceaccount:{namespace or ''}:{name or ''}"


@dataclass(frozen=True)
class Request:
    """What the CEL kinds take from a Test as a whole and a ClusterPolicy from a values file per resource: the
    operation (``globalValues``) and the requester (a user info file)."""

    operation: str
    user: str | None

    def suffix(self) -> str:
        parts = [self.operation.lower()] + ([self.user.rsplit(":", 1)[-1] or "user"] if self.user else [])
        return "-".join(parts)


def split_requests(document: dict, values: Any, converted: set[str], has_user_info: bool
                   ) -> tuple[Request | None, list[tuple[Request, dict, dict]]]:
    """For a rewritten Test `document` whose values file `values` gives resources of the `converted` policy
    names their own ``request.operation`` or service account: (the requester the whole Test needs, when the
    values give one to all and the Test has no user info file; None otherwise), and (request, Test, values) for
    each other request, with the rows naming those resources moved out of `document` (changed in place). The
    caller writes the values and user info files and points the Tests at them."""
    if not isinstance(values, dict) or not isinstance(document.get("results"), list):
        return None, []
    global_values: dict = values["globalValues"] if isinstance(values.get("globalValues"), dict) else {}
    default = Request(str(global_values.get("request.operation") or "CREATE"),
                      None if has_user_info else service_account_user(global_values))
    requests: dict[str, Request] = {}  # resource name -> request
    for policy in values.get("policies") or []:
        if not isinstance(policy, dict):
            continue
        for resource in policy.get("resources") or []:
            given = resource.get("values") if isinstance(resource, dict) else None
            if not isinstance(given, dict):
                continue
            operation = given.get("request.operation")
            user = None if has_user_info else service_account_user({**global_values, **given})
            request = Request(operation if isinstance(operation, str) else default.operation, user)
            if request != default:
                requests[str(resource.get("name"))] = request
    mentioned = {str(name).rsplit("/", 1)[-1] for row in document["results"] if isinstance(row, dict)
                 and str(row.get("policy", "")).rsplit("/", 1)[-1] in converted for name in row.get("resources") or []}
    distinct = {requests.get(name, default) for name in mentioned}
    if len(distinct) == 1 and (only := next(iter(distinct))).operation == default.operation:
        default, requests = only, {}  # one requester for every converted row: the whole Test takes it
    if not requests:
        return default if default.user else None, []
    moved: dict[tuple[str, str | None], list[dict]] = {}
    kept: list[Any] = []
    for row in document["results"]:
        named = row.get("resources") if isinstance(row, dict) else None
        if not isinstance(named, list) or str(row.get("policy", "")).rsplit("/", 1)[-1] not in converted:
            kept.append(row)
            continue
        groups: dict[tuple[str, str | None], list[Any]] = {}
        for name in named:
            request = requests.get(str(name).rsplit("/", 1)[-1], default)
            groups.setdefault((request.operation, request.user), []).append(name)
        for key, names in groups.items():
            part = {**row, "resources": names}
            if key == (default.operation, default.user):
                kept.append(part)
            else:
                moved.setdefault(key, []).append(part)
    document["results"] = kept
    out = []
    for (operation, user), rows in moved.items():
        request = Request(operation, user)
        test = copy.deepcopy(document)
        metadata = dict(test.get("metadata") or {})
        metadata["name"] = f"{metadata.get('name', 'test')}-{request.suffix()}"
        test["metadata"] = metadata
        test["results"] = rows
        changed = copy.deepcopy(values)
        changed["globalValues"] = {**global_values, "request.operation": operation}
        out.append((request, test, changed))
    return default if default.user else None, out
