"""The registry's lazy loading: the name-to-module map is right, and unused modules stay unloaded."""

from __future__ import annotations

import subprocess
import sys

import pytest

from assertree.jp.functions import BASE_MODULES, LIBRARY_MODULES, MODULE_OF
from assertree.jp.registry import REPLACED, all_functions, exact_types


def test_module_of_names_every_library_function_and_only_those():
    registered = {f.name: f.impl.__module__.rsplit(".", 1)[-1] for f in all_functions()}
    library = {name: module for name, module in registered.items() if module not in BASE_MODULES}
    assert library == MODULE_OF
    assert set(MODULE_OF.values()) == set(LIBRARY_MODULES)
    assert set(REPLACED) <= set(MODULE_OF) and len(registered) == 91


def test_a_function_module_is_imported_only_when_one_of_its_functions_is_used():
    probe = (
        "import sys; from assertree import jp\n"
        "assert jp.search(\"contains(@, 'a') && ends_with(@, 'c')\", 'abc') is True\n"
        "assert jp.search(\"add('1Gi', '512Mi')\", None) == '1536Mi'\n"
        "loaded = {m.rsplit('.', 1)[-1] for m in sys.modules if m.startswith('assertree.jp.functions.')}\n"
        "print(sorted(loaded & {'x509', 'times', 'encoding', 'regex', 'semver', 'arithmetic'}),"
        " 'cryptography' in sys.modules, 're2' in sys.modules)\n"
        "jp.compile(\"time_now()\")\n"
        "print('times' in {m.rsplit('.', 1)[-1] for m in sys.modules})\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['arithmetic'] False False", "True"]


def test_no_function_can_reach_files_the_environment_or_the_network():
    """Expressions come from policy files: the whole dialect stays a pure function of its inputs."""
    import ast
    from pathlib import Path

    import assertree.jp

    forbidden_modules = {"os", "io", "socket", "subprocess", "urllib", "http", "shutil", "pathlib", "ctypes"}
    forbidden_calls = {"open", "exec", "eval", "__import__"}
    for path in Path(assertree.jp.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").split(".")[0]}
            else:
                names = set()
            assert not names & forbidden_modules, f"{path.name} imports {names & forbidden_modules}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in forbidden_calls, f"{path.name}:{node.lineno} calls {node.func.id}()"


def test_a_value_of_an_exact_type_passes_every_parameter_check_that_names_the_type():
    # the compiler skips a parameter's check for an argument whose type is one of `exact_types` (jp/compiler.py)
    samples = {str: ["", "a"], int: [0, -1, 2**70], float: [0.5, -0.0], bool: [True, False], list: [[], [1, "a"]],
               dict: [{}, {"a": 1}], type(None): [None]}
    checked = 0
    for function in all_functions():
        for param in function.params:
            for kind in exact_types(param.types):
                for value in samples[kind]:
                    assert param.check(value), (function.name, param.name, value)
                    checked += 1
    assert checked > 100


def test_signatures_are_parsed_when_their_name_is_first_looked_up():
    probe = (
        "from assertree.jp import registry; import assertree.jp.functions\n"
        "before = sorted(registry.REGISTRY)\n"
        "found = registry.lookup('abs')\n"
        "print(before, sorted(registry.REGISTRY), found.signature, len(registry._DECLARED) > 30)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[] ['abs'] abs(value: number) -> number True"]


def test_a_malformed_signature_fails_the_first_lookup_of_its_name():
    from assertree.jp import registry

    def probe(text):
        """A probe."""
        return text

    registry.function("zz_probe(text: strng) -> string")(probe)
    try:
        for _ in range(2):  # and again: the registration waits until it parses
            with pytest.raises(ValueError, match="unknown JMESPath type 'strng'"):
                registry.lookup("zz_probe")
    finally:
        registry._DECLARED.pop("zz_probe", None)
    assert registry.lookup("zz_probe") is None
