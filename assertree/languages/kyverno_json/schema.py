"""Checking a policy document against the ValidatingPolicy JSON Schema.

The schema (``schemas/validatingpolicy.v1alpha1.json``, shipped in the
package) is kyverno-json's CRD written as JSON Schema 2020-12: the same
fields, required fields and enums, unknown fields rejected everywhere except
inside the free-form parts (assertion trees, context variables, feedback
values). jsonschema's errors become problems in ``languages/schema_problems``
(``spec.rules[0].matches: unknown field``, in document order), shared with
the Kyverno ClusterPolicy schema.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import Problem
from assertree.languages.schema_problems import packaged_schema, schema_problems, type_and_actual

SCHEMA_FILE = "validatingpolicy.v1alpha1.json"


def schema() -> dict:
    """The packaged ValidatingPolicy schema."""
    return packaged_schema(SCHEMA_FILE)


def problems(document: Any) -> list[Problem]:
    """Every schema problem of `document`, most useful first within a field, in document order."""
    return schema_problems(SCHEMA_FILE, document, type_wording=type_and_actual)
