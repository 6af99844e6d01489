"""`python -m grasbot`: the `grasbot` command, for a Python whose scripts folder is not on PATH."""

import sys

from ._cli import main

sys.exit(main())
