"""image_normalize beyond the shared vectors."""

from __future__ import annotations

import pytest

from assertree import jp

DIGEST = "sha256:" + "a" * 64
PREFIX = "JMESPath function 'image_normalize': bad image: "


def normalize(image: str) -> str:
    return jp.search("image_normalize(@)", image)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("library/nginx", "docker.io/library/nginx:latest"),  # no dot: the default registry is added
        ("nginx:1.25-alpine", "docker.io/nginx:1.25-alpine"),
        (f"nginx@{DIGEST}", f"docker.io/nginx@{DIGEST}"),
        (f"nginx:1.2@{DIGEST}", f"docker.io/nginx@{DIGEST}"),  # the digest wins, the tag is dropped
        ("localhost/app", "localhost/app:latest"),
        ("localhost:5000/team/app:v1", "localhost:5000/team/app:v1"),
        ("registry.example.com:443/a/b/c", "registry.example.com:443/a/b/c:latest"),
        ("[::1]:5000/app", "[::1]:5000/app:latest"),
        ("Registry/app", "Registry/app:latest"),  # upper case marks a host, as in Kyverno
        ("my_org/app__x", "docker.io/my_org/app__x:latest"),
        ("a" * 40 + ":" + "t" * 128, "docker.io/" + "a" * 40 + ":" + "t" * 128),
    ],
)
def test_normalized(image, expected):
    assert normalize(image) == expected


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        (
            "Nginx",
            (
                "docker.io/Nginx, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: "
                "repository name must be lowercase"
            ),
        ),
        (
            "nginx:",
            (
                "docker.io/nginx:, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: "
                "invalid reference format"
            ),
        ),
        ("nginx:" + "t" * 129, None),  # tags are at most 128 characters
        ("ghcr.io/app@sha256:abc", None),
        (
            f"app@sha256:{'A' * 64}",
            (
                f"docker.io/app@sha256:{'A' * 64}, defaultRegistry: docker.io, "
                "enableDefaultRegistryMutation: true: invalid checksum digest format"
            ),
        ),
        (f"app@sha256:{'a' * 65}", None),
        (
            f"app@md5:{'a' * 32}",
            (
                f"docker.io/app@md5:{'a' * 32}, defaultRegistry: docker.io, "
                "enableDefaultRegistryMutation: true: unsupported digest algorithm"
            ),
        ),
        ("a/" + "b" * 260, None),  # repository names are at most 255 characters
        ("app//x", None),
        (" nginx", None),
    ],
)
def test_rejected(image, reason):
    with pytest.raises(jp.JMESPathError) as caught:
        normalize(image)
    message = str(caught.value)
    assert message.startswith(PREFIX)
    if reason is not None:
        assert message == PREFIX + reason


def test_digest_length_error_text():
    with pytest.raises(jp.JMESPathError) as caught:
        normalize(f"app@sha256:{'a' * 65}")
    assert str(caught.value).endswith("invalid checksum digest length")
