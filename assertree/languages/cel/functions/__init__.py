"""Kubernetes' and Kyverno's CEL function libraries, written in Python so policies run offline.

`KUBERNETES` holds what k8s.io/apiserver/pkg/cel/library offers an admission
policy: quantity, ip/cidr, url, regex (``find``/``findAll``), lists
(``isSorted``/``sum``/``min``/``max``), semver, format (``format.dns1123Label()``
...), image references, ``jsonpatch.escapeKey``, and the authorizer (`authz`, which has no opinion
offline). `KYVERNO` is the same without the authorizer (Kyverno's CEL
policies refuse it), plus Kyverno's offline helpers (pkg/cel/libs):
``json.unmarshal``, ``yaml.parse``, ``parseServiceAccount``, ``time.now``. Pair them with the library's extensions
(``strings``, ``sets``, ``optional``, ``two-var-comprehensions``; Kyverno adds
``lists``, ``math``, ``encoders``), which the CEL library implements itself.

Chosen by use: in the CEL tier of tests/conformance/data/kyverno-policies
(347 distinct expressions) the non-standard calls are ``jsonpatch.escapeKey``
(5), ``image.GetMetadata`` (5), ``image(...)``/``.registry()`` (4),
``resource.Get`` (3), ``parseServiceAccount`` (1) and ``time.now`` (1);
everything else is the standard library, strings, optionals and macros.

Missing, and why (`MISSING`): what needs a cluster or a registry
(``resource.*``, ``image.GetMetadata``/image data, ``http.*``,
``globalContext``; the authorizer in Kyverno's policies). Typed-object
constructors (``Object{...}``, ``JSONPatch{...}``) and list
``indexOf``/``lastIndexOf`` need a source rewrite first
(`assertree.languages.cel.rewrite`), and so do the functions that return an
optional (``format.named``, ``<format>.validate``). ``string(ip)`` and
``string(cidr)`` cannot be declared (the CEL library accepts one declaration
per function name and the standard library owns ``string``): `conversions`
rewrites ``string(...)`` calls to reach `network`'s ``__string_of_opaque__``.
Opaque values are tagged maps (`declare`): ``type(quantity('1'))`` is map and
``==`` compares their text.
"""

from __future__ import annotations

from assertree.languages.cel.functions import (
    authz,
    format,
    images,
    jsonpatch,
    kyverno,
    lists,
    network,
    quantity,
    regex,
    semver,
    urls,
)
from assertree.languages.cel.functions.declare import build

__all__ = ["KUBERNETES", "KYVERNO", "MISSING"]

_SHARED = (*quantity.DECLARATIONS, *network.DECLARATIONS, *urls.DECLARATIONS, *regex.DECLARATIONS,
           *lists.DECLARATIONS, *semver.DECLARATIONS, *format.DECLARATIONS, *images.DECLARATIONS,
           *jsonpatch.DECLARATIONS)

KUBERNETES = build((*_SHARED, *authz.DECLARATIONS))
KYVERNO = build((*_SHARED, *kyverno.DECLARATIONS))

MISSING = {
    "resource.*, image.GetMetadata, imagedata, http, globalContext, authorizer": "need a cluster or network",
    "JSONPatch{...}, Object{...}": "mutating policies build typed objects: the CEL library needs protobuf types "
                                   "(compiled after assertree.languages.cel.rewrite makes them maps)",
    "list.indexOf, list.lastIndexOf": "the strings extension owns these names; one declaration per name "
                                      "(compiled after assertree.languages.cel.rewrite renames them)",
}
