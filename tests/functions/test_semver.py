"""semver_compare (blang/semver v4) beyond the shared vectors."""

from __future__ import annotations

import pytest

from assertree import jp
from assertree.jp.functions.semver import compare, parse_version


def satisfies(version: str, range_: str) -> bool:
    return jp.search("semver_compare(v, r)", {"v": version, "r": range_})


@pytest.mark.parametrize(
    ("version", "range_", "expected"),
    [
        # OR of AND-groups, AND binds tighter
        ("3.5.0", ">1.0.0 <2.0.0 || >=3.0.0", True),
        ("2.5.0", ">1.0.0 <2.0.0 || >=3.0.0", False),
        # != and ! are the same comparator
        ("1.2.3", "!=1.2.3 || =1.2.3", True),
        ("1.2.4", ">=1.0.0 !1.2.4", False),
        # a space after <, >, = is glued to the version, more than one too
        ("1.2.3", ">=   1.2.0 <  2.0.0", True),
        # one-character words are dropped by blang's splitter: this is just ">1.0.0"
        ("0.5.0", ">1.0.0 1", False),
        ("1.5.0", ">1.0.0 1", True),
        # build metadata is ignored, in the version and in the range
        ("1.2.3+a", "=1.2.3+b", True),
        # prerelease ordering: numeric < alphanumeric, numeric by value, shorter first
        ("1.0.0-alpha", "<1.0.0-alpha.1", True),
        ("1.0.0-alpha.1", "<1.0.0-alpha.beta", True),
        ("1.0.0-2", "<1.0.0-10", True),
        ("1.0.0-beta.11", "<1.0.0-rc.1", True),
        ("1.0.0-rc.1", "<1.0.0", True),
        # prereleases are not excluded from ranges (unlike npm)
        ("2.0.0-rc.1", ">=1.0.0 <2.0.0", True),
        # wildcards
        ("1.3.0", "<=1.2.x", False),
        ("1.2.9", "<=1.2.x", True),
        ("1.9.9", "<1.x", False),
        ("0.9.9", "<1.x", True),
        ("1.9.9", "!=1.x", False),  # <1.0.0 AND >=2.0.0: never true
        ("1.0.5", "=1.x.x", True),  # 1.x.x is 1.0.x
        ("1.1.0", "==1.x.x", False),
        ("1.0.0", "~1.x", True),  # blang drops an unknown operator during wildcard expansion
        ("1.0.0", "1.0.0 || || 3.0.0", True),  # blang only fails when it reaches the empty group
        # an unparsable version is 0.0.0
        ("1.2", "=0.0.0", True),
        ("1.2.3.4", "=0.0.0", True),
        ("1.02.3", "<0.0.1", True),
        ("1.2.3-01", "=0.0.0", True),  # numeric prerelease with a leading zero
        ("", "0.0.0", True),
        ("18446744073709551616.0.0", "0.0.0", True),  # beyond uint64
        ("18446744073709551615.0.0", ">1.0.0", True),
    ],
)
def test_ranges(version, range_, expected):
    assert satisfies(version, range_) is expected


@pytest.mark.parametrize(
    ("range_", "message"),
    [
        ("", "Last element in range is '||'"),
        ("|| 1.0.0", "First element in range is '||'"),
        ("2.0.0 || || 3.0.0", "Could not evaluate range \"2.0.0 || || 3.0.0\": empty group between '||'"),
        ("~1.2.0", 'Could not parse Range "~1.2.0": Could not parse comparator "~" in "~1.2.0"'),
        ("=>1.2.0", 'Could not parse Range "=>1.2.0": Could not parse comparator "=>" in "=>1.2.0"'),
        (
            "1.0",
            'Could not parse Range "1.0": Could not parse version "1.0" in "1.0": No Major.Minor.Patch elements found',
        ),
        (
            ">=01.0.0",
            (
                'Could not parse Range ">=01.0.0": Could not parse version "01.0.0" in ">=01.0.0": '
                'Major number must not contain leading zeroes "01"'
            ),
        ),
        (
            "1.0.0-",
            'Could not parse Range "1.0.0-": Could not parse version "1.0.0-" in "1.0.0-": Prerelease is empty',
        ),
        (
            "1.0.0+",
            'Could not parse Range "1.0.0+": Could not parse version "1.0.0+" in "1.0.0+": Build meta data is empty',
        ),
        ("latest", 'Could not get version from string: "latest"'),
        ("x", "Last element in range is '||'"),  # one character: dropped, so the range is empty
        (">1.x.3", 'Could not get version from string: ">="'),  # no wildcard kind, so no upper bound
    ],
)
def test_range_errors(range_, message):
    with pytest.raises(jp.JMESPathError) as caught:
        satisfies("1.0.0", range_)
    assert str(caught.value) == message


def test_precedence_is_a_total_order_on_the_semver_spec_example():
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
    ]
    versions = [parse_version(v) for v in ordered]
    for i, a in enumerate(versions):
        for j, b in enumerate(versions):
            assert compare(a, b) == (i > j) - (i < j)
