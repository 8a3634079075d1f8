"""``python -m synthreview``."""

import sys

from synthreview.cli import main

sys.exit(main())
