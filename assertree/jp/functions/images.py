"""Kyverno's `image_normalize`: an image reference with its registry and tag made explicit.

Kyverno prefixes the default registry (``docker.io``, with registry mutation
on, its default configuration) unless the text before the first ``/`` looks
like a registry host (contains ``.`` or ``:``, is ``localhost``, or has upper
case letters), then parses the result with the Docker reference grammar of
github.com/distribution/reference. Unlike Docker's own normalisation no
``library/`` is added: ``nginx`` becomes ``docker.io/nginx:latest``. A
digest wins over a tag; with neither, the tag is ``latest``.

The grammar's regular expressions are transcribed from the reference's
documented grammar (Go's leftmost-first matching agrees with Python's here;
ASCII classes, whole-string matches). Digests are validated as
opencontainers/go-digest does for the sha256/384/512 algorithms Kyverno
links. Error texts are those libraries' own, inside Kyverno's ``bad image``
message.
"""

from __future__ import annotations

import re

from assertree.jp.errors import FunctionError
from assertree.jp.registry import function

DEFAULT_REGISTRY = "docker.io"

_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"

_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_NAME_PARTS = re.compile(rf"(?:({_DOMAIN})/)?({_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)", re.ASCII)
_DIGEST_ANCHORED = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+", re.ASCII)
_DIGEST_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_MAX = 255


class ImageReferenceError(ValueError):
    """A reference the Docker grammar rejects; the text is distribution/reference's message."""


def _with_default_registry(image: str) -> str:
    first, slash, _ = image.partition("/")
    looks_like_host = any(c in first for c in ".:") or first == "localhost" or first.lower() != first
    return image if slash and looks_like_host else f"{DEFAULT_REGISTRY}/{image}"


def parse_reference(text: str) -> tuple[str, str, str, str]:
    """Split a reference into (domain, path, tag, digest), raising ImageReferenceError as Go does."""
    match = _REFERENCE.fullmatch(text)
    if match is None:
        if text == "":
            raise ImageReferenceError("repository name must have at least one component")
        if _REFERENCE.fullmatch(text.lower()) is not None:
            raise ImageReferenceError("repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    name, tag, digest = match.group(1), match.group(2) or "", match.group(3) or ""
    if len(name) > _NAME_MAX:
        raise ImageReferenceError(f"repository name must not be more than {_NAME_MAX} characters")
    parts = _NAME_PARTS.fullmatch(name)
    assert parts is not None  # group 1 of _REFERENCE is _NAME, the same pattern as _NAME_PARTS
    domain, path = parts.group(1) or "", parts.group(2)
    if digest:
        _validate_digest(digest)
    return domain, path, tag, digest


def _validate_digest(digest: str) -> None:
    algorithm, _, encoded = digest.partition(":")
    expected = _DIGEST_HEX_LENGTHS.get(algorithm)
    if expected is None:
        if _DIGEST_ANCHORED.fullmatch(digest) is None:
            raise ImageReferenceError("invalid checksum digest format")
        raise ImageReferenceError("unsupported digest algorithm")
    if len(encoded) != expected:
        raise ImageReferenceError("invalid checksum digest length")
    if re.fullmatch(r"[a-f0-9]+", encoded) is None:
        raise ImageReferenceError("invalid checksum digest format")


@function("image_normalize(image: string) -> string")
def image_normalize(image):
    """The image with registry and tag made explicit: `nginx` -> `docker.io/nginx:latest`."""
    full = _with_default_registry(image)
    try:
        domain, path, tag, digest = parse_reference(full)
    except ImageReferenceError as error:
        reason = f"bad image: {full}, defaultRegistry: {DEFAULT_REGISTRY}, enableDefaultRegistryMutation: true: {error}"
        raise FunctionError.kyverno("image_normalize", reason) from None
    repository = f"{domain}/{path}" if domain else path
    return f"{repository}@{digest}" if digest else f"{repository}:{tag or 'latest'}"
