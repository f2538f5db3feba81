"""Fixing resources with mutate rules: ``assertree apply`` as a library.

    from assertree.apply import apply_to_files, load_mutate_policies
    loaded = load_mutate_policies(["policies/"], values="values.yaml")
    for change in apply_to_files(["deploy.yaml"], loaded.policies, context=loaded.context):
        print(change.diff())

- `apply_mutations` (`mutations`): mutate rules on resources, one `Applied` each
  (source, document index, original and mutated values, rule results);
- `apply_to_files` / `apply_to_text` (`files`): the same on files, giving each
  file's new text (`FileChange`, with `diff()`);
- `rewrite_stream` / `rewrite_json` (`rewrite`): new values written into a
  file's text, changing only what differs;
- `load_mutate_policies` (`policies`): the mutating policies of some files,
  with their PolicyExceptions, values and user info.
"""

from __future__ import annotations

from assertree.apply.files import FileChange, apply_to_files, apply_to_text, unified_diff
from assertree.apply.mutations import Applied, apply_mutations
from assertree.apply.policies import MutatePolicies, load_mutate_policies
from assertree.apply.rewrite import rewrite_json, rewrite_stream

__all__ = [
    "Applied",
    "FileChange",
    "MutatePolicies",
    "apply_mutations",
    "apply_to_files",
    "apply_to_text",
    "load_mutate_policies",
    "rewrite_json",
    "rewrite_stream",
    "unified_diff",
]
