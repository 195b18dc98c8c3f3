"""SciPy is optional in fw-core: erf and GELU (a BERT predictor's activation) run
without it, and the special functions that need it say how to get it."""

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fw.core._epilogue import erf_numpy


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_numpy_matches_math_erf(dtype):
    x = np.concatenate([np.linspace(-6, 6, 2001), [0.0, -0.0, 1e-8, -1e-30, 0.4999, 0.5,
                                                   np.inf, -np.inf]]).astype(dtype)
    want = np.array([math.erf(float(v)) for v in x])
    got = erf_numpy(x)
    assert got.dtype == np.dtype(dtype)
    # relative error: float32 within 3e-7 (series below 0.5, A&S 7.1.26 above); float64 exact
    tol = 3e-7 if dtype == "float32" else 1e-15
    err = np.abs(got.astype(np.float64) - want) / np.maximum(np.abs(want), 1e-30)
    assert float(err.max()) <= tol + np.finfo(dtype).eps, float(err.max())
    assert np.isnan(erf_numpy(np.array([np.nan], dtype)))[0]


def test_no_scipy_erf_gelu_work_and_special_functions_explain():
    # a child process in which `import scipy` fails, as on a deployment install
    code = textwrap.dedent("""
        import sys
        sys.modules["scipy"] = None
        sys.modules["scipy.special"] = None
        import math
        import numpy as np
        import fw
        import fw.nn.functional as F
        x = fw.to_tensor(np.linspace(-3, 3, 13).astype("float32"))
        e = fw.erf(x).numpy()
        want = np.array([math.erf(v) for v in np.linspace(-3, 3, 13)])
        assert np.abs(e - want).max() < 1e-6, e
        g = F.gelu(x).numpy()
        wg = 0.5 * np.linspace(-3, 3, 13) * (1 + np.array([math.erf(v / math.sqrt(2))
                                                            for v in np.linspace(-3, 3, 13)]))
        assert np.abs(g - wg).max() < 1e-6, g
        try:
            fw.lgamma(x)
        except Exception as err:  # the dispatcher names the op around the cause
            assert "lgamma" in str(err) and "fw-core[special]" in str(err), err
        else:
            raise AssertionError("lgamma ran without SciPy")
        assert "scipy.special" not in [k for k, v in sys.modules.items() if v is not None]
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]
