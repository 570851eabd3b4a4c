"""`python -m metanim.integrations.lm_eval [DIR --data FOLDER | --path]`."""

from __future__ import annotations

import sys

from metanim.integrations.lm_eval.yamls import main

sys.exit(main())
