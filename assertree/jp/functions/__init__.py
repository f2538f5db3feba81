"""The function library, registered in kyverno-json's order, each module on first use.

kyverno-json builds one function table from three lists, later names replacing
earlier ones: go-jmespath's builtins (the 26 standard functions and 15
community additions), kyverno-json's own four, then Kyverno's library.
The builtins (`BASE_MODULES`) are imported with this package, before any
other module, so that the modules replacing a builtin (``replaces=True`` at
the registration: `items`, `replace`, `split`, `trim`, `sum`) find it. Every other module is imported
when one of its functions is first looked up, through `MODULE_OF`: a scan
whose policies call no time, certificate or YAML function never imports
those modules (or their libraries). `LIBRARY_MODULES` is the registration
order for loading everything; tests/functions/test_registry.py checks `MODULE_OF`
against the registrations.
"""

import importlib

BASE_MODULES = ("builtin", "community")
for _module in BASE_MODULES:  # the base table, registered before any module that replaces a name in it
    importlib.import_module(f"{__name__}.{_module}")

LIBRARY_MODULES = ("kyverno_json", "regex", "strings", "encoding", "objects", "arithmetic", "times", "semver", "x509",
                   "images", "urls", "randomness")

# Which module registers each function that is not a builtin (or replaces one).
MODULE_OF = {
    # kyverno_json
    "at": "kyverno_json", "concat": "kyverno_json", "json_parse": "kyverno_json", "wildcard": "kyverno_json",
    # regex
    "pattern_match": "regex", "regex_match": "regex", "regex_replace_all": "regex",
    "regex_replace_all_literal": "regex",
    # strings
    "compare": "strings", "equal_fold": "strings", "path_canonicalize": "strings", "replace": "strings",
    "replace_all": "strings", "split": "strings", "to_boolean": "strings", "to_lower": "strings",
    "to_upper": "strings", "trim": "strings", "trim_prefix": "strings", "truncate": "strings",
    # encoding
    "base64_decode": "encoding", "base64_encode": "encoding", "md5": "encoding", "parse_json": "encoding",
    "parse_yaml": "encoding", "sha1": "encoding", "sha256": "encoding",
    # objects
    "items": "objects", "label_match": "objects", "lookup": "objects", "object_from_lists": "objects",
    # arithmetic
    "add": "arithmetic", "divide": "arithmetic", "modulo": "arithmetic", "multiply": "arithmetic",
    "round": "arithmetic", "subtract": "arithmetic", "sum": "arithmetic",
    # times
    "time_add": "times", "time_after": "times", "time_before": "times", "time_between": "times",
    "time_diff": "times", "time_now": "times", "time_now_utc": "times", "time_parse": "times",
    "time_since": "times", "time_to_cron": "times", "time_truncate": "times", "time_utc": "times",
    # semver
    "semver_compare": "semver",
    # x509
    "x509_decode": "x509",
    # images
    "image_normalize": "images",
    # urls
    "is_external_url": "urls",
    # randomness
    "random": "randomness",
}
