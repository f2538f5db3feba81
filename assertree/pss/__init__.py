"""The Kubernetes Pod Security Standards checks (``k8s.io/pod-security-admission``), offline.

Every check of upstream's ``policy/`` package, at every policy version
(v1.0 onwards and ``latest``) and level (privileged, baseline, restricted),
written in Python from upstream's Go as the reference and held to
upstream's own 4,537 pass/fail fixtures
(``tests/conformance/data/pod-security``).

It is a package of its own, not part of the Kyverno language, because the
standards are Kubernetes', not Kyverno's: nothing here knows Kyverno's
control names, exclusions or messages (``languages/kyverno/pod_security``
adds them), and any other front end (another policy language, a Python
caller checking Pods) can use the checks without reaching into a language
package, which languages may not do to each other.

Stages: `pod` decodes a Pod as Go's types read it, `checks` holds one
function per check revision, `registry` selects the checks of a level and
version once and runs them.

    >>> from assertree.pss import decode_pod, evaluate, parse_version
    >>> pod = decode_pod({"name": "web"}, {"containers": [{"name": "app", "securityContext": {"privileged": True}}]})
    >>> [violation.check for violation in evaluate(pod, "baseline", parse_version("v1.30"))]
    ['privileged']
"""

from assertree.pss.pod import CONTAINER_LISTS, Pod, PodDecodeError, decode_pod, make_pod, type_error
from assertree.pss.registry import CHECKS, SelectedCheck, checks_for, evaluate, newest_version, run_checks
from assertree.pss.versions import BASELINE, LATEST, LEVELS, PRIVILEGED, RESTRICTED, Version, parse_level, parse_version
from assertree.pss.violations import FORBIDDEN, REQUIRED, FieldError, Violation, field_steps

__all__ = [
    "BASELINE",
    "CHECKS",
    "CONTAINER_LISTS",
    "FORBIDDEN",
    "LATEST",
    "LEVELS",
    "PRIVILEGED",
    "REQUIRED",
    "RESTRICTED",
    "FieldError",
    "Pod",
    "PodDecodeError",
    "SelectedCheck",
    "Version",
    "Violation",
    "checks_for",
    "decode_pod",
    "evaluate",
    "field_steps",
    "make_pod",
    "newest_version",
    "parse_level",
    "parse_version",
    "run_checks",
    "type_error",
]
