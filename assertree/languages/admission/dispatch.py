"""Which invocations (binding, param) of a policy a request gets: Kubernetes' policy dispatcher, offline.

k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go and
validating/dispatcher.go: the policy's ``matchConstraints`` must select the
request; then each binding that names the policy, in order, whose
``matchResources`` (if any) select it, runs the policy once per param its
``paramRef`` chooses (`params.select_params`). A binding whose match or
params cannot be worked out is a configuration error ("failed to configure
binding: ..."), which denies the request unless the policy's failure policy
is ``Ignore``.

A policy that no binding names is not run by Kubernetes at all: `invocations`
says it is *unbound* when its constraints select the request, unless the
scan runs unbound policies as if bound (`ScanContext.run_unbound`, and always
in ``assertree test``, as the Kyverno CLI runs them): then one implicit
binding with ``validationActions: [Deny]`` and no params stands in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from assertree.languages.admission.activation import Request
from assertree.languages.admission.model import AdmissionPolicy, Binding
from assertree.languages.admission.params import ParamError, select_params
from assertree.languages.kubernetes.matching import SelectorError, matches

__all__ = ["UNBOUND", "ConfigurationError", "Invocation", "implicit_binding", "invocations", "not_bound_message"]

UNBOUND = "unbound"


@dataclass(frozen=True, slots=True)
class Invocation:
    """The policy run once: for this binding, with these params (None: no params)."""

    binding: Binding
    params: Any = None


@dataclass(frozen=True, slots=True)
class ConfigurationError:
    """A policy or binding that cannot be applied to the request: why, and which binding (None: the policy)."""

    message: str
    binding: Binding | None = None


def not_bound_message(policy: AdmissionPolicy) -> str:
    """What a scan says of a policy that no binding names."""
    return (f"not bound: no {policy.binding_kind} names this policy, so Kubernetes does not run it "
            "(bind it, or run unbound policies as if bound: --unbound)")


def implicit_binding(policy: AdmissionPolicy) -> Binding:
    """The binding an unbound policy runs with when asked to run as if bound: Deny, no params, no match."""
    return Binding(name="(unbound)", kind=policy.binding_kind, policy_name=policy.name, document={}, implicit=True)


def invocations(policy: AdmissionPolicy, request: Request, params: Sequence[Any], *,
                run_unbound: bool) -> Iterator[Invocation | ConfigurationError | str]:
    """Each invocation of `policy` for `request`, each configuration error, or `UNBOUND` (once) for a policy that
    would apply but no binding names. Nothing at all when the policy does not select the request."""
    attributes = request.admission.attributes
    if policy.match is None:
        return
    try:
        if not matches(policy.match, attributes):
            return
    except SelectorError as error:
        yield ConfigurationError(f"failed to configure policy: {error}")
        return
    bindings: tuple[Binding, ...] = policy.bindings
    if not bindings:
        if not run_unbound:
            yield UNBOUND
            return
        bindings = (implicit_binding(policy),)
    for binding in bindings:
        try:
            if binding.match is not None and not matches(binding.match, attributes):
                continue
            chosen = select_params(policy.param_kind, binding.param_ref, request.namespace, params)
        except (SelectorError, ParamError) as error:
            yield ConfigurationError(f"failed to configure binding: {error}", binding)
            continue
        for param in chosen:
            yield Invocation(binding, param)
