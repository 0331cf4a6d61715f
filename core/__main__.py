"""``python -m core``: the command line (see :mod:`core.cli`)."""

import sys

from .cli import main

sys.exit(main())
