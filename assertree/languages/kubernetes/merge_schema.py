"""Which lists a strategic merge patch merges, and by which keys: Kubernetes v1.21.2's OpenAPI, trimmed.

Kyverno applies ``patchStrategicMerge`` with kustomize's kyaml merge (sigs.k8s.io/kustomize/kyaml
v0.21.1), which reads list strategies from the OpenAPI document compiled into kyaml: Kubernetes
v1.21.2 (kyaml/openapi/kubernetesapi/v1_21_2/swagger.pb; Kyverno never installs another). Two
extensions matter: ``x-kubernetes-patch-strategy`` (a list is merged element by element only when it
contains ``merge``) and the merge key, ``x-kubernetes-list-map-keys`` when present (ports merge on
``containerPort`` *and* ``protocol``), else ``x-kubernetes-patch-merge-key``. Every other list is
replaced whole, and so is every list of a kind kyaml has no schema for (CRDs): kyaml's merge does not
guess merge keys.

This table keeps, for each definition, only the fields that lead to a merged list; any other field
of a known definition has a schema with nothing to merge below it (`LEAF`). It was generated from
that swagger.pb (gnostic openapi_v2 protobuf) by decoding ``definitions`` and their vendor
extensions; regenerate it the same way if Kyverno moves to a kyaml with another built-in schema.
Kustomize's own Kustomization types (kustomizationapi/swagger.json) are left out: no resource
Kyverno mutates has their apiVersion.

The same keys tell server-side apply which lists it merges by key, so apply configurations
(`assertree.languages.kubernetes.patches`) read this table too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class _List:
    strategy: str  # "merge", "merge,retainKeys"
    keys: tuple[str, ...]  # merge keys; empty for a merged list of scalars (finalizers-like)
    items: str | None  # the definition of its elements, None when nothing below them merges


@dataclass(frozen=True, slots=True)
class _Map:
    values: str | _List | None  # additionalProperties: the schema of every value


_DEFINITIONS: dict[str, dict[str, str | _List | _Map | None]] = {
    'admissionregistration.v1.MutatingWebhookConfiguration': {
        'metadata': 'meta.ObjectMeta',
        'webhooks': _List('merge', ('name',), None),
    },
    'admissionregistration.v1.ValidatingWebhookConfiguration': {
        'metadata': 'meta.ObjectMeta',
        'webhooks': _List('merge', ('name',), None),
    },
    'admissionregistration.v1beta1.MutatingWebhookConfiguration': {
        'metadata': 'meta.ObjectMeta',
        'webhooks': _List('merge', ('name',), None),
    },
    'admissionregistration.v1beta1.ValidatingWebhookConfiguration': {
        'metadata': 'meta.ObjectMeta',
        'webhooks': _List('merge', ('name',), None),
    },
    'apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition': {'metadata': 'meta.ObjectMeta'},
    'apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinition': {'metadata': 'meta.ObjectMeta'},
    'apps.v1.ControllerRevision': {'metadata': 'meta.ObjectMeta'},
    'apps.v1.DaemonSet': {
        'metadata': 'meta.ObjectMeta',
        'spec': 'apps.v1.DaemonSetSpec',
        'status': 'apps.v1.DaemonSetStatus',
    },
    'apps.v1.DaemonSetSpec': {'template': 'core.v1.PodTemplateSpec'},
    'apps.v1.DaemonSetStatus': {'conditions': _List('merge', ('type',), None)},
    'apps.v1.Deployment': {
        'metadata': 'meta.ObjectMeta',
        'spec': 'apps.v1.DeploymentSpec',
        'status': 'apps.v1.DeploymentStatus',
    },
    'apps.v1.DeploymentSpec': {'template': 'core.v1.PodTemplateSpec'},
    'apps.v1.DeploymentStatus': {'conditions': _List('merge', ('type',), None)},
    'apps.v1.ReplicaSet': {
        'metadata': 'meta.ObjectMeta',
        'spec': 'apps.v1.ReplicaSetSpec',
        'status': 'apps.v1.ReplicaSetStatus',
    },
    'apps.v1.ReplicaSetSpec': {'template': 'core.v1.PodTemplateSpec'},
    'apps.v1.ReplicaSetStatus': {'conditions': _List('merge', ('type',), None)},
    'apps.v1.StatefulSet': {
        'metadata': 'meta.ObjectMeta',
        'spec': 'apps.v1.StatefulSetSpec',
        'status': 'apps.v1.StatefulSetStatus',
    },
    'apps.v1.StatefulSetSpec': {'template': 'core.v1.PodTemplateSpec'},
    'apps.v1.StatefulSetStatus': {'conditions': _List('merge', ('type',), None)},
    'authentication.v1.TokenRequest': {'metadata': 'meta.ObjectMeta'},
    'authentication.v1.TokenReview': {'metadata': 'meta.ObjectMeta'},
    'authentication.v1beta1.TokenReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1.LocalSubjectAccessReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1.SelfSubjectAccessReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1.SelfSubjectRulesReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1.SubjectAccessReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1beta1.LocalSubjectAccessReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1beta1.SelfSubjectAccessReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1beta1.SelfSubjectRulesReview': {'metadata': 'meta.ObjectMeta'},
    'authorization.v1beta1.SubjectAccessReview': {'metadata': 'meta.ObjectMeta'},
    'autoscaling.v1.HorizontalPodAutoscaler': {'metadata': 'meta.ObjectMeta'},
    'autoscaling.v1.Scale': {'metadata': 'meta.ObjectMeta'},
    'autoscaling.v2beta1.HorizontalPodAutoscaler': {'metadata': 'meta.ObjectMeta'},
    'autoscaling.v2beta2.HorizontalPodAutoscaler': {'metadata': 'meta.ObjectMeta'},
    'batch.v1.CronJob': {'metadata': 'meta.ObjectMeta', 'spec': 'batch.v1.CronJobSpec'},
    'batch.v1.CronJobSpec': {'jobTemplate': 'batch.v1.JobTemplateSpec'},
    'batch.v1.Job': {'metadata': 'meta.ObjectMeta', 'spec': 'batch.v1.JobSpec', 'status': 'batch.v1.JobStatus'},
    'batch.v1.JobSpec': {'template': 'core.v1.PodTemplateSpec'},
    'batch.v1.JobStatus': {'conditions': _List('merge', ('type',), None)},
    'batch.v1.JobTemplateSpec': {'metadata': 'meta.ObjectMeta', 'spec': 'batch.v1.JobSpec'},
    'batch.v1beta1.CronJob': {'metadata': 'meta.ObjectMeta', 'spec': 'batch.v1beta1.CronJobSpec'},
    'batch.v1beta1.CronJobSpec': {'jobTemplate': 'batch.v1beta1.JobTemplateSpec'},
    'batch.v1beta1.JobTemplateSpec': {'metadata': 'meta.ObjectMeta', 'spec': 'batch.v1.JobSpec'},
    'certificates.v1.CertificateSigningRequest': {'metadata': 'meta.ObjectMeta'},
    'certificates.v1beta1.CertificateSigningRequest': {'metadata': 'meta.ObjectMeta'},
    'coordination.v1.Lease': {'metadata': 'meta.ObjectMeta'},
    'coordination.v1beta1.Lease': {'metadata': 'meta.ObjectMeta'},
    'core.v1.Binding': {'metadata': 'meta.ObjectMeta'},
    'core.v1.ComponentStatus': {'conditions': _List('merge', ('type',), None), 'metadata': 'meta.ObjectMeta'},
    'core.v1.ConfigMap': {'metadata': 'meta.ObjectMeta'},
    'core.v1.Container': {
        'env': _List('merge', ('name',), None),
        'ports': _List('merge', ('containerPort', 'protocol'), None),
        'volumeDevices': _List('merge', ('devicePath',), None),
        'volumeMounts': _List('merge', ('mountPath',), None),
    },
    'core.v1.Endpoints': {'metadata': 'meta.ObjectMeta'},
    'core.v1.EphemeralContainer': {
        'env': _List('merge', ('name',), None),
        'volumeDevices': _List('merge', ('devicePath',), None),
        'volumeMounts': _List('merge', ('mountPath',), None),
    },
    'core.v1.EphemeralVolumeSource': {'volumeClaimTemplate': 'core.v1.PersistentVolumeClaimTemplate'},
    'core.v1.Event': {'metadata': 'meta.ObjectMeta'},
    'core.v1.LimitRange': {'metadata': 'meta.ObjectMeta'},
    'core.v1.Namespace': {'metadata': 'meta.ObjectMeta', 'status': 'core.v1.NamespaceStatus'},
    'core.v1.NamespaceStatus': {'conditions': _List('merge', ('type',), None)},
    'core.v1.Node': {'metadata': 'meta.ObjectMeta', 'spec': 'core.v1.NodeSpec', 'status': 'core.v1.NodeStatus'},
    'core.v1.NodeSpec': {'podCIDRs': _List('merge', (), None)},
    'core.v1.NodeStatus': {'addresses': _List('merge', ('type',), None), 'conditions': _List('merge', ('type',), None)},
    'core.v1.PersistentVolume': {'metadata': 'meta.ObjectMeta'},
    'core.v1.PersistentVolumeClaim': {'metadata': 'meta.ObjectMeta', 'status': 'core.v1.PersistentVolumeClaimStatus'},
    'core.v1.PersistentVolumeClaimStatus': {'conditions': _List('merge', ('type',), None)},
    'core.v1.PersistentVolumeClaimTemplate': {'metadata': 'meta.ObjectMeta'},
    'core.v1.Pod': {'metadata': 'meta.ObjectMeta', 'spec': 'core.v1.PodSpec', 'status': 'core.v1.PodStatus'},
    'core.v1.PodSpec': {
        'containers': _List('merge', ('name',), 'core.v1.Container'),
        'ephemeralContainers': _List('merge', ('name',), 'core.v1.EphemeralContainer'),
        'hostAliases': _List('merge', ('ip',), None),
        'imagePullSecrets': _List('merge', ('name',), None),
        'initContainers': _List('merge', ('name',), 'core.v1.Container'),
        'topologySpreadConstraints': _List('merge', ('topologyKey', 'whenUnsatisfiable'), None),
        'volumes': _List('merge,retainKeys', ('name',), 'core.v1.Volume'),
    },
    'core.v1.PodStatus': {'conditions': _List('merge', ('type',), None), 'podIPs': _List('merge', ('ip',), None)},
    'core.v1.PodTemplate': {'metadata': 'meta.ObjectMeta', 'template': 'core.v1.PodTemplateSpec'},
    'core.v1.PodTemplateSpec': {'metadata': 'meta.ObjectMeta', 'spec': 'core.v1.PodSpec'},
    'core.v1.ReplicationController': {
        'metadata': 'meta.ObjectMeta',
        'spec': 'core.v1.ReplicationControllerSpec',
        'status': 'core.v1.ReplicationControllerStatus',
    },
    'core.v1.ReplicationControllerSpec': {'template': 'core.v1.PodTemplateSpec'},
    'core.v1.ReplicationControllerStatus': {'conditions': _List('merge', ('type',), None)},
    'core.v1.ResourceQuota': {'metadata': 'meta.ObjectMeta'},
    'core.v1.Secret': {'metadata': 'meta.ObjectMeta'},
    'core.v1.Service': {
        'metadata': 'meta.ObjectMeta',
        'spec': 'core.v1.ServiceSpec',
        'status': 'core.v1.ServiceStatus',
    },
    'core.v1.ServiceAccount': {'metadata': 'meta.ObjectMeta', 'secrets': _List('merge', ('name',), None)},
    'core.v1.ServiceSpec': {'ports': _List('merge', ('port', 'protocol'), None)},
    'core.v1.ServiceStatus': {'conditions': _List('merge', ('type',), None)},
    'core.v1.Volume': {'ephemeral': 'core.v1.EphemeralVolumeSource'},
    'discovery.v1.EndpointSlice': {'metadata': 'meta.ObjectMeta'},
    'discovery.v1beta1.EndpointSlice': {'metadata': 'meta.ObjectMeta'},
    'events.v1.Event': {'metadata': 'meta.ObjectMeta'},
    'events.v1beta1.Event': {'metadata': 'meta.ObjectMeta'},
    'extensions.v1beta1.Ingress': {'metadata': 'meta.ObjectMeta'},
    'flowcontrol.v1beta1.FlowSchema': {'metadata': 'meta.ObjectMeta'},
    'flowcontrol.v1beta1.PriorityLevelConfiguration': {'metadata': 'meta.ObjectMeta'},
    'kube-aggregator.pkg.apis.apiregistration.v1.APIService': {
        'metadata': 'meta.ObjectMeta',
        'status': 'kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus',
    },
    'kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus': {'conditions': _List('merge', ('type',), None)},
    'kube-aggregator.pkg.apis.apiregistration.v1beta1.APIService': {
        'metadata': 'meta.ObjectMeta',
        'status': 'kube-aggregator.pkg.apis.apiregistration.v1beta1.APIServiceStatus',
    },
    'kube-aggregator.pkg.apis.apiregistration.v1beta1.APIServiceStatus': {
        'conditions': _List('merge', ('type',), None),
    },
    'meta.ObjectMeta': {'finalizers': _List('merge', (), None), 'ownerReferences': _List('merge', ('uid',), None)},
    'networking.v1.Ingress': {'metadata': 'meta.ObjectMeta'},
    'networking.v1.IngressClass': {'metadata': 'meta.ObjectMeta'},
    'networking.v1.NetworkPolicy': {'metadata': 'meta.ObjectMeta'},
    'networking.v1beta1.Ingress': {'metadata': 'meta.ObjectMeta'},
    'networking.v1beta1.IngressClass': {'metadata': 'meta.ObjectMeta'},
    'node.v1.RuntimeClass': {'metadata': 'meta.ObjectMeta'},
    'node.v1beta1.RuntimeClass': {'metadata': 'meta.ObjectMeta'},
    'policy.v1.PodDisruptionBudget': {'metadata': 'meta.ObjectMeta', 'status': 'policy.v1.PodDisruptionBudgetStatus'},
    'policy.v1.PodDisruptionBudgetStatus': {'conditions': _List('merge', ('type',), None)},
    'policy.v1beta1.Eviction': {'metadata': 'meta.ObjectMeta'},
    'policy.v1beta1.PodDisruptionBudget': {
        'metadata': 'meta.ObjectMeta',
        'status': 'policy.v1beta1.PodDisruptionBudgetStatus',
    },
    'policy.v1beta1.PodDisruptionBudgetStatus': {'conditions': _List('merge', ('type',), None)},
    'policy.v1beta1.PodSecurityPolicy': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1.ClusterRole': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1.ClusterRoleBinding': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1.Role': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1.RoleBinding': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1beta1.ClusterRole': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1beta1.ClusterRoleBinding': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1beta1.Role': {'metadata': 'meta.ObjectMeta'},
    'rbac.v1beta1.RoleBinding': {'metadata': 'meta.ObjectMeta'},
    'scheduling.v1.PriorityClass': {'metadata': 'meta.ObjectMeta'},
    'scheduling.v1beta1.PriorityClass': {'metadata': 'meta.ObjectMeta'},
    'storage.v1.CSIDriver': {'metadata': 'meta.ObjectMeta'},
    'storage.v1.CSINode': {'metadata': 'meta.ObjectMeta', 'spec': 'storage.v1.CSINodeSpec'},
    'storage.v1.CSINodeSpec': {'drivers': _List('merge', ('name',), None)},
    'storage.v1.StorageClass': {'metadata': 'meta.ObjectMeta'},
    'storage.v1.VolumeAttachment': {'metadata': 'meta.ObjectMeta'},
    'storage.v1beta1.CSIDriver': {'metadata': 'meta.ObjectMeta'},
    'storage.v1beta1.CSINode': {'metadata': 'meta.ObjectMeta', 'spec': 'storage.v1beta1.CSINodeSpec'},
    'storage.v1beta1.CSINodeSpec': {'drivers': _List('merge', ('name',), None)},
    'storage.v1beta1.CSIStorageCapacity': {'metadata': 'meta.ObjectMeta'},
    'storage.v1beta1.StorageClass': {'metadata': 'meta.ObjectMeta'},
    'storage.v1beta1.VolumeAttachment': {'metadata': 'meta.ObjectMeta'},
}

_RESOURCES: dict[tuple[str, str], str] = {
    ('admissionregistration.k8s.io/v1beta1', 'MutatingWebhookConfiguration'):
        'admissionregistration.v1beta1.MutatingWebhookConfiguration',
    ('admissionregistration.k8s.io/v1beta1', 'ValidatingWebhookConfiguration'):
        'admissionregistration.v1beta1.ValidatingWebhookConfiguration',
    ('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'):
        'admissionregistration.v1.MutatingWebhookConfiguration',
    ('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'):
        'admissionregistration.v1.ValidatingWebhookConfiguration',
    ('apiextensions.k8s.io/v1beta1', 'CustomResourceDefinition'):
        'apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinition',
    ('apiextensions.k8s.io/v1', 'CustomResourceDefinition'):
        'apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    ('apiregistration.k8s.io/v1beta1', 'APIService'): 'kube-aggregator.pkg.apis.apiregistration.v1beta1.APIService',
    ('apiregistration.k8s.io/v1', 'APIService'): 'kube-aggregator.pkg.apis.apiregistration.v1.APIService',
    ('apps/v1', 'ControllerRevision'): 'apps.v1.ControllerRevision',
    ('apps/v1', 'DaemonSet'): 'apps.v1.DaemonSet',
    ('apps/v1', 'Deployment'): 'apps.v1.Deployment',
    ('apps/v1', 'ReplicaSet'): 'apps.v1.ReplicaSet',
    ('apps/v1', 'StatefulSet'): 'apps.v1.StatefulSet',
    ('authentication.k8s.io/v1beta1', 'TokenReview'): 'authentication.v1beta1.TokenReview',
    ('authentication.k8s.io/v1', 'TokenRequest'): 'authentication.v1.TokenRequest',
    ('authentication.k8s.io/v1', 'TokenReview'): 'authentication.v1.TokenReview',
    ('authorization.k8s.io/v1beta1', 'LocalSubjectAccessReview'): 'authorization.v1beta1.LocalSubjectAccessReview',
    ('authorization.k8s.io/v1beta1', 'SelfSubjectAccessReview'): 'authorization.v1beta1.SelfSubjectAccessReview',
    ('authorization.k8s.io/v1beta1', 'SelfSubjectRulesReview'): 'authorization.v1beta1.SelfSubjectRulesReview',
    ('authorization.k8s.io/v1beta1', 'SubjectAccessReview'): 'authorization.v1beta1.SubjectAccessReview',
    ('authorization.k8s.io/v1', 'LocalSubjectAccessReview'): 'authorization.v1.LocalSubjectAccessReview',
    ('authorization.k8s.io/v1', 'SelfSubjectAccessReview'): 'authorization.v1.SelfSubjectAccessReview',
    ('authorization.k8s.io/v1', 'SelfSubjectRulesReview'): 'authorization.v1.SelfSubjectRulesReview',
    ('authorization.k8s.io/v1', 'SubjectAccessReview'): 'authorization.v1.SubjectAccessReview',
    ('autoscaling/v1', 'HorizontalPodAutoscaler'): 'autoscaling.v1.HorizontalPodAutoscaler',
    ('autoscaling/v1', 'Scale'): 'autoscaling.v1.Scale',
    ('autoscaling/v2beta1', 'HorizontalPodAutoscaler'): 'autoscaling.v2beta1.HorizontalPodAutoscaler',
    ('autoscaling/v2beta2', 'HorizontalPodAutoscaler'): 'autoscaling.v2beta2.HorizontalPodAutoscaler',
    ('batch/v1beta1', 'CronJob'): 'batch.v1beta1.CronJob',
    ('batch/v1', 'CronJob'): 'batch.v1.CronJob',
    ('batch/v1', 'Job'): 'batch.v1.Job',
    ('certificates.k8s.io/v1beta1', 'CertificateSigningRequest'): 'certificates.v1beta1.CertificateSigningRequest',
    ('certificates.k8s.io/v1', 'CertificateSigningRequest'): 'certificates.v1.CertificateSigningRequest',
    ('coordination.k8s.io/v1beta1', 'Lease'): 'coordination.v1beta1.Lease',
    ('coordination.k8s.io/v1', 'Lease'): 'coordination.v1.Lease',
    ('discovery.k8s.io/v1beta1', 'EndpointSlice'): 'discovery.v1beta1.EndpointSlice',
    ('discovery.k8s.io/v1', 'EndpointSlice'): 'discovery.v1.EndpointSlice',
    ('events.k8s.io/v1beta1', 'Event'): 'events.v1beta1.Event',
    ('events.k8s.io/v1', 'Event'): 'events.v1.Event',
    ('extensions/v1beta1', 'Ingress'): 'extensions.v1beta1.Ingress',
    ('flowcontrol.apiserver.k8s.io/v1beta1', 'FlowSchema'): 'flowcontrol.v1beta1.FlowSchema',
    ('flowcontrol.apiserver.k8s.io/v1beta1', 'PriorityLevelConfiguration'):
        'flowcontrol.v1beta1.PriorityLevelConfiguration',
    ('networking.k8s.io/v1beta1', 'Ingress'): 'networking.v1beta1.Ingress',
    ('networking.k8s.io/v1beta1', 'IngressClass'): 'networking.v1beta1.IngressClass',
    ('networking.k8s.io/v1', 'Ingress'): 'networking.v1.Ingress',
    ('networking.k8s.io/v1', 'IngressClass'): 'networking.v1.IngressClass',
    ('networking.k8s.io/v1', 'NetworkPolicy'): 'networking.v1.NetworkPolicy',
    ('node.k8s.io/v1beta1', 'RuntimeClass'): 'node.v1beta1.RuntimeClass',
    ('node.k8s.io/v1', 'RuntimeClass'): 'node.v1.RuntimeClass',
    ('policy/v1beta1', 'Eviction'): 'policy.v1beta1.Eviction',
    ('policy/v1beta1', 'PodDisruptionBudget'): 'policy.v1beta1.PodDisruptionBudget',
    ('policy/v1beta1', 'PodSecurityPolicy'): 'policy.v1beta1.PodSecurityPolicy',
    ('policy/v1', 'PodDisruptionBudget'): 'policy.v1.PodDisruptionBudget',
    ('rbac.authorization.k8s.io/v1beta1', 'ClusterRole'): 'rbac.v1beta1.ClusterRole',
    ('rbac.authorization.k8s.io/v1beta1', 'ClusterRoleBinding'): 'rbac.v1beta1.ClusterRoleBinding',
    ('rbac.authorization.k8s.io/v1beta1', 'Role'): 'rbac.v1beta1.Role',
    ('rbac.authorization.k8s.io/v1beta1', 'RoleBinding'): 'rbac.v1beta1.RoleBinding',
    ('rbac.authorization.k8s.io/v1', 'ClusterRole'): 'rbac.v1.ClusterRole',
    ('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'): 'rbac.v1.ClusterRoleBinding',
    ('rbac.authorization.k8s.io/v1', 'Role'): 'rbac.v1.Role',
    ('rbac.authorization.k8s.io/v1', 'RoleBinding'): 'rbac.v1.RoleBinding',
    ('scheduling.k8s.io/v1beta1', 'PriorityClass'): 'scheduling.v1beta1.PriorityClass',
    ('scheduling.k8s.io/v1', 'PriorityClass'): 'scheduling.v1.PriorityClass',
    ('storage.k8s.io/v1beta1', 'CSIDriver'): 'storage.v1beta1.CSIDriver',
    ('storage.k8s.io/v1beta1', 'CSINode'): 'storage.v1beta1.CSINode',
    ('storage.k8s.io/v1beta1', 'CSIStorageCapacity'): 'storage.v1beta1.CSIStorageCapacity',
    ('storage.k8s.io/v1beta1', 'StorageClass'): 'storage.v1beta1.StorageClass',
    ('storage.k8s.io/v1beta1', 'VolumeAttachment'): 'storage.v1beta1.VolumeAttachment',
    ('storage.k8s.io/v1', 'CSIDriver'): 'storage.v1.CSIDriver',
    ('storage.k8s.io/v1', 'CSINode'): 'storage.v1.CSINode',
    ('storage.k8s.io/v1', 'StorageClass'): 'storage.v1.StorageClass',
    ('storage.k8s.io/v1', 'VolumeAttachment'): 'storage.v1.VolumeAttachment',
    ('v1', 'Binding'): 'core.v1.Binding',
    ('v1', 'ComponentStatus'): 'core.v1.ComponentStatus',
    ('v1', 'ConfigMap'): 'core.v1.ConfigMap',
    ('v1', 'Endpoints'): 'core.v1.Endpoints',
    ('v1', 'Event'): 'core.v1.Event',
    ('v1', 'LimitRange'): 'core.v1.LimitRange',
    ('v1', 'Namespace'): 'core.v1.Namespace',
    ('v1', 'Node'): 'core.v1.Node',
    ('v1', 'PersistentVolume'): 'core.v1.PersistentVolume',
    ('v1', 'PersistentVolumeClaim'): 'core.v1.PersistentVolumeClaim',
    ('v1', 'Pod'): 'core.v1.Pod',
    ('v1', 'PodTemplate'): 'core.v1.PodTemplate',
    ('v1', 'ReplicationController'): 'core.v1.ReplicationController',
    ('v1', 'ResourceQuota'): 'core.v1.ResourceQuota',
    ('v1', 'Secret'): 'core.v1.Secret',
    ('v1', 'Service'): 'core.v1.Service',
    ('v1', 'ServiceAccount'): 'core.v1.ServiceAccount',
}

# Kinds kyaml knows but whose schema has no merged list: a schema exists (so nested objects are not
# looked up by their own apiVersion/kind), and every list in them is replaced.
_OTHER_KINDS_TEXT = """
admission.k8s.io/v1:DeleteOptions admission.k8s.io/v1:WatchEvent admission.k8s.io/v1beta1:DeleteOptions
admission.k8s.io/v1beta1:WatchEvent admissionregistration.k8s.io/v1:DeleteOptions
admissionregistration.k8s.io/v1:MutatingWebhookConfigurationList
admissionregistration.k8s.io/v1:ValidatingWebhookConfigurationList admissionregistration.k8s.io/v1:WatchEvent
admissionregistration.k8s.io/v1beta1:DeleteOptions
admissionregistration.k8s.io/v1beta1:MutatingWebhookConfigurationList
admissionregistration.k8s.io/v1beta1:ValidatingWebhookConfigurationList
admissionregistration.k8s.io/v1beta1:WatchEvent apiextensions.k8s.io/v1:CustomResourceDefinitionList
apiextensions.k8s.io/v1:DeleteOptions apiextensions.k8s.io/v1:WatchEvent
apiextensions.k8s.io/v1beta1:CustomResourceDefinitionList apiextensions.k8s.io/v1beta1:DeleteOptions
apiextensions.k8s.io/v1beta1:WatchEvent apiregistration.k8s.io/v1:APIServiceList
apiregistration.k8s.io/v1:DeleteOptions apiregistration.k8s.io/v1:WatchEvent
apiregistration.k8s.io/v1beta1:APIServiceList apiregistration.k8s.io/v1beta1:DeleteOptions
apiregistration.k8s.io/v1beta1:WatchEvent apps/v1:ControllerRevisionList apps/v1:DaemonSetList
apps/v1:DeleteOptions apps/v1:DeploymentList apps/v1:ReplicaSetList apps/v1:StatefulSetList apps/v1:WatchEvent
apps/v1beta1:DeleteOptions apps/v1beta1:WatchEvent apps/v1beta2:DeleteOptions apps/v1beta2:WatchEvent
authentication.k8s.io/v1:DeleteOptions authentication.k8s.io/v1:WatchEvent
authentication.k8s.io/v1beta1:DeleteOptions authentication.k8s.io/v1beta1:WatchEvent
authorization.k8s.io/v1:DeleteOptions authorization.k8s.io/v1:WatchEvent
authorization.k8s.io/v1beta1:DeleteOptions authorization.k8s.io/v1beta1:WatchEvent
autoscaling/v1:DeleteOptions autoscaling/v1:HorizontalPodAutoscalerList autoscaling/v1:WatchEvent
autoscaling/v2beta1:DeleteOptions autoscaling/v2beta1:HorizontalPodAutoscalerList
autoscaling/v2beta1:WatchEvent autoscaling/v2beta2:DeleteOptions
autoscaling/v2beta2:HorizontalPodAutoscalerList autoscaling/v2beta2:WatchEvent batch/v1:CronJobList
batch/v1:DeleteOptions batch/v1:JobList batch/v1:WatchEvent batch/v1beta1:CronJobList
batch/v1beta1:DeleteOptions batch/v1beta1:WatchEvent certificates.k8s.io/v1:CertificateSigningRequestList
certificates.k8s.io/v1:DeleteOptions certificates.k8s.io/v1:WatchEvent
certificates.k8s.io/v1beta1:CertificateSigningRequestList certificates.k8s.io/v1beta1:DeleteOptions
certificates.k8s.io/v1beta1:WatchEvent coordination.k8s.io/v1:DeleteOptions coordination.k8s.io/v1:LeaseList
coordination.k8s.io/v1:WatchEvent coordination.k8s.io/v1beta1:DeleteOptions
coordination.k8s.io/v1beta1:LeaseList coordination.k8s.io/v1beta1:WatchEvent discovery.k8s.io/v1:DeleteOptions
discovery.k8s.io/v1:EndpointSliceList discovery.k8s.io/v1:WatchEvent discovery.k8s.io/v1beta1:DeleteOptions
discovery.k8s.io/v1beta1:EndpointSliceList discovery.k8s.io/v1beta1:WatchEvent events.k8s.io/v1:DeleteOptions
events.k8s.io/v1:EventList events.k8s.io/v1:WatchEvent events.k8s.io/v1beta1:DeleteOptions
events.k8s.io/v1beta1:EventList events.k8s.io/v1beta1:WatchEvent extensions/v1beta1:DeleteOptions
extensions/v1beta1:IngressList extensions/v1beta1:WatchEvent
flowcontrol.apiserver.k8s.io/v1alpha1:DeleteOptions flowcontrol.apiserver.k8s.io/v1alpha1:WatchEvent
flowcontrol.apiserver.k8s.io/v1beta1:DeleteOptions flowcontrol.apiserver.k8s.io/v1beta1:FlowSchemaList
flowcontrol.apiserver.k8s.io/v1beta1:PriorityLevelConfigurationList
flowcontrol.apiserver.k8s.io/v1beta1:WatchEvent imagepolicy.k8s.io/v1alpha1:DeleteOptions
imagepolicy.k8s.io/v1alpha1:WatchEvent internal.apiserver.k8s.io/v1alpha1:DeleteOptions
internal.apiserver.k8s.io/v1alpha1:WatchEvent networking.k8s.io/v1:DeleteOptions
networking.k8s.io/v1:IngressClassList networking.k8s.io/v1:IngressList networking.k8s.io/v1:NetworkPolicyList
networking.k8s.io/v1:WatchEvent networking.k8s.io/v1beta1:DeleteOptions
networking.k8s.io/v1beta1:IngressClassList networking.k8s.io/v1beta1:IngressList
networking.k8s.io/v1beta1:WatchEvent node.k8s.io/v1:DeleteOptions node.k8s.io/v1:RuntimeClassList
node.k8s.io/v1:WatchEvent node.k8s.io/v1alpha1:DeleteOptions node.k8s.io/v1alpha1:WatchEvent
node.k8s.io/v1beta1:DeleteOptions node.k8s.io/v1beta1:RuntimeClassList node.k8s.io/v1beta1:WatchEvent
policy/v1:DeleteOptions policy/v1:PodDisruptionBudgetList policy/v1:WatchEvent policy/v1beta1:DeleteOptions
policy/v1beta1:PodDisruptionBudgetList policy/v1beta1:PodSecurityPolicyList policy/v1beta1:WatchEvent
rbac.authorization.k8s.io/v1:ClusterRoleBindingList rbac.authorization.k8s.io/v1:ClusterRoleList
rbac.authorization.k8s.io/v1:DeleteOptions rbac.authorization.k8s.io/v1:RoleBindingList
rbac.authorization.k8s.io/v1:RoleList rbac.authorization.k8s.io/v1:WatchEvent
rbac.authorization.k8s.io/v1alpha1:DeleteOptions rbac.authorization.k8s.io/v1alpha1:WatchEvent
rbac.authorization.k8s.io/v1beta1:ClusterRoleBindingList rbac.authorization.k8s.io/v1beta1:ClusterRoleList
rbac.authorization.k8s.io/v1beta1:DeleteOptions rbac.authorization.k8s.io/v1beta1:RoleBindingList
rbac.authorization.k8s.io/v1beta1:RoleList rbac.authorization.k8s.io/v1beta1:WatchEvent
scheduling.k8s.io/v1:DeleteOptions scheduling.k8s.io/v1:PriorityClassList scheduling.k8s.io/v1:WatchEvent
scheduling.k8s.io/v1alpha1:DeleteOptions scheduling.k8s.io/v1alpha1:WatchEvent
scheduling.k8s.io/v1beta1:DeleteOptions scheduling.k8s.io/v1beta1:PriorityClassList
scheduling.k8s.io/v1beta1:WatchEvent storage.k8s.io/v1:CSIDriverList storage.k8s.io/v1:CSINodeList
storage.k8s.io/v1:DeleteOptions storage.k8s.io/v1:StorageClassList storage.k8s.io/v1:VolumeAttachmentList
storage.k8s.io/v1:WatchEvent storage.k8s.io/v1alpha1:DeleteOptions storage.k8s.io/v1alpha1:WatchEvent
storage.k8s.io/v1beta1:CSIDriverList storage.k8s.io/v1beta1:CSINodeList
storage.k8s.io/v1beta1:CSIStorageCapacityList storage.k8s.io/v1beta1:DeleteOptions
storage.k8s.io/v1beta1:StorageClassList storage.k8s.io/v1beta1:VolumeAttachmentList
storage.k8s.io/v1beta1:WatchEvent v1:APIGroup v1:APIGroupList v1:APIResourceList v1:APIVersions
v1:ComponentStatusList v1:ConfigMapList v1:DeleteOptions v1:EndpointsList v1:EventList v1:LimitRangeList
v1:NamespaceList v1:NodeList v1:PersistentVolumeClaimList v1:PersistentVolumeList v1:PodList
v1:PodTemplateList v1:ReplicationControllerList v1:ResourceQuotaList v1:SecretList v1:ServiceAccountList
v1:ServiceList v1:Status v1:WatchEvent
"""
_OTHER_KINDS = frozenset(tuple(item.rsplit(":", 1)) for item in _OTHER_KINDS_TEXT.split())


class _Leaf:
    """A schema with nothing to merge below it: lists under it are replaced, objects merged key by key."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "LEAF"


