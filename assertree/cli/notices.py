"""What the commands say on stderr about policies they load: the rules they will not run.

A rule assertree cannot run offline (it needs an image registry, a cluster, or
is not implemented) is left out when its policy loads, and every other rule
runs (`assertree.results.RefusedRule`); it is said once, here, with its file,
line and field, so nothing passes silently for checking less than it says.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, TextIO

from assertree.results import refused_rules


def warn_refused(policies: Iterable[Any], stream: TextIO | None = None) -> int:
    """One ``assertree: warning:`` line per refused rule of `policies`; returns how many there were."""
    out = stream if stream is not None else sys.stderr
    count = 0
    for policy in policies:
        for refused in refused_rules(policy):
            print(f"assertree: warning: {refused.problem}", file=out)
            count += 1
    return count
