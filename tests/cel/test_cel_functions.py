"""Kubernetes' and Kyverno's CEL libraries, written in Python, in the shared Kubernetes environment.

Expected values follow the upstream libraries' documentation and tests
(k8s.io/apiserver/pkg/cel/library, kyverno/kyverno pkg/cel/libs). The last
tests run the whole CEL tier of the kyverno-policies data through the
compiler: every expression compiles except the kinds `functions.MISSING`
names.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.languages.cel.engine import CelCompileError, CelEvaluationError
from assertree.languages.cel.functions import KUBERNETES, KYVERNO, MISSING
from assertree.languages.cel.kubernetes import environment

ENV = environment("test", ("object",))
DIGEST = "sha256:" + "0123456789abcdef" * 4


def run(text: str, value=None):
    return ENV.compile(text).evaluate({"object": value})


CASES = [
    # quantity
    ("quantity('1Gi').isGreaterThan(quantity('500Mi'))", True),
    ("quantity('500m').isLessThan(quantity('1'))", True),
    ("quantity('1Gi').compareTo(quantity('1024Mi'))", 0),
    ("quantity('1.5').add(quantity('500m')) == quantity('2')", True),
    ("quantity('1').add(2).asInteger()", 3),
    ("quantity('5').sub(quantity('7')).sign()", -1),
    ("quantity('1500m').asApproximateFloat()", 1.5),
    ("quantity('1500m').isInteger()", False),
    ("quantity('2k').asInteger()", 2000),
    ("isQuantity('1.5Gi')", True),
    ("isQuantity('1.5GiB')", False),
    # ip and cidr
    ("ip('10.0.0.1').family()", 4),
    ("ip('fe80::1').family()", 6),
    ("ip('127.0.0.1').isLoopback()", True),
    ("ip('0.0.0.0').isUnspecified()", True),
    ("ip('10.0.0.1').isGlobalUnicast()", True),  # Go's definition: private ranges are global unicast
    ("ip('169.254.1.1').isLinkLocalUnicast()", True),
    ("ip('224.0.0.5').isLinkLocalMulticast()", True),
    ("isIP('::ffff:1.2.3.4')", False),  # IPv4-mapped IPv6 is refused, as Kubernetes does
    ("isIP('fe80::1%eth0')", False),
    ("isIP('1.2.3')", False),
    ("ip.isCanonical('2001:db8::68')", True),
    ("ip.isCanonical('2001:DB8::68')", False),
    ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", True),
    ("cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", False),
    ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
    ("cidr('10.0.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", False),
    ("cidr('192.168.1.5/24').prefixLength()", 24),
    ("cidr('192.168.1.5/24').masked() == cidr('192.168.1.0/24')", True),
    ("cidr('192.168.1.5/24').ip() == ip('192.168.1.5')", True),
    ("isCIDR('10.0.0.0/33')", False),
    ("isCIDR('10.0.0.0')", False),
    # url
    ("url('https://user@example.com:8080/a%20b?x=1').getScheme()", "https"),
    ("url('https://user@example.com:8080/a%20b?x=1').getHost()", "example.com:8080"),
    ("url('https://[::1]:80/').getHostname()", "::1"),
    ("url('https://example.com:8080/').getPort()", "8080"),
    ("url('https://example.com/').getPort()", ""),
    ("url('https://example.com/a%20b').getEscapedPath()", "/a%20b"),
    ("url('https://e.com/p?x=1&x=2&y').getQuery()", {"x": ["1", "2"], "y": [""]}),
    ("url('/absolute/path').getScheme()", ""),
    ("isURL('not a url')", False),
    # regex
    ("'abc 123 def 456'.find('[0-9]+')", "123"),
    ("'abc'.find('[0-9]+')", ""),
    ("'a1b22c333'.findAll('[0-9]+')", ["1", "22", "333"]),
    ("'a1b22c333'.findAll('[0-9]+', 2)", ["1", "22"]),
    ("'a1b22c333'.findAll('[0-9]+', 0)", []),
    # lists
    ("[1, 2, 2, 3].isSorted()", True),
    (r"['b', 'a'].isSorted()", False),
    ("[1, 2, 3].sum()", 6),
    ("[1, 2.5].sum()", 3.5),
    ("[].sum()", 0),
    ("[3, 1, 2].min()", 1),
    ("['b', 'c', 'a'].max()", "c"),
    # semver
    ("semver('1.2.3').isGreaterThan(semver('1.2.0'))", True),
    ("semver('1.2.3-rc.1').compareTo(semver('1.2.3'))", -1),
    ("semver('1.4.7').major() * 100 + semver('1.4.7').minor() * 10 + semver('1.4.7').patch()", 147),
    ("isSemver('1.2.3')", True),
    ("isSemver('v1.2')", False),
    ("isSemver('v1.2', true)", True),
    ("semver('v1.2', true).minor()", 2),
    # the library's own extensions in the shared environment
    ("[3, 1, 2].sort()", [1, 2, 3]),
    ("math.greatest(1, 5, 3)", 5),
    ("base64.encode(b'hi')", "aGk="),
    ("sets.contains([1, 2], [2])", True),
    ("{'a': 1, 'b': 2}.all(k, v, v > 0)", True),
]

KYVERNO_CASES = [
    ("image('nginx').registry()", "index.docker.io"),
    ("image('nginx').repository()", "library/nginx"),
    ("image('nginx').identifier()", "latest"),
    ("image('corp.reg.com/team/app:1.0').registry()", "corp.reg.com"),
    ("image('corp.reg.com/team/app:1.0').tag()", "1.0"),
    (f"image('ghcr.io/a/b:1.0@{DIGEST}').identifier()", DIGEST),
    (f"image('ghcr.io/a/b:1.0@{DIGEST}').tag()", ""),
    (f"image('ghcr.io/a/b@{DIGEST}').containsDigest()", True),
    ("image('localhost:5000/app').registry()", "localhost:5000"),
    ("parseImageReference('ghcr.io/a/b:1.0').registry() == 'ghcr.io'", True),
    (f"parseImageReference('ghcr.io/a/b@{DIGEST}').containsDigest()", True),
    ("isImage('nginx:1.25')", True),
    ("isImage('NGINX')", False),
    ("jsonpatch.escapeKey('example.com/a~b')", "example.com~1a~0b"),
    ("parseServiceAccount('system:serviceaccount:team:builder')", {"Namespace": "team", "Name": "builder"}),
    ("parseServiceAccount('alice')", {"Namespace": "", "Name": ""}),
    ("json.unmarshal('{\"a\": [1, 2.5]}')", {"a": [1, 2.5]}),
    ("yaml.parse('a:\\n  - b\\n')", {"a": ["b"]}),
    ("yaml.parse('on: y\\nday: 2024-01-01')", {"true": True, "day": "2024-01-01"}),  # go-yaml v2, as JSON
    ("time.now() > timestamp('2024-01-01T00:00:00Z')", True),
]


@pytest.mark.parametrize(("text", "expected"), CASES + KYVERNO_CASES)
def test_function(text, expected):
    result = run(text)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("quantity('12 apples')", "quantities must match the regular expression"),
        ("quantity('1.5').asInteger()", "cannot convert value to integer"),
        ("ip('1.2.3')", "parse error"),
        ("cidr('10.0.0.0')", "parse error"),
        ("url('not a url')", "URL parse error"),
        ("'x'.find('(')", "error parsing regexp"),
        ("[].min()", "min called on empty list"),
        ("[1, 'a'].max()", "one comparable kind"),
        ("semver('1.2')", "No Major.Minor.Patch"),
        ("image('UPPER/Case')", "could not parse reference"),
        ("json.unmarshal('{')", "failed to unmarshal JSON"),
        # YAML is read as go-yaml v2 reads it, with its limits: errors, never a hang or a crash
        ("yaml.parse('a: !!int x')", "failed to parse YAML: yaml: cannot decode !!str `x` as a !!int"),
        (f"yaml.parse('a: {'[' * 5000}{']' * 5000}')", "failed to parse YAML: yaml: nested more than 1024 levels deep"),
        ("yaml.parse('" + "\\n".join(["l0: &l0 [x, x, x, x, x, x, x, x, x]"] + [
            f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]" for level in range(1, 9)]) + "')",
         "failed to parse YAML: yaml: document contains excessive aliasing"),
        ("{'a': 1}.isGreaterThan({'b': 2})", "no such overload"),  # a plain map is no quantity
        ("quantity('1').isGreaterThan(semver('1.0.0'))", "no such overload: expected a quantity"),
    ],
)
def test_function_errors_are_evaluation_errors(text, fragment):
    with pytest.raises(CelEvaluationError) as caught:
        run(text)
    assert fragment in caught.value.message


def test_opaque_values_are_tagged_maps():
    assert run("quantity('1Gi')") == {"@quantity": "1Gi"}
    assert run("cidr('10.0.0.0/8')") == {"@cidr": "10.0.0.0/8"}


def test_kyverno_adds_helpers_to_kubernetes_and_refuses_the_authorizer():
    kubernetes = {function.name for function in KUBERNETES}
    kyverno = {function.name for function in KYVERNO}
    assert {"quantity", "image", "format.named", "validate", "allowed"} <= kubernetes  # image: Kubernetes 1.33
    assert {"json.unmarshal", "time.now"} <= kyverno - kubernetes
    assert {"allowed", "check", "group"}.isdisjoint(kyverno)  # Kyverno's CEL policies refuse the authorizer


def _policy_expressions() -> set[str]:
    """Every CEL expression of the Kyverno CEL policies (and admission policies) in the CEL tier."""
    root = CONFORMANCE / "kyverno-policies"
    manifest = json.loads((root / "manifest.json").read_text())
    paths = set()
    for test in manifest["celTests"]:
        for name in test.get("files", []):
            for path in (root / name, root / test["path"] / name):
                if path.suffix in (".yaml", ".yml") and path.is_file():
                    paths.add(path.resolve())
    found: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for key, item in node.items():
                if key in ("expression", "messageExpression") and isinstance(item, str):
                    found.add(item)
                else:
                    walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(paths):
        text = path.read_text(encoding="utf-8")
        if "policies.kyverno.io" not in text and "admissionregistration" not in text:
            continue
        for document in yaml.load_all(text, Loader=loader):
            if isinstance(document, dict) and "Policy" in str(document.get("kind")):
                walk(document.get("spec", {}))
    return found


POLICY_VARIABLES = ("object", "oldObject", "request", "variables", "params", "namespaceObject", "authorizer",
                    "exceptions")


def test_kyverno_policies_cel_tier_compiles_except_what_is_missing():
    env = environment("kyverno-policies", POLICY_VARIABLES)
    outcomes: Counter[str] = Counter()
    for text in sorted(_policy_expressions()):
        try:
            env.compile(text)
        except CelCompileError as error:
            if "JSONPatch" in error.message or "Object." in error.message:
                outcomes["JSONPatch{...}, Object{...}"] += 1
            elif "GetMetadata" in error.message or "'Get'" in error.message:
                outcomes["resource.*, image.GetMetadata, imagedata, http, globalContext, authorizer"] += 1
            else:
                pytest.fail(f"{error.message}\n{text}")
        else:
            outcomes["compiles"] += 1
    assert set(outcomes) - {"compiles"} <= set(MISSING)
    assert outcomes["compiles"] >= 170, outcomes  # of 240 distinct expressions at the vendored commit
