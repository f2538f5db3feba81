"""``assertree migrate``: Kyverno ClusterPolicy/Policy to Kyverno's CEL policy kinds, proven rule by rule.

    >>> from assertree.migrate import migrate
    >>> report = migrate(["policies/"], "migrated/", resources=["samples/"])
    >>> report.counts()
    {'verified': 12, 'differs': 0, 'not-converted': 1}

Migration is a stage of its own above the languages: it reads one language,
writes another, and runs both (`migration`). See docs/migrate.md.
"""

from __future__ import annotations

from assertree.migrate.migration import migrate
from assertree.migrate.report import Report

__all__ = ["Report", "migrate"]
