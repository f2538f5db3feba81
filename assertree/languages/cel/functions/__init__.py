"""Kubernetes' and Kyverno's CEL function libraries, written in Python so policies run offline.

`KUBERNETES` holds what k8s.io/apiserver/pkg/cel/library offers that needs
no cluster: quantity, ip/cidr, url, regex (``find``/``findAll``), lists
(``isSorted``/``sum``/``min``/``max``) and semver. `KYVERNO` adds Kyverno's
offline helpers (pkg/cel/libs): image references, ``json.unmarshal``,
``yaml.parse``, ``jsonpatch.escapeKey``, ``parseServiceAccount``,
``time.now``. Pair them with the library's extensions (``strings``, ``sets``,
``lists``, ``optional``, ``two-var-comprehensions``, ``math``, ``regex``,
``encoders``), which the CEL library implements itself.

Chosen by use: in the CEL tier of tests/conformance/data/kyverno-policies
(347 distinct expressions) the non-standard calls are ``jsonpatch.escapeKey``
(5), ``image.GetMetadata`` (5), ``image(...)``/``.registry()`` (4),
``resource.Get`` (3), ``parseServiceAccount`` (1) and ``time.now`` (1);
everything else is the standard library, strings, optionals and macros.

Missing, and why (`MISSING`): the ``JSONPatch{...}``/``Object{...}``
constructors of mutating policies (62 of the 240 distinct expressions of the
kyverno-policies CEL tier); what needs a cluster or a registry
(``resource.*``, ``image.GetMetadata``/image data, ``http.*``,
``globalContext``, the authorizer) and Kubernetes' ``format`` library. List
``indexOf``/``lastIndexOf`` and ``string(ip)``/``string(cidr)`` cannot be
declared (the CEL library accepts one declaration per function name, and the
strings extension and the standard library own those names): Kyverno's
language renames list ``indexOf`` calls, and `conversions` rewrites
``string(...)`` calls to reach `network`'s ``__string_of_opaque__``. Opaque values are tagged maps
(`declare`): ``type(quantity('1'))`` is map and ``==`` compares their text.
"""

from __future__ import annotations

from assertree.languages.cel.functions import images, kyverno, lists, network, quantity, regex, semver, urls
from assertree.languages.cel.functions.declare import build

__all__ = ["KUBERNETES", "KYVERNO", "MISSING"]

_KUBERNETES = (*quantity.DECLARATIONS, *network.DECLARATIONS, *urls.DECLARATIONS, *regex.DECLARATIONS,
               *lists.DECLARATIONS, *semver.DECLARATIONS)

KUBERNETES = build(_KUBERNETES)
KYVERNO = build((*_KUBERNETES, *images.DECLARATIONS, *kyverno.DECLARATIONS))

MISSING = {
    "resource.*, image.GetMetadata, imagedata, http, globalContext, authorizer": "need a cluster or network",
    "format.*": "Kubernetes' named-format validators are not written yet",
    "JSONPatch{...}, Object{...}": "mutating policies build typed objects: the CEL library needs protobuf types",
    "list.indexOf, list.lastIndexOf": "the strings extension owns these names: an environment must rename the "
                                      "calls (Kyverno's does, `kyverno.cel_policies.rewrite`)",
}
