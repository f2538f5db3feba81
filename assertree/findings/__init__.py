"""What a team adopting assertree does with a scan's findings, between the engine's results and the reports.

A finding is one violation of a rule result, or the result itself when the rule
errored. `fingerprint` gives each a stable identity (the rule, the resource's
identity, the failing fields: never a line number), which the SARIF report's
``partialFingerprints`` and the baseline share; `baseline` records today's
findings and marks the ones a later scan finds again; `severity` turns failures
of policies below ``--fail-on`` into warnings. Each step only marks results;
reports show the marks (`RuleResult.baselined`, `RuleResult.gate`), and nothing
is dropped.
"""
