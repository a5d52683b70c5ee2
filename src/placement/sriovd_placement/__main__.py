# SPDX-License-Identifier: LGPL-2.1-or-later
# __main__.py — "python3 -m sriovd_placement": the program from a source tree, for tests.
import sys

from .main import main

sys.exit(main())
