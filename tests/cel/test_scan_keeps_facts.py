"""A command keeps what CEL learnt of its expressions (their compiled form and cost facts) for the next run:
the console script ends with os._exit, so nothing is written unless `assertree.cli.main` does it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from assertree.languages.cel.engine import _compiled_before

POLICY = textwrap.dedent("""\
    apiVersion: policies.kyverno.io/v1alpha1
    kind: ValidatingPolicy
    metadata:
      name: require-team
    spec:
      matchConstraints:
        resourceRules:
        - apiGroups: [""]
          apiVersions: [v1]
          operations: [CREATE, UPDATE]
          resources: [pods]
      validations:
      - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
        message: team label required
    """)
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {team: a}}\nspec: {containers: [{name: c}]}\n"


def test_a_scan_writes_the_compiled_form_of_the_expressions_it_evaluated(tmp_path, monkeypatch):
    (tmp_path / "vpol.yaml").write_text(POLICY, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    for _ in range(2):  # the second run reads the compiled form back instead of compiling
        done = subprocess.run([sys.executable, "-m", "assertree", "scan", "pod.yaml", "--policy", "vpol.yaml", "-q"],
                              cwd=tmp_path, capture_output=True, text=True, env=os.environ, timeout=120)
        assert done.returncode == 0 and "1 passed" in done.stdout, done.stderr[-2000:]
    kept = _compiled_before()._table().values()  # read from the folder set above
    assert any(value is not True for value in kept)  # more than "it compiles": its form and cost facts
