"""The CEL environment of admission policy expressions, and compiling one expression in it.

The apiserver (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go and the
validating and mutating plugins' compilation) declares ``object``,
``oldObject``, ``request``, ``namespaceObject`` and ``variables`` for every
expression; ``params`` only when the policy has a ``paramKind``;
``authorizer`` and ``authorizer.requestResource`` for the expressions that
decide (match conditions, variables, validations, audit annotations,
mutations) but not for ``messageExpression``. An expression reading a
variable its field does not have is a compile error, as in Kubernetes. The
functions are the apiserver's base environment
(`assertree.languages.cel.kubernetes.kubernetes_environment`); mutations may
also build ``Object{...}`` and ``JSONPatch{...}`` values, which
`assertree.languages.cel.rewrite` turns into maps.

Cost. Kubernetes bounds every expression (a static estimate against
``PerCallLimit``) and every admission request (``RuntimeCELCostBudget`` shared
by all the policy's expressions). Those limits belong to the shared CEL
engine (`assertree.languages.cel`), which is growing them; every expression of
this language is compiled by `compile_expression` and evaluated by
`assertree.languages.admission.evaluate.run`, the two places they plug in.
"""

from __future__ import annotations

import re

from assertree.errors import PolicyError
from assertree.languages.cel.engine import CelCompileError, CelUnavailableError, Program
from assertree.languages.cel.kubernetes import kubernetes_environment
from assertree.languages.cel.rewrite import rewrite

__all__ = ["AUTHORIZER_VARIABLES", "compile_expression", "variables_of"]

BASE_VARIABLES = ("object", "oldObject", "request", "namespaceObject", "variables")
_PARAMS = re.compile(r"(?<![\w.])params\b")
_AUTHORIZER = re.compile(r"(?<![\w.])authorizer\b")
AUTHORIZER_VARIABLES = ("authorizer", "authorizer.requestResource")


def variables_of(*, params: bool, authorizer: bool) -> tuple[str, ...]:
    """The variables an expression may read."""
    return (*BASE_VARIABLES, *(("params",) if params else ()), *(AUTHORIZER_VARIABLES if authorizer else ()))


def compile_expression(text: str, path: tuple, *, params: bool, authorizer: bool = True) -> Program:
    """One CEL text compiled in the apiserver's environment; PolicyError naming `path` when it does not compile."""
    environment = kubernetes_environment("admissionregistration.k8s.io", variables_of(params=params,
                                                                                      authorizer=authorizer))
    try:
        return environment.compile(rewrite(text))
    except CelUnavailableError as error:
        raise PolicyError(error.message, path=path) from None
    except CelCompileError as error:
        hint = ""
        if not params and _PARAMS.search(text):
            hint = " (params are declared only when the policy has a paramKind)"
        elif not authorizer and _AUTHORIZER.search(text):
            hint = " (a messageExpression has no authorizer)"
        raise PolicyError(f"invalid CEL expression: {error.message}{hint}", path=path) from None
