"""``python -m assertree`` runs the command line."""

from assertree.cli import run

run()
