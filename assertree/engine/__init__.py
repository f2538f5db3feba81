"""The scan: which rules can apply to a resource (the rule index), and running them."""
