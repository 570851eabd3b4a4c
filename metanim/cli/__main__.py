"""`python -m metanim.cli`: the `metanim` command."""

import sys

from metanim.cli import main

sys.exit(main())
