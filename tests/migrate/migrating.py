"""Helpers for the migration's tests: a ClusterPolicy written to a folder, migrated, and its output run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import assertree
from assertree.migrate import Report, migrate


class Migrated:
    """A migration of one policy file: the report, and the converted documents run on resources."""

    def __init__(self, report: Report, out: Path) -> None:
        self.report = report
        self.out = out

    @property
    def statuses(self) -> list[str]:
        return [rule.status for policy in self.report.policies for rule in policy.rules]

    @property
    def reasons(self) -> list[str]:
        return [rule.reason for policy in self.report.policies for rule in policy.rules]

    def documents(self) -> list[dict]:
        found: list[dict] = []
        for path in sorted(self.out.rglob("*.yaml")):
            if path.name == "resources.yaml":
                continue
            found.extend(document for document in yaml.safe_load_all(path.read_text()) if document)
        return found

    def kinds(self) -> list[str]:
        return [document["kind"] for document in self.documents()]

    def run(self, resource: dict) -> tuple[set[str], Any]:
        """The statuses the converted documents give `resource`, and the resource after their mutations."""
        policies = assertree.load_policies(self.out / "policy.yaml")
        result = assertree.scan([resource], policies)
        return {str(item.status) for item in result.results}, result.resources[0].value


@pytest.fixture(name="migrated")
def migrated_fixture(tmp_path: Path):
    """``migrated(rules_yaml, resources, kind="ClusterPolicy", spec_extra="")``: the policy with those rules
    migrated from tmp_path/src to tmp_path/out, proven on `resources` (given with --resources)."""

    def run(rules: str, resources: list[dict] = (), *, spec: str = "", kind: str = "ClusterPolicy",
            to: str = "validating", metadata: str = "") -> Migrated:
        source = tmp_path / "src"
        source.mkdir(exist_ok=True)
        body = "\n".join("  " + line for line in rules.strip("\n").splitlines())
        extra = "\n".join("  " + line for line in spec.strip("\n").splitlines())
        (source / "policy.yaml").write_text(
            f"apiVersion: kyverno.io/v1\nkind: {kind}\nmetadata:\n  name: sample\n{metadata}spec:\n{extra}\n"
            f"  rules:\n{body}\n")
        given = tmp_path / "resources.yaml"
        given.write_text(yaml.safe_dump_all(list(resources)))
        out = tmp_path / "out"
        report = migrate([source], out, to=to, resources=[given] if resources else ())
        return Migrated(report, out)

    return run


def pod(name: str = "app", *, labels: dict | None = None, containers: list[dict] | None = None,
        namespace: str = "default", **spec: Any) -> dict:
    """A Pod manifest."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": containers or [{"name": "app", "image": "nginx:1.25"}], **spec}}
