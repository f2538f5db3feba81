"""The function library, registered on import in kyverno-json's order.

kyverno-json builds one function table from three lists, later names replacing
earlier ones: go-jmespath's builtins (the 26 standard functions and 15
community additions), kyverno-json's own four, then Kyverno's library. The
imports below keep that order; modules that replace a builtin say so with
``replaces=True`` at the registration.
"""

from assertree.jp.functions import (  # noqa: F401, I001  (imported for their registrations, in this order)
    builtin,
    community,
    kyverno_json,
    strings,
    regex,
    encoding,
    objects,
    arithmetic,
    times,
    semver,
    x509,
    images,
    urls,
    randomness,
)
