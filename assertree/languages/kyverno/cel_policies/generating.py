"""GeneratingPolicy: which resources a trigger would make Kyverno create.

Kyverno's order (``pkg/cel/policies/gpol/engine/engine.go`` and
``compiler/policy.go``): the match constraints must select the trigger's
admission request (else no result); the match conditions must all hold (one
false: no result either; one that errors: ERROR); then each ``generate`` entry
runs in turn, with the variables evaluated lazily: an ``expression`` calls
``generator.Apply(namespace, [objects...])``, which adds the objects (each
item of a list result on its own, the namespace set to the one named), and a
``template`` (`template`) renders resources that are generated into their own
``metadata.namespace`` (a namespaced policy's own namespace when they have
none; another namespace is refused). Any failure is an ERROR ("failed to
evaluate policy"); otherwise PASS with every generated resource. Lookups
(``resource.List`` of the objects to clone) read `ScanContext.lookups`.

The result says what would be generated (``would generate
ConfigMap/team-a/settings``) and holds the objects in `RuleResult.generated`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.cel.engine import CelError, Program
from assertree.languages.kyverno.cel_policies.environment import Generated
from assertree.languages.kyverno.cel_policies.model import Generation
from assertree.languages.kyverno.cel_policies.template import Template, TemplateError, compile_template
from assertree.results import ERROR, PASS, RuleError

__all__ = ["CompiledGeneration", "compile_generation", "evaluate_generations"]


@dataclass
class CompiledGeneration:
    """One ``generate`` entry: its program, or its compiled template."""

    generation: Generation
    program: Program | None = None
    template: Template | None = None


def compile_generation(generation: Generation, compile_text: Any) -> CompiledGeneration:
    """`generation` compiled (`compile_text(text, path)` compiles one CEL text); PolicyError with the path."""
    if generation.expression is not None:
        return CompiledGeneration(generation, program=compile_text(generation.expression, generation.path))
    try:
        template = compile_template(generation.template or "", generation.interpolate,
                                    lambda text: compile_text(text, generation.path))
    except TemplateError as error:
        raise PolicyError(f"invalid template: {error}", path=generation.path) from None
    return CompiledGeneration(generation, template=template)


@dataclass
class GenerationOutcome:
    """What the generate entries gave for one trigger."""

    status: str
    message: str
    generated: list[dict]
    error: RuleError | None = None


def evaluate_generations(generations: list[CompiledGeneration], scope: dict[str, Any], lookups: Any,
                         namespace: str | None) -> GenerationOutcome:
    """Run every entry on `scope` (the CEL variables, match conditions already checked)."""
    sink = Generated.of(lookups, namespace or "")
    for compiled in generations:
        path = compiled.generation.path
        try:
            if compiled.template is not None:
                resources = compiled.template.render(lambda program: program.evaluate(scope, sink))
                _generate_rendered(sink, resources, namespace)
            elif compiled.program is not None:
                compiled.program.evaluate(scope, sink)
        except (CelError, TemplateError) as failure:
            text = f"failed to evaluate policy: {getattr(failure, 'message', None) or failure}"
            return GenerationOutcome(ERROR, text, [], RuleError(text, path=path, kind="evaluation"))
    return GenerationOutcome(PASS, "policy evaluated successfully", list(sink.generated))


def _generate_rendered(sink: Generated, resources: list[dict], namespace: str | None) -> None:
    """Rendered template resources, each into its own namespace (``applyTemplate``)."""
    for resource in resources:
        metadata = resource.get("metadata")
        target = str(metadata.get("namespace") or "") if isinstance(metadata, dict) else ""
        if namespace:
            if not target:
                target = namespace
            elif target != namespace:
                raise TemplateError(f"cross-namespace generation denied: a policy in namespace {namespace!r} cannot "
                                    f"generate resources into namespace {target!r}")
        sink.generate(target, [resource])

