"""``python -m rra_tools`` runs the ``rra`` command."""

from .cli.main import main

main()
