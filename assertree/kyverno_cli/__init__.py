"""The Kyverno CLI's command lines, run by assertree: ``assertree kyverno apply`` and ``assertree kyverno test``.

From Kyverno 1.20 the CLI refuses ClusterPolicy and Policy; pipelines written
for ``kyverno apply`` and ``kyverno test`` (1.19) change one word and keep
their flags, their output and their exit codes. This package is a second
front end over the same library calls, not a second engine: it reads inputs
as the Kyverno CLI does (`apply`), runs them through `assertree.testing.execute`
in the CLI's order, counts as the CLI counts (`responses`) and prints what the
CLI prints (`apply_output`, `policy_report`, `test_output`, `table`, `goyaml`).
Every text comes from kyverno/kyverno at commit 111e07bb, the source of the
conformance fixtures; where assertree differs, the module that differs says so.
"""
