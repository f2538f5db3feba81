"""Which files a folder holds for a command: walking folders, and leaving out what ``--exclude`` names.

Real repositories hold more than policies and manifests (Helm templates,
vendored charts, archived examples), and a run must be able to leave them out
without listing every other file. ``--exclude GLOB`` (repeatable, every
command) takes gitignore-like patterns:

- a pattern without ``/`` is matched against each file or folder name on the
  path (``templates``, ``*.tpl.yaml``, ``kustomization.yaml``);
- a pattern with ``/`` is matched against the path from any folder boundary
  (``charts/*/templates``, ``examples/_archived``, ``**/testdata/**``): ``*``
  and ``?`` stay within one name, ``**`` crosses folders, ``[...]`` is a set;
  a leading ``./`` or trailing ``/`` is ignored;
- a folder that matches is not searched at all; a file named on the command
  line is left out too when a pattern matches it;
- under a folder given on the command line, a pattern must name something
  inside it: ``--policy policies/ --exclude policies`` leaves out a
  ``policies`` folder below, not everything (the folder's own path can still
  be part of a match: ``--exclude examples/_archived`` with ``examples/``).

The standard library's ``fnmatch`` lets ``*`` cross ``/`` and has no ``**``,
and ``PurePath.full_match`` (which has both) needs Python 3.13, so the few
lines of translation to a regular expression are written here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePath

from assertree.errors import UsageError
from assertree.records import ValueRecord


def _translate(pattern: str) -> str:
    """A glob as a regular expression over ``/``-joined names (see the module docstring)."""
    out: list[str] = []
    index, length = 0, len(pattern)
    while index < length:
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", index + 2 if pattern.startswith("[!", index) or pattern.startswith("[]", index)
                               else index + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


class Exclude(ValueRecord, hidden=("_compiled",), uncompared=("_compiled",)):
    """The ``--exclude`` patterns of one run; false when there are none."""

    patterns: tuple[str, ...]
    _compiled: tuple[tuple[re.Pattern[str], bool], ...]

    __slots__ = ("_compiled", "patterns")

    def __init__(
            self, patterns: tuple[str, ...] = (), _compiled: tuple[tuple[re.Pattern[str], bool], ...] = (),
    ) -> None:
        self.patterns = patterns
        self._compiled = _compiled

    @classmethod
    def of(cls, patterns: Iterable[str] | None) -> Exclude:
        """The patterns given (an `Exclude` is returned as it is), checked: an empty one is a usage error
        (an unset variable in CI)."""
        if isinstance(patterns, Exclude):
            return patterns
        kept: list[str] = []
        compiled: list[tuple[re.Pattern[str], bool]] = []
        for raw in patterns or ():
            pattern = raw.strip()
            while pattern.startswith("./"):
                pattern = pattern[2:]
            pattern = pattern.rstrip("/")
            if not pattern:
                raise UsageError(f"--exclude {raw!r}: an empty pattern excludes nothing (is a variable unset?)")
            kept.append(raw)
            compiled.append((re.compile(_translate(pattern) + r"\Z", re.DOTALL), "/" in pattern))
        return cls(tuple(kept), tuple(compiled))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __iter__(self) -> Iterator[str]:
        return iter(self.patterns)

    def matches(self, path: str | PurePath, root: str | PurePath | None = None) -> bool:
        """Whether a pattern names `path`, or one of the folders it is in; with `root` (the folder given on
        the command line that `path` was found in), only a match that reaches below `root` counts."""
        if not self._compiled:
            return False
        parts = _parts(path)
        inside = len(_parts(root)) if root is not None else 0
        for regex, nested in self._compiled:
            if not nested:
                if any(regex.match(part) for part in parts[inside:]):
                    return True
                continue
            for end in range(max(inside, 0) + 1, len(parts) + 1):
                for start in range(end):
                    if regex.match("/".join(parts[start:end])):
                        return True
        return False


def _parts(path: str | PurePath) -> list[str]:
    return [part for part in PurePath(path).as_posix().split("/") if part not in ("", ".")]


NO_EXCLUDE = Exclude()


def walk(root: Path, suffixes: Sequence[str], exclude: Exclude = NO_EXCLUDE, *, hidden: bool = True) -> list[Path]:
    """Every file under `root` whose suffix (lower-cased) is one of `suffixes`, sorted; folders and files
    that `exclude` names are left out (a folder is not searched), and, unless `hidden`, so are names that
    start with a dot (``.kyverno-test/``, ``.chainsaw.yaml``, ``.git/``)."""
    found: list[Path] = []
    for path in sorted(root.rglob("*")) if not exclude and hidden else _pruned(root, exclude, hidden):
        if path.suffix.lower() in suffixes and path.is_file():
            found.append(path)
    if not exclude and hidden:
        return found
    return sorted(found)


def _pruned(root: Path, exclude: Exclude, hidden: bool) -> Iterable[Path]:
    """The entries under `root`, not descending into a folder that is excluded (or hidden, unless `hidden`)."""
    import os

    for folder, folders, files in os.walk(root):
        base = Path(folder)
        folders[:] = sorted(name for name in folders
                            if (hidden or not name.startswith(".")) and not exclude.matches(base / name, root))
        for name in sorted(files):
            if (hidden or not name.startswith(".")) and not exclude.matches(base / name, root):
                yield base / name
