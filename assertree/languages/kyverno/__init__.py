"""Kyverno's own policy language: ``kyverno.io`` ClusterPolicy and Policy (validate, mutate, variables)."""
