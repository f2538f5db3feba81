"""Kubernetes' ValidatingAdmissionPolicy and MutatingAdmissionPolicy, with their bindings, run offline.

Stages, one module each, earliest first:

- `model`: what a policy and a binding say; `reading`: documents to the model,
  checked against the API's schema and the apiserver's rules;
- `environment`: the CEL environment of each expression; `evaluate`: one
  invocation's expressions (Kubernetes' validator and patchers);
- `activation`: the admission request a resource stands for; `params`: which
  parameter resources a binding gives; `dispatch`: which invocations a
  request gets;
- `validating` / `mutating`: a policy's results on a resource;
- `compile`: a policy compiled into the engine's interface; `linking`:
  bindings joined to their policies; `language`: what the loader calls.
"""
