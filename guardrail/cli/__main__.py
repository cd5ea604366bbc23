"""``python -m guardrail.cli``."""

import sys

from guardrail.cli import main

sys.exit(main())
