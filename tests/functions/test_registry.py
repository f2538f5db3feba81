"""The registry's lazy loading: the name-to-module map is right, and unused modules stay unloaded."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# The patterns `parse_signature` replaced: it must accept nothing they reject, and read alike what both accept.
_SIGNATURE = re.compile(r"\s*(?P<name>[a-z_][a-z0-9_]*)\s*\((?P<params>.*)\)\s*->\s*(?P<returns>.+?)\s*$")
_PARAM = re.compile(r"\s*(?P<star>\*)?(?P<name>[a-z_][a-z0-9_]*)(?P<opt>\?)?\s*:\s*(?P<types>[\w\[\]| ]+?)\s*$")


def _by_patterns(text: str):
    """What `parse_signature` gave when it matched the patterns above: (name, [(param, types, optional,
    variadic)], returns), or "refused" (a ValueError)."""
    from assertree.jp.registry import _type_check

    match = _SIGNATURE.fullmatch(text)
    if match is None:
        return "refused"
    params = []
    body = match.group("params").strip()
    for part in body.split(",") if body else []:
        m = _PARAM.fullmatch(part)
        if m is None:
            return "refused"
        types = tuple(t.strip() for t in m.group("types").split("|"))
        try:
            _type_check(types)
        except ValueError:
            return "refused"
        params.append((m.group("name"), types, bool(m.group("opt")), bool(m.group("star"))))
    optional = False
    for index, (_, _, is_optional, variadic) in enumerate(params):
        if (variadic and index != len(params) - 1) or (optional and not is_optional and not variadic):
            return "refused"
        optional = optional or is_optional
    return match.group("name"), params, match.group("returns")


def _by_parser(text: str):
    from assertree.jp.registry import parse_signature

    try:
        name, params, returns = parse_signature(text)
    except ValueError:
        return "refused"
    return name, [(p.name, p.types, p.optional, p.variadic) for p in params], returns


def test_every_registered_signature_reads_as_the_patterns_read_it():
    for function in all_functions():
        parsed = _by_patterns(function.signature)
        assert parsed != "refused" and _by_parser(function.signature) == parsed, function.signature


def _mostly(good, *bad):
    """One of `good` (the way signatures are written) six times in seven, else one of `bad`."""
    goods = list(good) if isinstance(good, list) else [good]
    return st.sampled_from(goods * 6 + list(bad)) if bad else st.sampled_from(goods)


_SPACE = _mostly(["", " "], "  ", "\t", "\n", "\x0b")
_NAMES = _mostly(["a", "value", "_x1", "to_number"], "Bad", "1st", "x-y", "", "a b", "ü")
_TYPE = _mostly(["string", "number", "array[string]", "any", " null "], " ", "array[", "a:b", "ü", "", "\t")
_TYPES = st.lists(st.tuples(_TYPE, _mostly(["|", " | "], "\t|", "|\n", "||")), min_size=1, max_size=3).map(
    lambda pairs: "".join(name + separator for name, separator in pairs[:-1]) + pairs[-1][0])


@st.composite
def _signatures(draw) -> str:
    """Signature-shaped text: each part spelled as signatures are written, or (one time in seven) not."""
    params = []
    for _ in range(draw(st.integers(0, 3))):
        params.append(draw(_SPACE) + draw(_mostly(["", "*"], "* ")) + draw(_NAMES) + draw(_mostly(["", "?"], " ?"))
                      + draw(_SPACE) + draw(_mostly(":", "", "::")) + draw(_SPACE) + draw(_TYPES) + draw(_SPACE))
    return (draw(_SPACE) + draw(_NAMES) + draw(_SPACE) + draw(_mostly("(", "", "((")) + ",".join(params)
            + draw(_mostly(")", "", "))")) + draw(_SPACE) + draw(_mostly("->", "-", "=>", "->->")) + draw(_SPACE)
            + draw(_mostly(["any", "string|null"], "", "a b", "x)", "\n", "a\nb")) + draw(_SPACE))


@given(st.one_of(_signatures(), st.text(alphabet="abc_*?:|,()[]-> \n", max_size=30)))
@settings(max_examples=1500, deadline=None)
def test_the_signature_parser_accepts_only_what_the_patterns_accept_and_reads_it_alike(text):
    ours, theirs = _by_parser(text), _by_patterns(text)
    if ours != theirs:  # stricter only on return types no function has: blank, or holding ')'
        assert ours == "refused" and (not theirs[2].strip() or ")" in theirs[2]), (text, ours, theirs)
