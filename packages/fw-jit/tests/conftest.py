"""fw-jit's tests import their helpers from `jit_testutil` (next to this file)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
