"""The Kyverno CLI's side inputs for a scan: a values file, a user-info file and PolicyExceptions.

`kyverno apply` and `kyverno test` take them beside the policies and
resources; `assertree scan` does too (``--values``, ``--user-info``,
``--exceptions``), and they become the `ScanContext` the Kyverno language
reads. Nothing here reaches a cluster: configMap, apiCall and other context
entries are served only from the values file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.base import ScanContext


def load_scan_context(*, values: str | Path | None = None, user_info: str | Path | None = None,
                      exceptions: Iterable[str | Path] = (), bindings: Mapping[str, Any] | None = None) -> ScanContext:
    """The scan context these files give; a located error for a file that cannot be used."""
    loaded_values = loaded_user_info = None
    if values is not None or user_info is not None:  # the Kyverno modules only when a file needs them
        from assertree.languages.kyverno.values import load_user_info, load_values

        loaded_values = load_values(values) if values is not None else None
        loaded_user_info = load_user_info(user_info) if user_info is not None else None
    operation = (loaded_values.operation or None) if loaded_values is not None else None
    return ScanContext(
        bindings=dict(bindings or {}),
        values=loaded_values,
        user_info=loaded_user_info,
        operation=operation or "CREATE",
        exceptions=tuple(load_exceptions(exceptions)) if exceptions else (),
    )


def load_exceptions(paths: Iterable[str | Path]) -> list[Any]:
    """Every PolicyException (``kyverno.io`` or ``policies.kyverno.io``) in the files and directories named
    (other documents are an error)."""
    from assertree.languages.kyverno.exceptions import parse_policy_exception
    from assertree.languages.kyverno.language import load_kyverno_documents
    from assertree.languages.load import policy_files

    found: list[Any] = []
    for path in policy_files(paths):
        documents = load_kyverno_documents([path])
        if documents.policies or documents.others:
            raise PolicyError("--exceptions takes PolicyException documents only", source=str(path))
        found.extend(parse_policy_exception(document, str(path)) for document in documents.exceptions)
    return found
