"""How much one JSON or YAML file may ask of the reader: go-yaml's alias budget and the input size cap.

assertree runs in CI on files from pull requests. A YAML "billion laughs"
document is a few hundred bytes whose aliases expand to billions of nodes:
PyYAML shares the aliased objects, so parsing stays cheap, but everything
that walks the value afterwards (compiling a policy, writing a report)
would see every copy. go-yaml, which Kyverno and kyverno-json read YAML
with, refuses such documents with a budget on the share of decoded nodes
that aliases may produce (v2 and v3 ``decode.go``, ``allowedAliasRatio``),
the rule Kubernetes adopted after CVE-2019-11253; assertree applies the same
budget to every YAML file it reads (`check_aliases`) and to ``parse_yaml``
(`assertree.jp.functions.goyaml`), so a document within the budget reads as
it does in Kyverno.

`MAX_NESTING` is how deep any input may nest (`assertree.documents.nesting`);
libyaml's own nesting limit is kept above it (`make_room_in_libyaml`, called
when `assertree.documents.loaders` is imported) so that the limit a user
meets, and its message, are assertree's whichever PyYAML is installed.

`max_input_bytes` caps what one file or standard input may hold, so that
``head -c 3G /dev/zero | assertree scan -`` stops with an error instead of
filling memory.
"""

from __future__ import annotations

import os

from assertree.documents.nesting import MAX_NESTING

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import yaml

# go-yaml (decode.go, allowedAliasRatio): up to 400,000 decoded nodes aliases may make 99% of them;
# from 4,000,000 nodes only 10%; linear in between. A document within the budget decodes as in Kyverno.
MAX_YAML_ALIAS_RATIO_LOW = 400_000
MAX_YAML_ALIAS_RATIO_HIGH = 4_000_000

# libyaml's own limit, kept above ours so that assertree's check comes first: libyaml's scanner reads up to 1,024
# characters ahead (a possible implicit key), so it may open 1,024 more levels than the events show
LIBYAML_NESTING = 4 * MAX_NESTING


def make_room_in_libyaml() -> None:
    """Raise libyaml's nesting limit (a process-wide setting of the C library) to `LIBYAML_NESTING` where
    PyYAML exposes it, never lowering it. Without this, a document 1,001 to 1,024 levels deep would read
    with PyYAML 6.0.3 and fail with 6.0.4, and deeper ones would fail with libyaml's message, not ours.
    `tests/documents` pins the limit and its message; CI runs them at both ends of PyYAML's range."""
    try:
        from yaml import _yaml as libyaml  # present only when PyYAML was built with libyaml
    except ImportError:
        return
    get = getattr(libyaml, "_get_max_nest_level", None)
    put = getattr(libyaml, "_set_max_nest_level", None)
    if get is not None and put is not None and get() < LIBYAML_NESTING:
        put(LIBYAML_NESTING)




def json_nesting_at(data: bytes, offset: int) -> int:
    """How many arrays and objects are open at byte `offset` of JSON text `data` (strings skipped). A parse
    error is told apart as assertree's nesting limit by this count, not by the parser's wording."""
    import re

    head = data[:offset].replace(b"\\\\", b"").replace(b'\\"', b"")  # escaped backslashes, then quotes
    head = re.sub(rb'"[^"]*"?', b"", head)  # strings, the last one possibly unfinished
    opening = data[offset:offset + 1] in (b"[", b"{")  # a parser may point at the opener it refused, or past it
    return head.count(b"[") + head.count(b"{") - head.count(b"]") - head.count(b"}") + opening


def json_error_reason(data: bytes, offset: int, parser_reason: str) -> str:
    """The reason to give for a JSON parse error at `offset`: assertree's nesting limit when that is what was
    passed, else what the parser said."""
    if json_nesting_at(data, offset) > MAX_NESTING:
        return f"nested more than {MAX_NESTING} levels deep"
    return parser_reason


