"""The package's stages import one way, and the public API is what the README promises.

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
    ("assertree.documents",),
    ("assertree.jp",),
    ("assertree.tree",),
    ("assertree.results",),
    ("assertree.languages",),
    ("assertree.inputs",),
    ("assertree.engine",),
    ("assertree.report",),
    ("assertree.testing", "assertree.apply"),
    ("assertree.serve",),
    ("assertree.cli", "assertree.__main__"),
    ("assertree",),  # the public API may reach everything, lazily
]

# Within `languages`, the shared parts come first and a language never imports another language,
# except that every language may use the CEL environment.
LANGUAGE_ORDER = [
    ("assertree.languages.base", "assertree.languages.selectors"),
    ("assertree.languages.cel",),
    ("assertree.languages.kyverno_json", "assertree.languages.kyverno"),
    ("assertree.languages.load", "assertree.languages"),
]


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
    best = None
    for position, prefixes in enumerate(order):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (position, len(prefix))
    return best[0] if best else None


def language_of(name: str) -> str | None:
    parts = name.split(".")
    return ".".join(parts[:3]) if len(parts) >= 3 and parts[1] == "languages" else None


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
        if not name.startswith("assertree.languages."):
            continue
        for imported in imports_of(path, name):
            if not imported.startswith("assertree.languages"):
                continue
            mine, theirs = rank(name, LANGUAGE_ORDER), rank(imported, LANGUAGE_ORDER)
            if theirs is not None and mine is not None and theirs > mine:
                crossing.append(f"{name} -> {imported}")
            elif (theirs == mine == 2 and language_of(name) != language_of(imported)):
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
