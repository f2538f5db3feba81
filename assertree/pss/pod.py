"""A Pod as the checks read it: the fields the Pod Security Standards look at, decoded as Go decodes them.

The admission plugin and Kyverno both read a Pod through k8s.io/api's Go types
(``encoding/json`` into ``corev1.Pod``), and the checks' verdicts depend on
that reading, so `decode_pod` reproduces it for the fields the checks read:

- a field of the wrong JSON type (``privileged: "yes"``, ``containers: {}``,
  ``hostPort: 80.5``) makes the Pod undecodable: `PodDecodeError`, with the
  field's path;
- ``null`` is Go's zero value: an absent pointer (``securityContext: null``
  is no security context), ``false``/``""``/``0`` for a plain field, an empty
  struct for a list item;
- a struct that is present is set even when empty: ``seccompProfile: {}`` is
  a profile whose type is ``""`` (which the seccomp checks refuse);
- a volume with no source is an ``emptyDir`` volume, as the API server
  defaults it before admission (``SetDefaults_Volume``); upstream's verdicts
  assume that default. No other API-server default is applied.

Only the fields the checks read are decoded and type-checked; any other field
is ignored (Go would also refuse a wrong type in a field no check reads: the
documentation lists this difference). The decoded values are plain dicts that
hold only the known keys whose value is set, so a check reads a plain field
with ``.get(key, zero)`` and a pointer field with ``.get(key)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assertree.jp.values import type_name

__all__ = ["CONTAINER_LISTS", "Pod", "PodDecodeError", "decode_pod", "make_pod", "type_error"]

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")  # the order checks visit them


class PodDecodeError(ValueError):
    """A field the checks read has a JSON type its Go field cannot hold."""

    def __init__(self, message: str, path: tuple) -> None:
        self.path = path
        super().__init__(message)


def type_error(expected: str, value: Any, path: tuple) -> PodDecodeError:
    """``must be a boolean, not a string`` at `path` (JSON's type names, as other assertree messages use them)."""
    actual = type_name(value)
    return PodDecodeError(f"must be {expected}, not {'an' if actual[0] in 'aeiou' else 'a'} {actual}", path)


_ABSENT = object()  # a field that decodes to nothing: the key is left out


class _Bool:
    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT
        if not isinstance(value, bool):
            raise type_error("a boolean", value, path)
        return value


class _Str:
    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT
        if not isinstance(value, str):
            raise type_error("a string", value, path)
        return value


class _Int:
    """A Go integer field (int32, int64): a JSON number with no fraction, within the type's range."""

    def __init__(self, bits: int) -> None:
        self.low, self.high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        self.name = f"int{bits}"

    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise type_error(f"an integer ({self.name})", value, path)
        if isinstance(value, float):
            if not value.is_integer():
                raise PodDecodeError(f"must be an integer ({self.name}), not {value!r}", path)
            value = int(value)
        if not self.low <= value <= self.high:
            raise PodDecodeError(f"must be an integer within {self.name}, not {value}", path)
        return value


class _Struct:
    """A Go struct: an object whose known fields are decoded; ``pointer`` structs decode null as absent."""

    def __init__(self, fields: dict[str, Any], *, pointer: bool = True) -> None:
        self.fields = fields
        self.pointer = pointer

    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT if self.pointer else {}
        if not isinstance(value, Mapping):
            raise type_error("an object", value, path)
        out = {}
        for key, kind in self.fields.items():
            item = value.get(key, _ABSENT)
            if item is _ABSENT:
                continue
            decoded = kind.decode(item, (*path, key))
            if decoded is not _ABSENT:
                out[key] = decoded
        return out


class _Object:
    """A pointer to a struct whose fields no check reads: only its presence counts."""

    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT
        if not isinstance(value, Mapping):
            raise type_error("an object", value, path)
        return True


class _List:
    """A Go slice: null is an absent (nil) slice; a null item is the item type's zero value."""

    def __init__(self, item: Any, zero: Any) -> None:
        self.item = item
        self.zero = zero

    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT
        if not isinstance(value, list):
            raise type_error("an array", value, path)
        out = []
        for index, item in enumerate(value):
            decoded = self.item.decode(item, (*path, index))
            out.append(self.zero if decoded is _ABSENT else decoded)
        return out


class _StringMap:
    def decode(self, value: Any, path: tuple) -> Any:
        if value is None:
            return _ABSENT
        if not isinstance(value, Mapping):
            raise type_error("an object", value, path)
        for key, item in value.items():
            if item is not None and not isinstance(item, str):
                raise type_error("a string", item, (*path, key))
        return {str(key): item or "" for key, item in value.items()}


_PROFILE = _Struct({"type": _Str()})  # seccompProfile, appArmorProfile: only the type is read
_SE_LINUX = _Struct({"type": _Str(), "user": _Str(), "role": _Str()})
_WINDOWS = _Struct({"hostProcess": _Bool()})
_HOST = _Struct({"host": _Str()})
_HANDLER = _Struct({"httpGet": _HOST, "tcpSocket": _HOST})  # probes and lifecycle handlers
_COMMON_SECURITY = {
    "runAsNonRoot": _Bool(),
    "runAsUser": _Int(64),
    "seccompProfile": _PROFILE,
    "seLinuxOptions": _SE_LINUX,
    "windowsOptions": _WINDOWS,
    "appArmorProfile": _PROFILE,
}
_CONTAINER = _Struct({
    "name": _Str(),
    "image": _Str(),
    "ports": _List(_Struct({"hostPort": _Int(32)}, pointer=False), {}),
    "securityContext": _Struct({
        **_COMMON_SECURITY,
        "privileged": _Bool(),
        "allowPrivilegeEscalation": _Bool(),
        "capabilities": _Struct({"add": _List(_Str(), ""), "drop": _List(_Str(), "")}),
        "procMount": _Str(),
    }),
    "livenessProbe": _HANDLER,
    "readinessProbe": _HANDLER,
    "startupProbe": _HANDLER,
    "lifecycle": _Struct({"postStart": _HANDLER, "preStop": _HANDLER}),
}, pointer=False)
# Every inline volume source of corev1.VolumeSource; only hostPath's path is read (hostPath volumes).
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)
_VOLUME = _Struct({
    "name": _Str(),
    "hostPath": _Struct({"path": _Str()}),
    **{source: _Object() for source in VOLUME_SOURCES if source != "hostPath"},
}, pointer=False)
_SPEC = _Struct({
    "hostNetwork": _Bool(),
    "hostPID": _Bool(),
    "hostIPC": _Bool(),
    "hostUsers": _Bool(),
    "os": _Struct({"name": _Str()}),
    "securityContext": _Struct({**_COMMON_SECURITY, "sysctls": _List(_Struct({"name": _Str()}, pointer=False), {})}),
    "volumes": _List(_VOLUME, {}),
    **{name: _List(_CONTAINER, {}) for name in CONTAINER_LISTS},
}, pointer=False)
_METADATA = _Struct({"name": _Str(), "namespace": _Str(), "annotations": _StringMap()}, pointer=False)


