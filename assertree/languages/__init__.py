"""The policy languages assertree runs, one package each; `base` is the interface the engine runs."""
