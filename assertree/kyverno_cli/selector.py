"""``kyverno test --test-case-selector``: which expected results of a Test are checked (``test/filter``).

The selector is ``key=value`` pairs joined by commas (default
``policy=*,rule=*,resource=*``); each value is a Kyverno wildcard matched
against a result's ``policy``, ``rule`` and each of its ``resources`` (a result
that leaves the field empty always matches). A ``resource`` value other than
``*`` also replaces the result's resources. A malformed pair is an error the
CLI prints under ``Filter errors:`` and goes on without.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from assertree.languages.kyverno.wildcard import match
from assertree.testing.testfile import ExpectedResult, KyvernoTest

__all__ = ["DEFAULT", "Selector"]

DEFAULT = "policy=*,rule=*,resource=*"


@dataclass
class Selector:
    """A parsed selector: (key, wildcard) filters and the errors of the pairs that could not be read."""

    filters: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> Selector:
        selector = cls()
        if not text:
            return selector
        for pair in text.split(","):
            parts = pair.split("=")
            if len(parts) != 2:
                selector.errors.append(f"Invalid test-case-selector argument ({pair}). Parameter must be in the "
                                       "form `<key>=<value>`.")
                continue
            key, value = parts[0].strip(), parts[1].strip()
            if key not in ("policy", "rule", "resource"):
                selector.errors.append(f"Invalid test-case-selector ({pair}). Parameter can only be policy, rule "
                                       "or resource.")
                continue
            selector.filters.append((key, value))
        return selector

    @property
    def resources(self) -> list[str]:
        """The resource values that replace a result's resources (``ExtractResourceFilters``: none when the
        selector has errors, and the first ``*`` ends the list)."""
        if self.errors:
            return []
        out = []
        for key, value in self.filters:
            if key == "resource":
                if value == "*":
                    break
                out.append(value)
        return out

    def accepts(self, result: ExpectedResult) -> bool:
        for key, value in self.filters:
            if key == "policy" and result.policy and not match(value, result.policy):
                return False
            if key == "rule" and result.rule and not match(value, result.rule):
                return False
            if key == "resource" and result.resources and not any(match(value, name) for name in result.resources):
                return False
        return True

    def select(self, test: KyvernoTest) -> KyvernoTest:
        """`test` with only the results the selector accepts (their resources replaced when it says so)."""
        replaced = self.resources
        results = [replace(result, resources=list(replaced)) if replaced else result
                   for result in test.results if self.accepts(result)]
        return replace(test, results=results)
