"""Inputs for the streaming tests (not a conftest.py: test modules import it by name, and `conftest` is
the root one's name): JSON Lines, YAML streams and JSON payloads with passing, failing and
erroring rules, bad lines, and a rule that applies to nothing."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from assertree.languages.load import load_policies
from assertree.report import spool

POLICIES = {
    "limits.yaml": """\
        apiVersion: json.kyverno.io/v1alpha1
        kind: ValidatingPolicy
        metadata:
          name: limits
          annotations:
            policies.kyverno.io/severity: medium
        spec:
          rules:
            - name: replicas
              identifier: name
              match:
                any:
                - kind: Deployment
              assert:
                all:
                - message: "{{ name }} runs too many replicas"
                  check:
                    spec:
                      (replicas <= `3`): true
        """,
    "labels.yaml": """\
        apiVersion: json.kyverno.io/v1alpha1
        kind: ValidatingPolicy
        metadata:
          name: labels
        spec:
          rules:
            - name: team
              assert:
                all:
                - check:
                    metadata:
                      labels:
                        team: (length(@) > `0`)
            - name: services-only
              match:
                any:
                - kind: Service
              assert:
                all:
                - check:
                    spec: {}
        """,
}


def deployment(name: str, replicas, team: str | None = "core") -> dict:
    labels = {"team": team} if team is not None else {}
    return {"kind": "Deployment", "name": name, "metadata": {"labels": labels}, "spec": {"replicas": replicas}}


def _lines(*items) -> str:
    return "".join(item if isinstance(item, str) else json.dumps(item) + "\n" for item in items)


PAYLOADS = {
    # failing, erroring (a string compared with a number), a blank line, bad JSON, not an object, CRLF
    "mixed.ndjson": _lines(deployment("a", 2), deployment("b", 5, team=None), "\n", deployment("c", "many"),
                           '{"kind": "Deployment", "name": \n', "[1, 2]\n",
                           json.dumps(deployment("d", 1, team="")) + "\r\n", {"kind": "Other", "spec": {"x": 1}}),
    "passing.jsonl": _lines(*(deployment(f"p{index}", index % 3) for index in range(5))),
    "stream.yaml": "---\n" + "\n---\n".join([
        "kind: Deployment\nname: y1\nmetadata:\n  labels:\n    team: core\nspec:\n  replicas: 9\n",
        "# only a comment\n",
        "null\n",
        "kind: Deployment\nname: y2\nmetadata:\n  labels: {}\nspec:\n  replicas: 1\n",
    ]),
    "list.yaml": "- kind: Deployment\n  name: l1\n  spec:\n    replicas: 7\n"
                 "- kind: Deployment\n  name: l2\n  spec: {}\n",
    "single.yaml": "kind: Deployment\nname: s1\nmetadata: {labels: {team: x}}\nspec:\n  replicas: 4\n",
    "array.json": json.dumps([deployment("j1", 8), deployment("j2", 1, team=None)], indent=2),
}

CASES = {
    "failing-and-bad-lines": ["mixed.ndjson"],
    "passing": ["passing.jsonl"],
    "yaml-stream": ["stream.yaml"],
    "yaml-list": ["list.yaml"],
    "several-files": ["mixed.ndjson", "passing.jsonl", "stream.yaml", "list.yaml", "single.yaml", "array.json"],
}


@pytest.fixture(name="inputs")
def inputs_fixture(tmp_path, monkeypatch):
    """A folder with the policies and payloads above, as the working directory (report paths are relative)."""
    (tmp_path / "policies").mkdir()
    for name, text in POLICIES.items():
        (tmp_path / "policies" / name).write_text(textwrap.dedent(text))
    for name, text in PAYLOADS.items():
        (tmp_path / name).write_bytes(text.encode())
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(name="small_spools")
def small_spools_fixture(monkeypatch):
    """Spools spill to disk after a few bytes, so the streamed path's files are used, not memory."""
    monkeypatch.setattr(spool, "SPILL_BYTES", 64)


def policies_in(folder: Path):
    return load_policies(Path("policies"))  # as the command names it (reports show the path given)
