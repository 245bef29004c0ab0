"""``python -m kafkapy``: the standalone broker, the same as the ``kafkapy-server`` command
(see :mod:`kafkapy.cli`)."""

from __future__ import annotations

import sys

from kafkapy.cli import main

if __name__ == "__main__":
    sys.exit(main())
