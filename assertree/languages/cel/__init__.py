"""CEL (Common Expression Language) for assertree: environments over one library, imported lazily.

`engine` is the only module that touches the CEL library (the ``cel`` extra);
`kyverno_json` is kyverno-json's CEL environment (``(cel;...)`` keys,
``compiler: cel``); `kubernetes` is the shared environment of Kubernetes and
Kyverno CEL policies, over `functions`, the Kubernetes and Kyverno function
libraries written in Python for offline use. Importing this package imports
no CEL library: a scan without CEL never pays for it. The errors and
`available()` are imported from `engine`, where they are defined (one list of
names, not a second one here).
"""
