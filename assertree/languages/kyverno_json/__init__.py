"""kyverno-json's ValidatingPolicy (json.kyverno.io/v1alpha1): assertion trees on any JSON."""
