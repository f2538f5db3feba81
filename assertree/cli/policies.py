"""``--policy PATH``: the policies a command runs, read as a repository holds them, with one line per problem.

What cannot be used is said on standard error and the rest still run
(`assertree.languages.load.load_policy_set`): each policy of a folder that
assertree cannot run is one ``note:`` line, each invalid one a ``warning:``,
each rule that is not run (it needs a registry or a cluster, ...) a
``warning:`` naming its policy, rule and field while the policy's other rules
run, the files that hold no policy one summarised ``note:``; a document of a
file named explicitly that cannot be used is an ``error:``, and the command
exits 2 once it has run the others.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from assertree.documents.paths import NO_EXCLUDE, Exclude
from assertree.errors import PolicyError, Severity
from assertree.languages.load import PolicySet, load_policy_set


def load_policy_arguments(paths: Sequence[Path], *, selector: Callable[[Mapping[str, str]], bool] | None = None,
                          exclude: Exclude = NO_EXCLUDE, quiet: bool = False, option: str = "--policy",
                          allow_empty: bool = False) -> PolicySet:
    """The policy set of `paths`, its problems and notes written to standard error (notes unless `quiet`).
    PolicyError when nothing at all would be checked (no policy, and no problem to explain why)."""
    found = load_policy_set(paths, selector=selector, exclude=exclude)
    stopping = not found.policies and not allow_empty and found.errors
    for problem in found.errors[1:] if stopping else found.errors:  # the first one stops the command below
        print(f"assertree: error: {problem}", file=sys.stderr)
    tell_refused(found, quiet=quiet)
    if not found.policies and not allow_empty:
        if found.errors:
            raise PolicyError.of(found.errors[0])
        where = ", ".join(str(path) for path in paths)
        if found.refused:
            raise PolicyError(f"no policy in {where} can be run ({option}): nothing would be checked")
        detail = " match the --labels selector" if selector else " were found"
        raise PolicyError(f"no policies{detail} in {where}: nothing would be checked")
    if found.not_run and not allow_empty and all(not item.policy.rules for item in found.policies):
        where = ", ".join(str(path) for path in paths)  # every rule was refused (said above, one line each)
        raise PolicyError(f"no rule in {where} can be run ({option}): nothing would be checked")
    return found


def tell_refused(found: PolicySet, *, quiet: bool = False) -> None:
    """One line on standard error per policy of a folder that will not run (notes unless `quiet`), per rule
    that will not run, and the note on the files that hold no policy."""
    for problem in [*found.refused, *found.not_run]:
        if problem.severity == Severity.WARNING or not quiet:
            print(f"assertree: {problem.severity}: {problem}", file=sys.stderr)
    note = found.skipped_note()
    if note and not quiet:
        print(f"assertree: note: {note}", file=sys.stderr)
