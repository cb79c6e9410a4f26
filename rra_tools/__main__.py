"""``python -m rra_tools`` runs the ``rra`` command, as the console script does."""

from .cli.main import entry

entry()
