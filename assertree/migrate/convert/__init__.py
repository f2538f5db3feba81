"""Converting Kyverno policies to Kyverno's CEL policy kinds: one module per conversion family.

`patterns` (validate patterns, with `leaves` for their values), `conditions`
(preconditions and deny), `jmespath` (``{{ }}`` variables), `matching`
(match/exclude), `validate` (a validate rule), `policy` (a whole policy, one
document per rule); `cel` writes CEL text for all of them and `refusal` says
what cannot be converted.
"""
