"""Start-up work done on first use: what moved out of import time still gives the same results.

The 32-deep container regex of `skip_json_value` and the payload loader's resolver regexes are compiled
when first needed (a scan of a JSON payload needs neither); the dataclasses that stopped being frozen (their
generated ``__setattr__`` was most of their start-up cost) still compare and hash by value.
"""

from __future__ import annotations

import subprocess
import sys
from typing import ClassVar

import yaml

from assertree.documents import loaders
from assertree.documents.reader import skip_json_value
from assertree.jp.ast import Node
from assertree.jp.lexer import Token, tokenize
from assertree.jp.registry import lookup
from assertree.report.totals import Totals


def test_importing_the_reader_compiles_neither_regex_until_used():
    code = ("from assertree.documents import loaders, reader; "
            "print(reader._container.cache_info().currsize, len(loaders.PayloadLoader.yaml_implicit_resolvers)); "
            "print(reader.skip_json_value('[[1, {\"a\": \"]\"}], 2] x', 0)); "
            "print(reader._container.cache_info().currsize, len(loaders.PayloadLoader.yaml_implicit_resolvers)); "
            "import yaml; print(yaml.load('[on, true, 0x1F, 1.5, ~, 1_000]', Loader=loaders.PayloadLoader)); "
            "print(bool(loaders.PayloadLoader.yaml_implicit_resolvers))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 0", "20", "1 0", "['on', True, 31, 1.5, None, 1000]", "True"]


def test_the_resolver_table_is_the_one_pyyaml_would_build() -> None:
    class Reference(loaders.JSONSafeLoader):
        yaml_implicit_resolvers: ClassVar[dict] = {}

    for tag, pattern, first in loaders._RESOLVERS:
        Reference.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", loaders.re.compile(pattern), list(first))
    yaml.load("x", Loader=loaders.PayloadLoader)  # the first loader fills the table

    def spelled(table: dict) -> dict:
        return {first: [(tag, regex.pattern) for tag, regex in pairs] for first, pairs in table.items()}

    assert spelled(loaders.PayloadLoader.yaml_implicit_resolvers) == spelled(Reference.yaml_implicit_resolvers)


def test_skip_json_value_past_the_regex_depth_and_within_it():
    shallow = '{"a": [1, "]", {"b": null}]}, 3'
    assert skip_json_value(shallow, 0) == shallow.index(", 3")
    deep = "[" * 40 + "]" * 40 + " tail"
    assert skip_json_value(deep, 0) == 80


def test_unfrozen_dataclasses_still_compare_and_hash_by_value():
    first, again = tokenize("a.b"), tokenize("a.b")
    assert first == again and {*first} == {*again} and hash(first[0]) == hash(Token(*vars_of(first[0])))
    assert hash(Node("field", (), "a")) == hash(Node("field", (), "a")) and Node("field") != Node("literal")
    function = lookup("length")
    assert function is not None and hash(function) == hash(lookup("length")) and {*function.params} == {
        *lookup("length").params}
    counts = dict.fromkeys(["resources", "policies", "rules", "passed", "failed", "errors", "skipped",
                            "notMatched", "warned", "violations", "fileErrors", "baselined", "fixed"], 1)
    assert Totals(**counts) == Totals(**counts) and len({Totals(**counts), Totals(**counts)}) == 1
    assert Totals(**counts).as_dict() == counts


def vars_of(token: Token) -> tuple:
    return token.type, token.value, token.start, token.end
