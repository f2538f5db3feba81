"""What a migration reads: the policy files under each SRC, where each one goes under DIR, and the tests.

DIR mirrors SRC: a folder's files keep their paths relative to the folder, a
file named on the command line goes to DIR under its own name (as
``assertree apply -o DIR`` does). Every file under a folder is part of the
mirror (resources and test files too), hidden folders included, ``.git``
excepted. Policy files are the YAML and JSON files `assertree.languages.load`
would load (hidden folders, where kyverno/policies keeps its tests, are not
searched for policies).

Tests are the ``kyverno-test.yaml`` files under each SRC folder (under the
folder of a SRC file), hidden folders included; a test belongs to the
migration when one of its ``policies`` entries names a source file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from assertree.errors import AssertreeError

__all__ = ["Layout", "SourceError", "layout"]


class SourceError(AssertreeError):
    """A SRC that cannot be read (exit code 2)."""


@dataclass
class Layout:
    """The files of a migration and where each goes."""

    out: Path
    roots: list[tuple[Path, Path]] = field(default_factory=list)  # (source folder or file, DIR part it maps to)
    policy_files: list[Path] = field(default_factory=list)
    other_files: list[Path] = field(default_factory=list)  # copied as they are
    test_files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # files two SRCs both hold, copied once

    def target(self, path: Path) -> Path | None:
        """Where a source file goes under DIR (None when it is under no SRC)."""
        resolved = path.resolve()
        for root, mapped in self.roots:
            if resolved == root:
                return mapped
            if root.is_dir():
                try:
                    return mapped / resolved.relative_to(root)
                except ValueError:
                    continue
        return None


def layout(sources: list[str | Path], out: str | Path) -> Layout:
    """The layout of a migration of `sources` into `out`; SourceError for a source that does not exist."""
    from assertree.languages.load import policy_files

    found = Layout(Path(out))
    test_roots: list[Path] = []
    policies: list[Path] = []
    for raw in sources:
        if not str(raw).strip():
            raise SourceError("empty source path: name a policy file or folder")
        path = Path(raw)
        if not path.exists():
            raise SourceError("source file or folder not found", source=str(raw))
        if path.is_dir():
            target = found.out.resolve()
            if target == path.resolve() or target.is_relative_to(path.resolve()):
                raise SourceError(f"--out {out} is the source folder or inside it: choose a folder outside "
                                  "every SRC folder", source=str(raw))
            found.roots.append((path.resolve(), found.out))
            test_roots.append(path)
            for file in _all_files(path):
                if file.resolve() not in {p.resolve() for p in policies}:
                    found.other_files.append(file)
            policies.extend(policy_files([path]))
        else:
            found.roots.append((path.resolve(), found.out / path.name))
            policies.append(path)
            folder = path.resolve().parent
            found.roots.append((folder, found.out))
            test_roots.append(folder)
    seen: set[Path] = set()
    for file in policies:
        key = file.resolve()
        if key not in seen:
            seen.add(key)
            found.policy_files.append(file)
    found.other_files = [file for file in found.other_files if file.resolve() not in seen]
    found.test_files = _tests(test_roots)
    _refuse_collisions(found)
    return found


def _refuse_collisions(found: Layout) -> None:
    """Two SRC files that land on one path under DIR (``migrate a/ b/`` with ``a/p.yaml`` and ``b/p.yaml``).
    With the same bytes, one is copied. When either is a test or a YAML file that may hold a Kyverno policy,
    one conversion would replace the other while the report called both written: a SourceError. Another
    file (a README, a kustomization) is copied once, from the first SRC, with a note."""
    tests = {file.resolve() for file in found.test_files}
    placed: dict[Path, Path] = {}
    for file in [*found.policy_files, *found.other_files]:
        target = found.target(file)
        if target is None:
            continue
        first = placed.setdefault(target, file)
        if first.resolve() == file.resolve():
            continue
        first_bytes, later_bytes = first.read_bytes(), file.read_bytes()
        if first_bytes != later_bytes:
            yaml_file = file.suffix.lower() in (".yaml", ".yml", ".json")
            policy_like = yaml_file and b"kyverno.io/" in first_bytes + later_bytes
            if {first.resolve(), file.resolve()} & tests or policy_like:
                raise SourceError(f"{first} and {file} would both be written to {target}: migrate them in "
                                  "separate runs (one --out each), or migrate the folder that holds both")
            found.notes.append(f"{file} is not copied: {first} is written to {target}")
        for files in (found.policy_files, found.other_files):
            if file in files:
                files.remove(file)

def _all_files(folder: Path) -> list[Path]:
    out: list[Path] = []
    for directory, names, files in os.walk(folder):
        names[:] = sorted(name for name in names if name != ".git")
        out.extend(Path(directory) / name for name in sorted(files))
    return out


def _tests(roots: list[Path]) -> list[Path]:
    from assertree.testing.testfile import TEST_FILE_NAME

    found: list[Path] = []
    seen: set[Path] = set()
    for root in roots:
        for file in sorted(root.rglob(TEST_FILE_NAME)):
            key = file.resolve()
            if key not in seen and file.is_file() and ".git" not in file.parts:
                seen.add(key)
                found.append(file)
    return found
