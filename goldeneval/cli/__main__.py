"""``python -m goldeneval.cli``: the ``goldeneval`` command."""

from goldeneval.cli import main

main()
