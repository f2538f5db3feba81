"""What ``assertree apply`` applies: the mutating policies in some files, and what they run with.

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
from assertree.languages.base import ScanContext

__all__ = ["MutatePolicies", "load_mutate_policies"]


@dataclass
class MutatePolicies:
    """Compiled policies that mutate, and the context to run them in."""

    policies: list[Any]  # base.CompiledPolicy objects with a mutator
    context: ScanContext = field(default_factory=ScanContext)


def load_mutate_policies(paths: Iterable[str | Path], *, values: str | Path | None = None,
                         user_info: str | Path | None = None, params: Iterable[str | Path] = (),
                         run_unbound: bool = False) -> MutatePolicies:
    """The policies with mutate rules in the files and directories at `paths`; PolicyError (located)
    at the first problem, and when none of them mutates anything.

    `params`: files and directories of parameter resources for admission policies; `run_unbound`: run a
    MutatingAdmissionPolicy that no binding names as if bound.
    """
    from assertree.languages.kyverno.exceptions import parse_exception
    from assertree.languages.kyverno.language import load_kyverno_documents
    from assertree.languages.kyverno.values import load_user_info, load_values
    from assertree.languages.load import compile_document, link, locate, policy_files

    paths = list(paths)
    documents = load_kyverno_documents(policy_files(paths))
    policies: list[Any] = list(documents.policies)
    for document in documents.others:
        try:
            policies.append(compile_document(document.value, source=document.path, index=document.index,
                                             line=document.line))
        except PolicyError as error:
            raise PolicyError.of(locate(error.problem, document)) from None
    policies, unlinked = link(policies)  # admission policies and the bindings that name them
    if unlinked:
        raise PolicyError.of(unlinked[0])
    exceptions = tuple(parse_exception(document) for document in documents.exceptions)
    values_read = load_values(values) if values is not None else None
    context = ScanContext(values=values_read,
                          user_info=load_user_info(user_info) if user_info is not None else None,
                          operation=(values_read.operation if values_read is not None else "") or "CREATE",
                          exceptions=exceptions, run_unbound=run_unbound)
    params = list(params)
    if params:
        from assertree.inputs.params import load_params

        context.params = tuple(load_params(params))
    mutating = [policy for policy in policies if policy.mutator(context) is not None]
    if not mutating:
        where = ", ".join(str(path) for path in paths)
        raise PolicyError(f"no policy with mutate rules in {where}: nothing would be applied")
    return MutatePolicies(mutating, context)
