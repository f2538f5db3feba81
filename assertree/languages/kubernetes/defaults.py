"""The defaults the apiserver fills into built-in objects before any admission policy sees them.

A manifest rarely says ``imagePullPolicy`` or a Service port's ``targetPort``;
the apiserver decodes it with its defaulting functions before admission, so a
policy in a cluster reads ``container.imagePullPolicy == 'IfNotPresent'`` and
``port.targetPort == 80`` where the file says nothing. `with_defaults` gives
the same view offline, for the fields policies read most, as Kubernetes' v1
defaulters set them (k8s.io/kubernetes pkg/apis/core/v1/defaults.go,
apps/v1/defaults.go, batch/v1/defaults.go):

- every pod spec (a Pod's, and the template of a Deployment, StatefulSet,
  DaemonSet, ReplicaSet, ReplicationController, Job, CronJob or PodTemplate):
  ``restartPolicy``, ``dnsPolicy``, ``schedulerName``,
  ``terminationGracePeriodSeconds``, ``securityContext: {}``,
  ``enableServiceLinks``; each container's (init and ephemeral too)
  ``imagePullPolicy`` (``Always`` for ``:latest`` or no tag, else
  ``IfNotPresent``), ``terminationMessagePath``/``Policy``, port
  ``protocol``, probe timings, and resource ``requests`` copied from
  ``limits`` where only limits are set; ``defaultMode`` of secret,
  configMap, downwardAPI and projected volumes;
- Deployment, StatefulSet, DaemonSet, ReplicaSet: ``replicas``, update
  strategies, ``revisionHistoryLimit``, ``progressDeadlineSeconds``,
  ``podManagementPolicy``;
- Job and CronJob: ``backoffLimit``, ``completions``/``parallelism``,
  ``completionMode``, ``suspend``, ``concurrencyPolicy``, history limits;
- Service: ``type``, ``sessionAffinity``, port ``protocol`` and
  ``targetPort`` (the port), traffic policies.

What admission plugins add (the ServiceAccount plugin's token volume, a
LimitRange's defaults) and what the registry sets (cluster IPs, UIDs) is not
there. Written here because no Python library carries Kubernetes' defaulters.

A mutation patches the object as the apiserver sees it, defaults included;
`without_defaults` takes them out again where the patch left them as they
were, so a fix written back to a manifest changes what the policy changed and
nothing else.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

__all__ = ["with_defaults", "without_defaults"]

_PROBE = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}


def _set(target: dict, key: str, value: Any) -> None:
    """``key`` set to `value` where it is absent or null (Go's zero value for a pointer)."""
    if target.get(key) is None:
        target[key] = value


def _dicts(value: Any) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _pull_policy(image: Any) -> str:
    text = image if isinstance(image, str) else ""
    if "@" in text:
        return "IfNotPresent"
    tag = text.rpartition("/")[2].partition(":")[2]
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _container(container: dict) -> None:
    _set(container, "imagePullPolicy", _pull_policy(container.get("image")))
    _set(container, "terminationMessagePath", "/dev/termination-log")
    _set(container, "terminationMessagePolicy", "File")
    for port in _dicts(container.get("ports")):
        _set(port, "protocol", "TCP")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(key)
        if isinstance(probe, dict):
            for field, value in _PROBE.items():
                _set(probe, field, value)
            http = probe.get("httpGet")
            if isinstance(http, dict):
                _set(http, "path", "/")
                _set(http, "scheme", "HTTP")
    resources = container.get("resources")
    limits = resources.get("limits") if isinstance(resources, dict) else None
    if isinstance(resources, dict) and isinstance(limits, dict) and limits:
        requests = resources.get("requests")
        if not isinstance(requests, dict):
            requests = resources["requests"] = {}
        for name, quantity in limits.items():
            requests.setdefault(name, quantity)


def _pod_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    _set(spec, "restartPolicy", "Always")
    _set(spec, "dnsPolicy", "ClusterFirst")
    _set(spec, "schedulerName", "default-scheduler")
    _set(spec, "terminationGracePeriodSeconds", 30)
    _set(spec, "securityContext", {})
    _set(spec, "enableServiceLinks", True)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(key)):
            _container(container)
            if spec.get("hostNetwork") is True:
                for port in _dicts(container.get("ports")):
                    _set(port, "hostPort", port.get("containerPort"))
    for volume in _dicts(spec.get("volumes")):
        for source in ("secret", "configMap", "downwardAPI", "projected"):
            if isinstance(volume.get(source), dict):
                _set(volume[source], "defaultMode", 0o644)
        if isinstance(volume.get("hostPath"), dict):
            _set(volume["hostPath"], "type", "")


def _template(owner: Any) -> None:
    template = owner.get("template") if isinstance(owner, dict) else None
    if isinstance(template, dict):
        _pod_spec(template.get("spec"))


def _pod(value: dict) -> None:
    _pod_spec(value.get("spec"))


def _rolling(spec: dict, key: str, update: dict) -> None:
    strategy = spec.get(key)
    if not isinstance(strategy, dict):
        strategy = spec[key] = {}
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            rolling = strategy["rollingUpdate"] = {}
        for field, value in update.items():
            _set(rolling, field, value)


