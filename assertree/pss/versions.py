"""Pod Security Standards levels and policy versions, as ``k8s.io/pod-security-admission/api`` reads them.

A version is ``v1.<minor>`` (``v1.0``, ``v1.25``; no leading zero, no patch)
or ``latest``, which is newer than every numbered version. The checks of a
version are the newest revision of each check whose minimum version is not
newer than it (`registry`), so ``latest`` and any version past the newest
revision give the same checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

__all__ = ["BASELINE", "LATEST", "LEVELS", "PRIVILEGED", "RESTRICTED", "Version", "parse_level", "parse_version"]

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LEVELS = (PRIVILEGED, BASELINE, RESTRICTED)

_VERSION = re.compile(r"v1\.(0|[1-9][0-9]*)")


@total_ordering
@dataclass(frozen=True)
class Version:
    """``v1.<minor>``, or ``latest`` (`latest` true), which orders after every numbered version."""

    minor: int = 0
    latest: bool = False

    def __str__(self) -> str:
        return "latest" if self.latest else f"v1.{self.minor}"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key < other._key

    @property
    def _key(self) -> tuple[bool, int]:
        return (True, 0) if self.latest else (False, self.minor)


LATEST = Version(latest=True)


def v(minor: int) -> Version:
    """``v1.<minor>``: how the check table names its versions."""
    return Version(minor)


def parse_version(text: str) -> Version:
    """``latest`` or ``v1.<minor>``; ValueError for anything else (upstream's ``ParseVersion``)."""
    if text == "latest":
        return LATEST
    found = _VERSION.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise ValueError('must be "latest" or "v1.x"')
    return Version(int(found.group(1)))


def parse_level(text: str) -> str:
    """``privileged``, ``baseline`` or ``restricted``; ValueError for anything else."""
    if text not in LEVELS:
        raise ValueError(f"must be one of {', '.join(LEVELS)}")
    return text
