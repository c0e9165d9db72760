"""`python -m vaultwatch`: the same command line as the `vaultwatch` console script."""

import sys

from vaultwatch.tui.entry import main

sys.exit(main())
