"""Kyverno's CEL policy kinds (``policies.kyverno.io`` ValidatingPolicy, MutatingPolicy), run offline.

Stages, one module each: `reading` checks a document and builds the `model`;
`autogen` derives the Pod-controller variants; `compile` compiles every CEL
text once (`rewrite` adapts typed constructors and list ``indexOf`` to the CEL
library first) in the `environment` (Kyverno's variables, and the context
lookups served from local data, over `assertree.languages.cel`); at scan time
`request` turns a resource into an admission request (`resources` names its
kind's API resource), `matching` decides whether the policy selects it, and
`evaluate` runs the programs (`mutate` applies patches). `language` is the
door the loader uses; `validate_cel` serves ClusterPolicy ``validate.cel``
rules to the Kyverno language.

A scan context may carry ``lookups`` (`environment.Lookups`: a ``kyverno
test`` context file's resources and image data); without it, lookups are
evaluation errors that say what they need.
"""
