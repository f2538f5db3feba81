"""The policies ``/api/scan`` checks against: compiled once, swapped whole on reload.

Requests read `PolicyStore.current` once and keep that `PolicySet` for the whole
scan; a reload compiles the new set aside and then replaces the reference in one
assignment, so a request never sees half a reload and requests need no lock.
A reload that fails (a policy with an error, a file half written) keeps the
previous set and records why (`PolicyStore.reload_error`, shown by
``/api/health``): a typo in an editor never takes a running service down.

Reloads happen on SIGHUP (`assertree.serve.server`) and, with `watch`, when a
``.yaml``/``.yml``/``.json`` file under the policy paths changes (watchfiles:
inotify on Linux, the platform's file events elsewhere, debounced).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError

LOG = logging.getLogger("assertree.serve")


@dataclass(frozen=True)
class PolicySet:
    """Compiled policies and when they were compiled."""

    policies: tuple[Any, ...]
    loaded_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def rule_count(self) -> int:
        return sum(len(policy.policy.rules) for policy in self.policies)


class PolicyStore:
    """The policies of some files and directories, kept compiled; see the module docstring."""

    def __init__(self, paths: Sequence[str | Path]) -> None:
        self.paths = [Path(path) for path in paths]
        self.current = self._load()  # PolicyError at start: the server does not start on bad policies
        self.reload_error: str | None = None
        self.reloads = 0
        self._lock = threading.Lock()  # one reload at a time (a signal and a file event may coincide)

    def _load(self) -> PolicySet:
        from assertree.errors import PolicyError
        from assertree.languages.load import load_policies
        from assertree.results import refused_rules

        policies = load_policies(*self.paths)
        if not policies:
            where = ", ".join(str(path) for path in self.paths)
            raise PolicyError(f"no policies were found in {where}: nothing would be checked")
        for policy in policies:
            for refused in refused_rules(policy):
                LOG.warning("rule not run: %s", refused.problem)
        return PolicySet(tuple(policies))

    def reload(self) -> bool:
        """Compile the policies again and swap them in; False (old set kept) when they have a problem."""
        with self._lock:
            try:
                fresh = self._load()
            except AssertreeError as error:
                self.reload_error = str(error)
                LOG.warning("policies not reloaded, still serving the previous ones: %s", error)
                return False
            self.current = fresh
            self.reload_error = None
            self.reloads += 1
            LOG.info("policies reloaded: %d policies, %d rules", len(fresh.policies), fresh.rule_count)
            return True

    async def watch(self, stop: Any = None) -> None:
        """Reload whenever a policy file under the paths changes, until `stop` (an event) is set."""
        import anyio
        from watchfiles import awatch

        from assertree.documents.reader import SUFFIXES

        def is_policy_file(_change: Any, path: str) -> bool:
            return Path(path).suffix.lower() in SUFFIXES

        async for _changes in awatch(*self.paths, watch_filter=is_policy_file, stop_event=stop, debounce=400,
                                     recursive=True):
            await anyio.to_thread.run_sync(self.reload)

    def health(self) -> dict[str, Any]:
        """What ``/api/health`` says about the policies (with the rules they hold that are not run offline)."""
        from assertree.serve.responses import not_run

        current = self.current
        return {
            "policies": len(current.policies),
            "rules": current.rule_count,
            "names": [policy.policy.name for policy in current.policies],
            "loaded_at": current.loaded_at.isoformat(timespec="seconds"),
            "reloads": self.reloads,
            "reload_error": self.reload_error,
            "not_run": not_run(current.policies),
        }