@dataclass(frozen=True, slots=True)
class Pod:
    """A decoded Pod: `metadata` and `spec` as described in the module docstring, and its containers in the
    order the checks visit them (init containers, containers, ephemeral containers), each with its field
    path (``spec.initContainers[0]``)."""

    metadata: dict
    spec: dict
    containers: tuple[tuple[str, dict], ...]

    @property
    def annotations(self) -> dict:
        return self.metadata.get("annotations") or {}

    @property
    def security_context(self) -> dict | None:
        """The pod-level ``securityContext`` (None when unset)."""
        return self.spec.get("securityContext")

    @property
    def windows(self) -> bool:
        """``spec.os.name: windows``: some restricted checks do not apply to Windows Pods."""
        return (self.spec.get("os") or {}).get("name") == "windows"

    @property
    def in_user_namespace(self) -> bool:
        """``spec.hostUsers: false``: some checks relax for Pods in a user namespace (from v1.35)."""
        return self.spec.get("hostUsers") is False


def make_pod(metadata: dict, spec: dict) -> Pod:
    """A `Pod` from already decoded `metadata` and `spec` (the Kyverno exclusions build Pods this way)."""
    containers = tuple((f"spec.{name}[{index}]", container)
                       for name in CONTAINER_LISTS for index, container in enumerate(spec.get(name) or ()))
    return Pod(metadata, spec, containers)


def decode_pod(metadata: Any, spec: Any, *, metadata_at: tuple = ("metadata",), spec_at: tuple = ("spec",)) -> Pod:
    """`metadata` (an ObjectMeta) and `spec` (a PodSpec) decoded as Go decodes them.

    Raises `PodDecodeError` naming the field (`metadata_at` and `spec_at` say where the two are)."""
    decoded = _SPEC.decode(spec, spec_at)
    for volume in decoded.get("volumes") or ():
        if not any(source in volume for source in VOLUME_SOURCES):
            volume["emptyDir"] = True
    return make_pod(_METADATA.decode(metadata, metadata_at), decoded)
