"""The native layer validates its own inputs (docs/reliability.md, "Native input
validation"): fw.core._C is reachable, so its entry points get extreme geometry from a
hypothesis loop in a subprocess (a signal fails the test) and must answer with a Python
exception, never a crash."""

import os
import subprocess
import sys

import numpy as np
import pytest

from fw.core import _native

pytestmark = pytest.mark.skipif(not _native.available, reason="no native extension")

LOOP = r"""
import numpy as np
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st
from fw.core import _native
C = _native.C
huge = st.sampled_from([-2**63, -2**62, -1, 0, 1, 2, 3, 2**31, 2**62, 2**63 - 1])
small = st.integers(-2, 5)
geo = st.one_of(huge, small)
calls = [0]

@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(k=st.lists(geo, min_size=2, max_size=2), s=st.lists(geo, min_size=2, max_size=2),
       pb=st.lists(geo, min_size=2, max_size=2), pe=st.lists(geo, min_size=2, max_size=2),
       d=st.lists(geo, min_size=2, max_size=2), g=geo, oh=st.integers(0, 6),
       which=st.integers(0, 5))
def loop(k, s, pb, pe, d, g, oh, which):
    x = np.ones((1, 4, 4, 4), np.float32)
    y = np.zeros((1, 4, oh, oh), np.float32)
    w = np.ones((4, 4, 3, 3), np.float32)
    calls[0] += 1
    try:
        if which == 0:
            C.max_pool_forward(x, y, None, k, s, pb, pe, False)
        elif which == 1:
            C.avg_pool_forward(x, y, k, s, pb, pe, True, 0.0, False)
        elif which == 2:
            C.avg_pool_backward(y, x.copy(), k, s, pb, pe, True, 0.0, False)
        elif which == 3:
            C.conv_forward(x, w, y, None, None, "none", s, d, pb, pe, g, False)
        elif which == 4:
            C.conv_backward_data(y, w, x.copy(), s, d, pb, pe, g, False)
        else:
            C.conv_backward_weights(x, y, w.copy(), None, s, d, pb, pe, g, False)
    except (ValueError, TypeError, OverflowError, RuntimeError):
        pass

loop()
print("CALLS", calls[0])
"""


def test_native_entry_points_survive_extreme_geometry():
    p = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True,
                       timeout=240, env=dict(os.environ))
    assert p.returncode == 0 and "CALLS" in p.stdout, f"exit {p.returncode}\n{p.stderr[-3000:]}"


@pytest.mark.parametrize("pads", [([2**62, 2**62], [2**62, 2**62]), ([3, 0], [0, 0])])
def test_pool_rejects_absurd_or_oversized_padding(pads):
    # 2**62 paddings overflowed int64 in the output-size check (then read far outside x)
    x = np.ones((1, 1, 4, 4), np.float32)
    y = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(ValueError, match="max_pool"):
        _native.C.max_pool_forward(x, y, None, [2, 2], [1, 1], *pads, False)

