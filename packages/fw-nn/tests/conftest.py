"""fw-nn's tests import their helpers from `nn_testutil` (next to this file)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
