"""The exit codes every command shares (the README's Commands section, and each command's page in docs/)."""

EXIT_OK = 0  # every rule passed, or did not apply
EXIT_FAILED = 1  # a rule failed or errored (a test row failed; lint --strict found a warning)
EXIT_BAD_INPUT = 2  # a policy, payload, expression or flag that cannot be used
EXIT_INTERNAL = 3  # a bug in assertree
