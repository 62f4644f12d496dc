"""``python -m gpunetsim ...``: the ``gpunetsim`` command (gpunetsim.cli), e.g. where the console
script is not on PATH or to pass interpreter options (``python -X importtime -m gpunetsim collective``)."""

import sys

from gpunetsim.cli import main

sys.exit(main())
