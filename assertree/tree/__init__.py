"""Assertion trees: key syntax, the three node kinds, and leaf comparison."""
