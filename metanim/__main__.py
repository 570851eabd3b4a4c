"""`python -m metanim`: the `metanim` command."""

import sys

try:
    from metanim.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command is still loading
    sys.exit(130)

sys.exit(main())
