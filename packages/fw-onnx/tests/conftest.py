"""fw-onnx's tests import their helpers from `onnx_testutil` (next to this file) and
the deployment zoo from the repository's tests/zoo.py."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(_HERE, os.pardir, os.pardir, os.pardir, "tests"))
