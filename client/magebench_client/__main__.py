"""``python -m magebench_client``: the command line of :mod:`magebench_client.cli`."""
from __future__ import annotations

import sys

from magebench_client.cli import main

if __name__ == "__main__":
    sys.exit(main())
