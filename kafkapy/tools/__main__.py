"""``python -m kafkapy.tools <tool> ...``: the same as the ``kafkapy`` console script."""

import sys

from kafkapy.tools.main import main

sys.exit(main())
