"""`python -m metanim`: the `metanim` command."""

import sys

from metanim.cli import main

sys.exit(main())
