"""is_external_url, decided without the network, and the Go URL parser behind it."""

from __future__ import annotations

import pytest

from assertree import jp
from assertree.jp.functions.urls import parse_url


def external(url: str) -> bool:
    return jp.search("is_external_url(@)", url)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # IP literals by range (Go's IsLoopback / IsPrivate)
        ("https://127.255.0.1:8443/x", False),
        ("http://172.31.255.255", False),
        ("http://172.32.0.1", True),
        ("http://169.254.169.254/latest/meta-data", True),  # link-local is not "private" in Go
        ("http://0.0.0.0", True),
        ("http://100.64.0.1", True),  # shared address space neither
        ("http://[::ffff:10.0.0.1]", False),  # IPv4-mapped counts as IPv4
        ("http://[fe80::1%25eth0]", True),  # zoned link-local
        ("http://[fc00::1]:80", False),
        ("http://user:pw@10.0.0.1:80@8.8.8.8", True),  # the last @ ends the user info
        # names, without resolving them
        ("http://localhost", False),
        ("http://LOCALHOST.:8080", False),
        ("http://api.localhost", False),
        ("http://redis:6379", False),  # single label: a cluster service or intranet host
        ("http://web.default.svc", False),
        ("http://web.default.svc.cluster.local", False),
        ("http://printer.local", False),
        ("http://db.internal", False),
        ("http://router.home.arpa", False),
        ("https://example.com", True),
        ("https://kyverno.io/docs", True),
        ("http://web.default", True),  # cannot be told apart from a public name
        ("//example.com/x", True),  # scheme-relative: the host is still there
    ],
)
def test_decisions(url, expected):
    assert external(url) is expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("example.com", "no host name"),
        ("mailto:ops@example.com", "no host name"),
        ("", "no host name"),
        ("http://exa mple.com", 'parse "http://exa mple.com": invalid character " " in host name'),
        ("http://example.com:80a", 'parse "http://example.com:80a": invalid port ":80a" after host'),
        ("http://[::1", "parse \"http://[::1\": missing ']' in host"),
        (":foo", 'parse ":foo": missing protocol scheme'),
        ("http://%41.com", 'parse "http://%41.com": invalid URL escape "%41"'),
        ("http://a\x7fb", 'parse "http://a\x7fb": net/url: invalid control character in URL'),
        ("a:b/c", "no host name"),  # a scheme "a" with an opaque part
        ("1a:b", 'parse "1a:b": first path segment in URL cannot contain colon'),
    ],
)
def test_errors(url, message):
    with pytest.raises(jp.JMESPathError) as caught:
        external(url)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("url", "fields"),
    [
        ("HTTP://h/p?q=1#f", {"scheme": "http", "host": "h", "path": "/p", "raw_query": "q=1", "fragment": "f"}),
        ("http://h/a%2Fb", {"path": "/a/b", "raw_path": "/a%2Fb"}),
        ("http://h/a b", {"path": "/a b", "raw_path": "/a b"}),  # Go escapes spaces, so it keeps the raw form
        ("file:///etc/hosts", {"host": "", "path": "/etc/hosts", "omit_host": False}),
        ("unix:/var/run/x.sock", {"path": "/var/run/x.sock", "omit_host": True}),
        ("urn:isbn:123", {"opaque": "isbn:123"}),
        ("http://h?", {"force_query": True}),
        ("http://u:p%40@h", {"user": ("u", "p@"), "host": "h"}),
        ("http://h#a%20b", {"fragment": "a b", "raw_fragment": ""}),
        ("http://h#a!b", {"fragment": "a!b", "raw_fragment": ""}),
    ],
)
def test_go_url_fields(url, fields):
    parsed = parse_url(url)
    assert {name: getattr(parsed, name) for name in fields} == fields