def json_too_deep_at(data: bytes) -> int | None:
    """The offset of the first array or object of valid JSON `data` opened deeper than `MAX_NESTING`, if any.

    assertree's own check, for an orjson that does not refuse such documents itself (orjson before 3.9.15
    had no limit): a token loop, correct rather than fast, run only where `orjson_nesting` says so."""
    import re

    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return None
    depth = 0
    for token in re.finditer(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', data):
        character = data[token.start()]
        if character in b"[{":
            depth += 1
            if depth > MAX_NESTING:
                return token.start()
        elif character in b"]}":
            depth -= 1
    return None


_ORJSON_NESTING: list[str] = []


def orjson_nesting() -> str:
    """How the installed orjson's own nesting limit compares with `MAX_NESTING`, found once by trying it:
    ``"same"`` (it reads 1,024 levels and refuses 1,025: the fast path needs no other check), ``"none"`` (it
    reads deeper documents: `json_too_deep_at` checks) or ``"lower"`` (it refuses documents assertree reads:
    those are read again by the standard library's parser)."""
    if not _ORJSON_NESTING:
        import orjson

        def reads(depth: int) -> bool:
            try:
                orjson.loads(b"[" * depth + b"]" * depth)
            except orjson.JSONDecodeError:
                return False
            return True

        _ORJSON_NESTING.append("lower" if not reads(MAX_NESTING) else "none" if reads(MAX_NESTING + 1) else "same")
    return _ORJSON_NESTING[0]


DEFAULT_MAX_INPUT_BYTES = 512 * 1024 * 1024
MAX_INPUT_BYTES_VARIABLE = "ASSERTREE_MAX_INPUT_BYTES"


def yaml_alias_ratio(decoded: int) -> float:
    """The share of `decoded` nodes that may come from alias expansion (go-yaml's rule)."""
    if decoded <= MAX_YAML_ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= MAX_YAML_ALIAS_RATIO_HIGH:
        return 0.10
    span = MAX_YAML_ALIAS_RATIO_HIGH - MAX_YAML_ALIAS_RATIO_LOW
    return 0.99 - 0.89 * (decoded - MAX_YAML_ALIAS_RATIO_LOW) / span


def excessive_aliasing(decoded: int, aliased: int) -> bool:
    """go-yaml's test, made after every decoded node: more than 100 aliased nodes among more than 1,000,
    and a larger share than `yaml_alias_ratio` allows."""
    return aliased > 100 and decoded > 1000 and aliased / decoded > yaml_alias_ratio(decoded)


def _fail(problem: str, node: yaml.Node) -> None:
    import yaml  # here, not at the top: this module also serves JSON-only runs, which never import PyYAML

    raise yaml.composer.ComposerError(None, None, problem, node.start_mark)


def check_aliases(root: yaml.Node) -> None:
    """Raise a located YAML error when the composed document `root` is an alias bomb (go-yaml's budget)
    or holds an anchor whose value contains an alias to itself (go-yaml: "anchor value contains itself").

    go-yaml counts nodes as it decodes them, aliases expanded, and fails as soon as the
    budget is passed. Here the count is made on PyYAML's node graph (where an alias is the
    anchored node itself, met again) without expanding anything: each node's expanded size is
    kept, and an alias adds it at once. Checking at each node and after each alias gives go-yaml's
    answer: during an alias's expansion both counts grow by one per node, so the aliased share
    only rises and the allowed share only falls, and the first breach is at the expansion's end
    at the latest. Iterative: documents may nest 1024 levels deep.
    """
    import yaml

    sizes: dict[int, int] = {}  # id(node): its expanded size, once its subtree is done
    open_nodes: set[int] = set()
    decoded = aliased = 0
    stack: list[tuple[yaml.Node, int, list]] = []  # (node, decoded before it, children still to visit)

    def visit(node: yaml.Node) -> None:
        nonlocal decoded, aliased
        identity = id(node)
        size = sizes.get(identity)
        if size is not None:  # met again: an alias
            decoded += size
            aliased += size
            if excessive_aliasing(decoded, aliased):
                _fail("document contains excessive aliasing (go-yaml's alias budget: a YAML alias bomb?)", node)
            return
        if identity in open_nodes:
            _fail("anchor value contains itself", node)
        decoded += 1
        if excessive_aliasing(decoded, aliased):
            _fail("document contains excessive aliasing (go-yaml's alias budget: a YAML alias bomb?)", node)
        if isinstance(node, yaml.ScalarNode):
            sizes[identity] = 1
            return
        children: list = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        open_nodes.add(identity)
        stack.append((node, decoded - 1, children[::-1]))

    visit(root)
    while stack:
        node, before, children = stack[-1]
        if children:
            visit(children.pop())
            continue
        stack.pop()
        open_nodes.discard(id(node))
        sizes[id(node)] = decoded - before


def may_alias(text: str) -> bool:
    """Whether YAML text can hold an alias at all (an anchor ``&`` and an alias ``*``): the others skip the check."""
    return "&" in text and "*" in text


def max_input_bytes() -> int:
    """The most bytes one input file or standard input may hold: ``ASSERTREE_MAX_INPUT_BYTES`` when set
    (a positive integer), else 512 MiB (a Terraform plan of 100,000 resources is about 400 MB)."""
    value = os.environ.get(MAX_INPUT_BYTES_VARIABLE, "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return DEFAULT_MAX_INPUT_BYTES
