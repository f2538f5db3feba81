"""assertree: validate JSON and YAML against kyverno-json ValidatingPolicy assertion trees."""