LEAF = _Leaf()

Schema = str | _List | _Map | _Leaf
"""A definition name, a list, a map of values, or LEAF. None (no schema) is a different thing to kyaml."""


def resource_schema(api_version: object, kind: object) -> Schema | None:
    """The schema kyaml finds for an object by its ``apiVersion`` and ``kind`` (None for unknown kinds)."""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    found = _RESOURCES.get((api_version, kind))
    if found is not None:
        return found
    return LEAF if (api_version, kind) in _OTHER_KINDS else None


def field_schema(schema: Schema, key: str) -> Schema | None:
    """The schema of field `key` of an object described by `schema` (kyaml ResourceSchema.Field)."""
    if isinstance(schema, str):
        fields = _DEFINITIONS[schema]
        return fields[key] if key in fields and fields[key] is not None else LEAF
    if isinstance(schema, _Map):
        return LEAF if schema.values is None else schema.values
    if isinstance(schema, _List):
        return None  # an array schema has no properties
    return LEAF


def element_schema(schema: Schema) -> Schema | None:
    """The schema of a list's elements (kyaml ResourceSchema.Elements); None when `schema` is no list."""
    if isinstance(schema, _List):
        return LEAF if schema.items is None else schema.items
    return None


def merge_strategy(schema: Schema | None) -> tuple[str, tuple[str, ...]]:
    """A list's patch strategy and merge keys; ("", ()) when its elements are not merged."""
    if isinstance(schema, _List):
        return schema.strategy, schema.keys
    return "", ()


def merges_elements(schema: Schema | None) -> bool:
    """Whether kyaml merges a list element by element (its strategy names ``merge``) or replaces it."""
    return "merge" in merge_strategy(schema)[0].split(",")
