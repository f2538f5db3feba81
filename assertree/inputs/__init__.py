"""Payload arguments to resources: files, standard input, Terraform plans, bindings."""
