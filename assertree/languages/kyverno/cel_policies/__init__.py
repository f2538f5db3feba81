"""Kyverno's CEL policy kinds (``policies.kyverno.io`` ValidatingPolicy, MutatingPolicy, GeneratingPolicy,
DeletingPolicy, ImageValidatingPolicy), run offline.

Stages, one module each: `reading` checks a document and builds the `model`;
`autogen` derives the Pod-controller variants; `compile` compiles every CEL
text once (`rewrite` adapts typed constructors and list ``indexOf`` to the CEL
library first) in the `environment` (Kyverno's variables, and the context
lookups served from local data, over `assertree.languages.cel`); at scan time
`request` turns a resource into an admission request (`resources` names its
kind's API resource), `matching` decides whether the policy selects it, and
`evaluate` runs the programs (`selection` is where every kind starts with a
resource; `mutate` applies patches; `existing` patches a MutatingPolicy's
``mutateExisting`` targets; `generating` collects what a
GeneratingPolicy's ``generator.Apply`` would create, `template` expands the
YAML template mode; `deleting` decides which existing resources a
DeletingPolicy would delete; `images` checks an ImageValidatingPolicy's image
references, refusing what needs a registry). `language` is the
door the loader uses; `validate_cel` serves ClusterPolicy ``validate.cel``
rules to the Kyverno language.

A scan context may carry ``lookups`` (`environment.Lookups`: a ``kyverno
test`` context file's resources and image data); without it, lookups are
evaluation errors that say what they need.
"""
