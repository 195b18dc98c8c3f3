"""fw.sparse against a committed fixture of real Paddle 3.3.1 outputs (recorded by
gen_sparse_fixture.py from the same sparse_cases as run here): same pattern (indices,
crows, cols), shape, dtype and values."""

import json
import pathlib

import numpy as np
import pytest
from gen_sparse_fixture import dump
from sparse_cases import cases

import fw

FIXTURE = np.load(pathlib.Path(__file__).parent / "fixtures" / "sparse_paddle.npz")
META = json.loads(str(FIXTURE["__meta__"]))
CASES = cases(fw)


def test_fixture_covers_every_case():
    assert set(META["kinds"]) | set(META["errors"]) == set(CASES)
    # Paddle 3.3's CPU build cannot differentiate CSR's to_dense; nothing else failed there
    assert set(META["errors"]) == {"grad_softmax_csr"}


# Paddle stores a full sum (shape [1]) with 1-D indices [0] and 0-D values; fw keeps
# the regular layout (indices [[0]], values [v]): the same tensor
REGULAR_LAYOUT = {"sum_coo_None_False"}


def test_full_sum_layout():
    got = CASES["sum_coo_None_False"]()
    assert got.shape == [1] and got.indices().numpy().tolist() == [[0]]
    np.testing.assert_allclose(got.values().numpy(),
                               [float(FIXTURE["sum_coo_None_False/values"])], rtol=1e-6)


@pytest.mark.parametrize("name", sorted(set(META["kinds"]) - REGULAR_LAYOUT))
def test_matches_paddle(name):
    got = dump(CASES[name]())
    assert got.pop("kind") == META["kinds"][name]
    for key, value in got.items():
        want = FIXTURE[f"{name}/{key}"]
        value = np.asarray(value)
        assert value.shape == want.shape, (key, value.shape, want.shape)
        if key == "values":
            assert value.dtype == want.dtype, (value.dtype, want.dtype)
            np.testing.assert_allclose(value, want, rtol=2e-6, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(value, want, err_msg=key)


# Paddle names fw.sparse does not provide (see fw-nn's README): the GPU-only
# implicit-GEMM conv variants, SyncBatchNorm (multi-GPU)
NOT_PROVIDED = {"sparse.nn.SyncBatchNorm",
                "sparse.nn.functional.subm_conv2d_igemm",
                "sparse.nn.functional.subm_conv3d_igemm"}


def _fw_signature(obj):
    import inspect

    fn = obj.__init__ if inspect.isclass(obj) else obj
    return [[p.name, None if p.default is p.empty else p.default, p.default is p.empty]
            for p in inspect.signature(fn).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


@pytest.mark.parametrize("qual", sorted(set(META["signatures"]) - NOT_PROVIDED))
def test_signature_matches_paddle(qual):
    obj = fw
    for part in qual.split("."):
        obj = getattr(obj, part)
    assert _fw_signature(obj) == META["signatures"][qual]
