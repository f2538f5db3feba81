"""Policy model, loading and validation."""
