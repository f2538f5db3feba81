"""The JSON Schema of ValidatingPolicy, shipped with the package (package data)."""
