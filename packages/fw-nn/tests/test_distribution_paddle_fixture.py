"""fw.distribution against real Paddle 3.3.1: `distribution_cases.cases` run with
``import fw as paddle`` must give the values, shapes and dtypes recorded from Paddle in
fixtures/distribution_paddle.json (regenerate with gen_distribution_fixture.py)."""

import json
import pathlib
import sys
import warnings

import numpy as np
import pytest

import fw

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from distribution_cases import cases  # noqa: E402

FIX = json.loads((HERE / "fixtures" / "distribution_paddle.json").read_text())["cases"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    CASES = cases(fw)


# cases where fw deliberately differs from Paddle 3.3.1, with the reason
KNOWN_DIFFERENT = {
    # Paddle's Geometric.kl_divergence is the Bernoulli KL formula; fw returns the KL of the
    # geometric distributions (test_distribution_scipy checks it against the series)
    "geometric.kl": "Paddle's formula is the Bernoulli KL",
}


def test_every_case_recorded():
    assert sorted(CASES) == sorted(FIX)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_paddle(name):
    ref = FIX[name]
    if name in KNOWN_DIFFERENT:
        got = np.asarray(CASES[name]().numpy())
        assert not np.allclose(got, np.array(ref["value"]).reshape(ref["shape"])), (
            f"{name} now matches Paddle: remove it from KNOWN_DIFFERENT")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in ref:  # Paddle raises here: so must fw, with the same exception type
            with pytest.raises(Exception) as ei:
                CASES[name]()
            assert ref["error"].startswith(type(ei.value).__name__)
            return
        got = CASES[name]().numpy()
    assert list(got.shape) == ref["shape"], name
    assert str(got.dtype) == ref["dtype"], name
    want = np.array(ref["value"]).reshape(ref["shape"])
    if "imag" in ref:
        want = want + 1j * np.array(ref["imag"]).reshape(ref["shape"])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True, err_msg=name)
