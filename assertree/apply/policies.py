"""What ``assertree apply`` applies: the policies in some files that mutate or generate, and what they run with.

Mutate rules are Kyverno's (``kyverno.io`` ClusterPolicy and Policy), so the
files are read by the Kyverno language (`load_kyverno_documents`), which also
hands back the PolicyExceptions found beside the policies; those exempt
resources from rules as in a scan. Documents of other policy languages are
compiled too (a directory may mix them) and kept when they mutate: Kyverno's
MutatingPolicy, Kubernetes' MutatingAdmissionPolicy (linked to its bindings;
parameter resources with ``params``). A Kyverno values file and user-info file
fill in what a cluster would know.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.base import ScanContext, generator_of
from assertree.languages.load import PolicySet

__all__ = ["MutatePolicies", "load_mutate_policies"]


@dataclass
class MutatePolicies:
    """Compiled policies that mutate, and the context to run them in."""

    policies: list[Any]  # base.CompiledPolicy objects with a mutator
    context: ScanContext = field(default_factory=ScanContext)
    found: PolicySet | None = None  # how the paths were read: policies refused, files skipped


def load_mutate_policies(paths: Iterable[str | Path], *, values: str | Path | None = None,
                         user_info: str | Path | None = None, exclude: Iterable[str] = (),
                         params: Iterable[str | Path] = (), run_unbound: bool = False) -> MutatePolicies:
    """The policies with mutate or generate rules in the files and directories at `paths`, read as a repository
    is (`assertree.languages.load.load_policy_set`: files that hold no policy are passed over, a policy found
    in a directory that cannot be used, and a rule that will not run, are in `MutatePolicies.found`);
    PolicyError (located) at the first problem of a file named explicitly, and when none of them mutates or
    generates anything.

    `params`: files and directories of parameter resources for admission policies; `run_unbound`: run a
    MutatingAdmissionPolicy that no binding names as if bound.
    """
    from assertree.documents.paths import Exclude
    from assertree.languages.kyverno.exceptions import parse_policy_exception
    from assertree.languages.kyverno.values import load_user_info, load_values
    from assertree.languages.load import load_policy_set

    paths = list(paths)
    excluded = Exclude.of(exclude)
    found = load_policy_set(paths, exclude=excluded)  # admission policies come linked to their bindings
    if found.errors:
        raise PolicyError.of(found.errors[0])
    policies: list[Any] = found.policies
    exceptions = tuple(parse_policy_exception(document) for document in exceptions_beside(paths, excluded))
    values_read = load_values(values) if values is not None else None
    context = ScanContext(values=values_read,
                          user_info=load_user_info(user_info) if user_info is not None else None,
                          operation=(values_read.operation if values_read is not None else "") or "CREATE",
                          exceptions=exceptions, run_unbound=run_unbound)
    params = list(params)
    if params:
        from assertree.inputs.params import load_params

        context.params = tuple(load_params(params))
    mutating = [policy for policy in policies
                if policy.mutator(context) is not None or generator_of(policy, context) is not None]
    if not mutating:
        where = ", ".join(str(path) for path in paths)
        raise PolicyError(f"no policy with mutate or generate rules in {where}: nothing would be applied")
    return MutatePolicies(mutating, context, found)


def exceptions_beside(paths: Iterable[str | Path], exclude: Iterable[str] = ()) -> list[dict]:
    """The PolicyException documents in the policy files of `paths` (hidden folders and what `exclude`
    names left out, as for the policies)."""
    from assertree.documents.paths import Exclude
    from assertree.languages.load import exception_documents

    return [document.value for document in exception_documents(paths, Exclude.of(exclude))]
