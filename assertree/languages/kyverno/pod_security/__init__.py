"""Kyverno's ``validate.podSecurity`` rules: the Pod Security Standards checks (`assertree.pss`) with
Kyverno's versions, control names, exclusions, PolicyException handling and messages (``pkg/pss`` and
``pkg/engine/handlers/validation/validate_pss.go`` in kyverno/kyverno)."""
