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
- a row naming a rule the policy does not have (a typo ``kyverno test``
  passes as Excluded) follows the policy when it became one document.

Paths in the test (policies, resources, values, user info, patched
resources ...) are rewritten relative to the new test's folder: to the copy
under DIR when the file is under a SRC, else to the original.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PolicyNames", "rewrite_test"]

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
    rules: dict[str, list[tuple[str, str]]]  # rule -> [(kind, name)], the main document first
    all_rules: list[str]
    remainder: bool

    def qualified(self, name: str) -> str:
        return f"{self.namespace}/{name}" if self.namespace else name


_FLAGS = {"ValidatingPolicy": "isValidatingPolicy", "NamespacedValidatingPolicy": "isValidatingPolicy",
          "MutatingPolicy": "isMutatingPolicy", "NamespacedMutatingPolicy": "isMutatingPolicy",
          "ValidatingAdmissionPolicy": "isValidatingAdmissionPolicy"}


def rewrite_test(document: dict, policies: Mapping[str, PolicyNames], relocate: Callable[[str], str]) -> dict:
    """`document` (one Test) for the converted policies: `policies` by source policy name, `relocate` maps a
    path as written in the test to the path to write."""
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
        for row in results:
            if not isinstance(row, dict):
                rows.append(row)
                continue
            for key in _RESULT_PATHS:
                if isinstance(row.get(key), str):
                    row[key] = relocate(row[key])
            for key in _RESULT_PATH_LISTS:
                if isinstance(row.get(key), list):
                    row[key] = [relocate(item) if isinstance(item, str) else item for item in row[key]]
            rows.extend(_rows(row, policies))
        out["results"] = rows
    return out


def _rows(row: dict, policies: Mapping[str, PolicyNames]) -> list[dict]:
    policy = str(row.get("policy") or "")
    found = policies.get(policy.rsplit("/", 1)[-1])
    if found is None:
        return [row]
    rule = row.get("rule")
    if not rule:
        rows = [_converted(row, found, documents) for documents in found.rules.values()]
        if found.remainder:
            rows.append(row)
        return rows
    name = str(rule)
    for prefix in ("autogen-cronjob-", "autogen-"):
        if name.startswith(prefix) and name[len(prefix):] in found.all_rules:
            name = name[len(prefix):]
            break
    if name in found.rules:
        return [_converted(row, found, found.rules[name])]
    if name not in found.all_rules and not found.remainder and len(found.rules) == 1:
        return [_converted(row, found, next(iter(found.rules.values())))]
    return [row]


def _converted(row: dict, found: PolicyNames, documents: list[tuple[str, str]]) -> dict:
    kind, name = documents[0]
    if row.get("kind") == "ReplicationController" and len(documents) > 1:
        kind, name = documents[1]
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

