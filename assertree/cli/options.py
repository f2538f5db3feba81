"""Options that mean the same in several commands, declared once so that their names, types and help agree.

A command takes one as ``exclude: ExcludeOption = None``. Options whose meaning differs between commands
(``--output``, ``--policy``) stay with their command.
"""

# No `from __future__ import annotations` here: typer reads the aliases' annotations.

from pathlib import Path
from typing import Annotated

import typer

ExcludeOption = Annotated[list[str] | None, typer.Option(
    "--exclude", metavar="GLOB", show_default=False,
    help="Leave out the files and folders (policies, resources, tests) that GLOB names: a name ('templates', "
    "'*.tpl.yaml') or a path ('charts/*/templates', 'examples/_archived'). Repeatable.")]

ValuesOption = Annotated[Path | None, typer.Option(
    "--values", metavar="FILE", show_default=False,
    help="Kyverno CLI values file (cli.kyverno.io/v1alpha1 Values): variables, context entries, namespace "
    "labels and request.operation for kyverno.io policies, as 'kyverno apply --values-file'.")]

UserInfoOption = Annotated[Path | None, typer.Option(
    "--user-info", metavar="FILE", show_default=False,
    help="Kyverno CLI user-info file (cli.kyverno.io/v1alpha1 UserInfo): request.userInfo, roles and "
    "clusterRoles for kyverno.io policies.")]

ParamsOption = Annotated[list[Path] | None, typer.Option(
    "--params", metavar="PATH", show_default=False,
    help="Parameter resources of Kubernetes admission policies (files or directories of ConfigMaps, custom "
    "resources ...): what a binding's paramRef chooses from, and a ClusterPolicy validate.cel rule's. "
    "Repeatable.")]

UnboundOption = Annotated[bool, typer.Option(
    "--unbound", metavar="",
    help="Run ValidatingAdmissionPolicies and MutatingAdmissionPolicies that no binding names as if bound "
    "(validationActions Deny, no params). Without it they are reported as not bound (skip), as Kubernetes "
    "would not run them.")]
