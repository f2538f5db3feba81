"""Kyverno's CEL policy kinds (``policies.kyverno.io`` ValidatingPolicy, MutatingPolicy, GeneratingPolicy,
DeletingPolicy, ImageValidatingPolicy, their Namespaced variants, and PolicyException), run offline.

Stages, one module each: `reading` checks a document and builds the `model`;
`autogen` derives the Pod-controller variants; `compile` compiles every CEL
text once (the rewrites of `assertree.languages.cel` make it read as
Kyverno's cel-go environment does) in the `environment` (Kyverno's variables,
and the context lookups served from local data), or in `authz`'s for
authorization policies. At scan time `selection` is where every kind starts
with a resource (its admission request, `assertree.languages.kubernetes`, and
whether the match constraints select it); `exceptions` decides whether a
PolicyException exempts it, `conditions` runs match conditions, and
`evaluate` runs the programs; `existing` patches a MutatingPolicy's
``mutateExisting`` targets; `generating` collects what a GeneratingPolicy's
``generator.Apply`` would create (`template`: the YAML template mode);
`deleting` decides which existing resources a DeletingPolicy would delete;
`images` checks an ImageValidatingPolicy's image references, refusing what
needs a registry. `language` is the door the loader uses; `validate_cel`
serves ClusterPolicy ``validate.cel`` rules (with `params`) to the Kyverno
language.

A scan context may carry ``lookups`` (`environment.Lookups`: a ``kyverno
test``'s context file, cluster resources (`assertree.languages.kubernetes.
cluster.Cluster`), global context entries and API call mocks); without them,
lookups that need a cluster are evaluation errors that say so.
"""
