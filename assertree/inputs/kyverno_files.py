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
                      exceptions: Iterable[str | Path] = (), bindings: Mapping[str, Any] | None = None,
                      crds: Iterable[str | Path] = ()) -> ScanContext:
    """The scan context these files give; a located error for a file that cannot be used. `crds` are
    CustomResourceDefinition files or folders: their cluster-scoped kinds keep no namespace."""
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
        cluster_scoped=cluster_scoped_kinds(crds) if crds else frozenset(),
    )


def cluster_scoped_kinds(paths: Iterable[str | Path]) -> frozenset[tuple[str, str]]:
    """The (group, kind) of every cluster-scoped CustomResourceDefinition in the files and folders named
    (``spec.scope: Cluster``); other documents are passed over, a file that is not YAML is an error."""
    from assertree.documents.paths import walk
    from assertree.documents.reader import SUFFIXES, load_documents

    found: set[tuple[str, str]] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise PolicyError("CRD file or folder not found", source=str(raw))
        for file in walk(path, SUFFIXES) if path.is_dir() else [path]:
            for document in load_documents(file):
                value = document.value
                if not isinstance(value, dict) or value.get("kind") != "CustomResourceDefinition":
                    continue
                spec = value.get("spec")
                if not isinstance(spec, dict) or spec.get("scope") != "Cluster":
                    continue
                names = spec.get("names")
                if isinstance(names, dict) and isinstance(names.get("kind"), str):
                    found.add((str(spec.get("group") or ""), names["kind"]))
    return frozenset(found)


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
