"""What Kubernetes itself defines that more than one policy language needs, offline.

Kubernetes' admission policies (`assertree.languages.admission`) and Kyverno's
CEL policies (`assertree.languages.kyverno.cel_policies`) both see a resource
as an admission request and select it with admissionregistration's match
rules; both mutate with JSON patches and apply configurations; Kyverno's
ClusterPolicy patches with the same JSON patch engine and the same schema of
merge keys. Those shared pieces live here, one module per question:

- `resources`: a kind's resource name and scope, as discovery would say;
- `request`: the admission request a resource stands for;
- `matching`: whether match constraints select a request;
- `jsonpatch`: RFC 6902 as evanphx/json-patch applies it;
- `merge_schema`: which lists Kubernetes merges, and by which keys;
- `patches`: JSON patches and apply configurations applied to an object;
- `cluster`: the objects that exist besides the one checked (a fake cluster),
  which lookups, generate clones, mutate-existing targets and cleanup read.
"""