def _deployment(value: dict) -> None:
    spec = value.get("spec")
    if not isinstance(spec, dict):
        return
    _set(spec, "replicas", 1)
    _rolling(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
    _set(spec, "revisionHistoryLimit", 10)
    _set(spec, "progressDeadlineSeconds", 600)
    _template(spec)


def _stateful_set(value: dict) -> None:
    spec = value.get("spec")
    if not isinstance(spec, dict):
        return
    _set(spec, "replicas", 1)
    _set(spec, "podManagementPolicy", "OrderedReady")
    strategy = spec.get("updateStrategy")
    if not isinstance(strategy, dict):
        strategy = spec["updateStrategy"] = {}
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(strategy.get("rollingUpdate"), dict):
        _set(strategy["rollingUpdate"], "partition", 0)
    _set(spec, "revisionHistoryLimit", 10)
    _set(spec, "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _template(spec)


def _daemon_set(value: dict) -> None:
    spec = value.get("spec")
    if not isinstance(spec, dict):
        return
    _rolling(spec, "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0})
    _set(spec, "revisionHistoryLimit", 10)
    _template(spec)


def _replicated(value: dict) -> None:  # ReplicaSet, ReplicationController
    spec = value.get("spec")
    if isinstance(spec, dict):
        _set(spec, "replicas", 1)
        _template(spec)


def _job_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = spec["parallelism"] = 1
    _set(spec, "parallelism", 1)
    _set(spec, "backoffLimit", 6)
    _set(spec, "completionMode", "NonIndexed")
    _set(spec, "suspend", False)
    _template(spec)


def _job(value: dict) -> None:
    _job_spec(value.get("spec"))


def _cron_job(value: dict) -> None:
    spec = value.get("spec")
    if not isinstance(spec, dict):
        return
    _set(spec, "concurrencyPolicy", "Allow")
    _set(spec, "suspend", False)
    _set(spec, "successfulJobsHistoryLimit", 3)
    _set(spec, "failedJobsHistoryLimit", 1)
    job = spec.get("jobTemplate")
    if isinstance(job, dict):
        _job_spec(job.get("spec"))


def _pod_template(value: dict) -> None:
    _template(value)


def _service(value: dict) -> None:
    spec = value.get("spec")
    if not isinstance(spec, dict):
        return
    _set(spec, "type", "ClusterIP")
    _set(spec, "sessionAffinity", "None")
    for port in _dicts(spec.get("ports")):
        _set(port, "protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        _set(spec, "externalTrafficPolicy", "Cluster")
    if spec["type"] != "ExternalName":
        _set(spec, "internalTrafficPolicy", "Cluster")


_DEFAULTERS: dict[tuple[str, str], Callable[[dict], None]] = {
    ("v1", "Pod"): _pod, ("v1", "PodTemplate"): _pod_template, ("v1", "Service"): _service,
    ("v1", "ReplicationController"): _replicated,
    ("apps/v1", "Deployment"): _deployment, ("apps/v1", "StatefulSet"): _stateful_set,
    ("apps/v1", "DaemonSet"): _daemon_set, ("apps/v1", "ReplicaSet"): _replicated,
    ("batch/v1", "Job"): _job, ("batch/v1", "CronJob"): _cron_job,
}


def with_defaults(value: Any) -> Any:
    """`value` with the apiserver's defaults filled in (a copy), or `value` itself when none apply."""
    if not isinstance(value, dict):
        return value
    defaulter = _DEFAULTERS.get((str(value.get("apiVersion")), str(value.get("kind"))))
    if defaulter is None:
        return value
    defaulted = copy.deepcopy(value)
    defaulter(defaulted)
    return defaulted


_ABSENT = object()


def without_defaults(original: Any, defaulted: Any, patched: Any) -> Any:
    """`patched` (a patch applied to `defaulted`, the defaulted view of `original`) without the values
    defaulting added that the patch left as they were: the patch's changes made to `original`."""
    if isinstance(patched, dict) and isinstance(defaulted, dict):
        base = original if isinstance(original, dict) else {}
        out = {}
        for key, value in patched.items():
            before = base.get(key, _ABSENT)
            if before is _ABSENT and key in defaulted and value == defaulted[key]:
                continue  # a default, untouched
            out[key] = without_defaults(None if before is _ABSENT else before, defaulted.get(key), value)
        return out
    if isinstance(patched, list) and isinstance(defaulted, list) and isinstance(original, list) \
            and len(defaulted) == len(original):  # defaulting never adds or drops an element
        names = _first_names(defaulted)
        return [without_defaults(*_counterpart(original, defaulted, patched, index, names))
                for index in range(len(patched))]
    if patched == defaulted and original is not None:
        return original
    return patched


def _first_names(elements: list) -> dict[Any, int] | None:
    """The position of the first element of each ``name`` (an element that is a map without one counts as
    named None), so that finding an element's counterpart takes one look, not a scan of the list (20,000
    elements took minutes); None when a name cannot be hashed (then each is scanned for)."""
    first: dict[Any, int] = {}
    try:
        for position, element in enumerate(elements):
            if isinstance(element, dict):
                first.setdefault(element.get("name"), position)
    except TypeError:
        return None
    return first


def _counterpart(original: list, defaulted: list, patched: list, index: int,
                 names: dict[Any, int] | None) -> tuple[Any, Any, Any]:
    """(the original element, its defaulted view, the patched element) for ``patched[index]``: the element of
    the same ``name`` when the elements are named (a patch may insert), else the one at the same index."""
    item = patched[index]
    found: int | None = None
    if isinstance(item, dict) and "name" in item:
        try:
            found = names.get(item["name"]) if names is not None else None
        except TypeError:  # a name that cannot be hashed: no element's name was one either
            found = None
        if names is None:
            found = next((position for position, element in enumerate(defaulted)
                          if isinstance(element, dict) and element.get("name") == item["name"]), None)
    if found is not None:
        return original[found], defaulted[found], item
    if index < len(defaulted) and not (isinstance(item, dict) and "name" in item):
        return original[index], defaulted[index], item
    return None, None, item  # an element the patch added: kept as it made it
