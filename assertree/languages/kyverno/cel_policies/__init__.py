"""Kyverno's CEL policy kinds (``policies.kyverno.io`` ValidatingPolicy, MutatingPolicy, their Namespaced
variants, and PolicyException), run offline.

Stages, one module each: `reading` checks a document and builds the `model`;
`autogen` derives the Pod-controller variants; `compile` compiles every CEL
text once (`rewrite` adapts typed constructors and list ``indexOf`` to the CEL
library first, and the rewrites of `assertree.languages.cel` make it read as
Kyverno's cel-go environment does) in the `environment` (Kyverno's variables,
and the context lookups served from local data, over
`assertree.languages.cel`), or in `authz`'s for authorization policies; at
scan time `request` turns a resource into an admission request (`resources`
names its kind's API resource), `matching` decides whether the policy selects
it, `exceptions` whether a PolicyException exempts it, and `evaluate` runs the
programs (`mutate` applies patches). `language` is the door the loader uses;
`validate_cel` serves ClusterPolicy ``validate.cel`` rules to the Kyverno
language.

A scan context may carry ``lookups`` (`environment.Lookups`: a ``kyverno
test``'s context file, cluster resources (`assertree.languages.kyverno.
cluster.Cluster`), global context entries and API call mocks); without them,
lookups that need a cluster are evaluation errors that say so.
"""
