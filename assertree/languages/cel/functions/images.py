"""Kyverno's image library (kyverno/sdk extensions/cel/libs/image, formerly kyverno/kyverno pkg/cel/libs/image):
``parseImageReference(s)`` (and ``image(s)``, its deprecated alias), ``isImage(s)`` and the methods.

``registry``, ``repository``, ``identifier``, ``tag``, ``digest`` and
``containsDigest`` read a reference as go-containerregistry's
``name.ParseReference`` does with its defaults: Docker Hub is
``index.docker.io``, a one-part Docker Hub repository gains ``library/``, the
identifier is the digest if there is one, else the tag (``latest`` when
absent), and a reference with a digest has no tag. The grammar is the
Docker reference grammar shared with Kyverno's JMESPath ``image_normalize``
(`assertree.jp.functions.images.parse_reference`).
"""

from __future__ import annotations

from assertree.jp.functions.images import ImageReferenceError, parse_reference
from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text, succeeds

TAG = "image"
DOCKER_HUB = "index.docker.io"


def parts(text: str) -> dict[str, str]:
    """registry, repository, identifier, tag and digest of a reference; FunctionError if invalid."""
    try:
        domain, path, tag, digest = parse_reference(text)
    except ImageReferenceError as error:
        raise FunctionError(f"could not parse reference: {text}: {error}") from None
    registry = DOCKER_HUB if domain in ("", "docker.io") else domain
    if registry == DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    if digest:
        tag = ""
    elif not tag:
        tag = "latest"
    return {"registry": registry, "repository": path, "identifier": digest or tag, "tag": tag, "digest": digest}


def _field(name: str):
    return lambda value: parts(opaque_text(value, TAG))[name]


DECLARATIONS = (
    *(Declaration(name, ("string",), "map", lambda text: (parts(text), opaque(TAG, text))[1])
      for name in ("parseImageReference", "image")),  # the sdk's name, and its deprecated alias
    Declaration("isImage", ("string",), "bool", lambda text: succeeds(parts, text)),
    *(Declaration(name, ("map",), "string", _field(name), member=True, receiver=TAG)
      for name in ("registry", "repository", "identifier", "tag", "digest")),
    Declaration("containsDigest", ("map",), "bool", lambda v: bool(parts(opaque_text(v, TAG))["digest"]),
                member=True, receiver=TAG),
)
