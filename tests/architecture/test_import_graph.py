"""The package's stages import one way, and the public API is what the docs promise.

Stages, earliest first; a module may import from its own stage and the stages
before it, never from a later one, and no two modules may import each other in
a cycle. Imports inside ``if TYPE_CHECKING:`` count too: a type a module needs
must come from a stage before it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import assertree

PACKAGE = Path(assertree.__file__).parent

STAGES = [
    ("assertree.errors",),
    ("assertree.writes",),  # how every file assertree writes is written (reports, fixes, baselines)
    ("assertree.explanation",),  # how a verdict was reached, as data (--explain): every language records into it
    ("assertree.documents",),
    ("assertree.jp",),
    ("assertree.pss",),  # the Pod Security Standards checks: Kubernetes' own, used by languages
    ("assertree.tree",),
    ("assertree.results",),
    ("assertree.languages",),
    ("assertree.inputs",),
    ("assertree.engine",),
    ("assertree.scale",),  # distributed scans (Dask): on top of the engine, before the reports
    ("assertree.findings",),  # fingerprints, baselines, severity gates: between the results and the reports
    ("assertree.report",),
    ("assertree.testing", "assertree.apply"),
    ("assertree.kyverno_cli",),  # the Kyverno CLI's command lines and outputs, over testing and apply
    ("assertree.migrate",),  # reads one language, writes another, runs both (and their tests)
    ("assertree.serve",),
    ("assertree.cli", "assertree.__main__"),
    ("assertree",),  # the public API may reach everything, lazily
]

# Within `languages`: the shared parts (the interface, label selectors, schema errors as problems), then the
# packages every language may use (the CEL engine; what Kubernetes itself defines: admission requests, match
# rules, JSON patch), then the languages, which never import each other, then the loader that routes
# documents to them.
SHARED_LANGUAGE_MODULES = ("assertree.languages.base", "assertree.languages.selectors",
                           "assertree.languages.schema_problems", "assertree.languages.checked_files")
SHARED_LANGUAGE_PACKAGES = ("cel", "kubernetes")


def language_rank(name: str) -> tuple[int, str]:
    """(rank, language package) of a module under assertree.languages."""
    if name in SHARED_LANGUAGE_MODULES:
        return 0, ""
    if name in ("assertree.languages", "assertree.languages.load"):
        return 3, ""
    package = name.split(".")[2]
    return (1, package) if package in SHARED_LANGUAGE_PACKAGES else (2, package)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(child) for statement in node.body for child in ast.walk(statement))
    return inside


def imports_of(path: Path, name: str, *, typing: bool = True) -> set[str]:
    """Every assertree module `path` imports, anywhere in the file (lazy imports included);
    without `typing`, imports made only for type checkers are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    known = modules()
    skip = set() if typing else _type_checking_nodes(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known.keys()
            found.update(submodules)
            names = {alias.name for alias in node.names}
            if len(submodules) < len(names) and not (base == "assertree" and names == {"__version__"}):
                found.add(base)  # a name from the module itself (the version lives in the API module, eagerly)
    return {module for module in found if module in known and module.startswith("assertree")}


def rank(name: str, order: list[tuple[str, ...]]) -> int | None:
    """The position of the longest prefix in `order` that names `name` or a package holding it."""
    found = [(len(prefix), position) for position, prefixes in enumerate(order) for prefix in prefixes
             if name == prefix or name.startswith(prefix + ".")]
    return max(found)[1] if found else None


def test_every_module_belongs_to_a_stage():
    assert [name for name in modules() if rank(name, STAGES) is None] == []


def test_no_module_imports_from_a_later_stage():
    backwards = []
    for name, path in modules().items():
        for imported in imports_of(path, name):
            if name == "assertree":
                continue
            if rank(imported, STAGES) > rank(name, STAGES):
                backwards.append(f"{name} -> {imported}")
    assert backwards == []


def test_languages_do_not_import_each_other():
    crossing = []
    for name, path in modules().items():
        if not name.startswith("assertree.languages"):
            continue
        mine, my_language = language_rank(name)
        for imported in imports_of(path, name):
            if not imported.startswith("assertree.languages"):
                continue
            theirs, their_language = language_rank(imported)
            if theirs > mine or (mine == theirs == 2 and my_language != their_language):
                crossing.append(f"{name} -> {imported}")
    assert crossing == []


def test_no_import_cycles():
    graph = {name: imports_of(path, name, typing=False) - {name} for name, path in modules().items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif state.get(nxt) is None:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if state.get(name) is None:
            visit(name, [])
    assert cycles == []
