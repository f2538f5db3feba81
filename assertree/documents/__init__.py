"""Reading JSON and YAML documents, with the positions every located message needs."""
