"""fw's ops against values PyTorch computed (issue 18: the record tests compare
a reference kernel with itself whenever an op has no fast kernel, so a wrong
reference passes them). The cases and their PyTorch twins are in
fixtures/torch_cases.py; fixtures/gen_torch_golden.py stored the inputs and
PyTorch's outputs in fixtures/torch_golden.npz, which is all this test reads."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from fw.core.dispatch import invoke
from fw.core.ops import OPS
from fw.core.testing import as_tuple, reference_call, to_args

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


def _load_cases():
    spec = importlib.util.spec_from_file_location("torch_cases", FIXTURES / "torch_cases.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("torch_cases", mod)  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod.CASES


CASES = _load_cases()
with np.load(FIXTURES / "torch_golden.npz") as _f:
    GOLD = {k: _f[k] for k in _f.files}


def _stored_args(case):
    """The case's arguments with every array read back from the fixture."""
    args = []
    for i, x in enumerate(case.args):
        if isinstance(x, np.ndarray):
            args.append(GOLD[f"{case.id}|in{i}"])
        elif isinstance(x, list):
            args.append([GOLD[f"{case.id}|in{i}.{j}"] for j in range(len(x))])
        else:
            args.append(x)
    return args


def _expected(case):
    out, k = [], 0
    while f"{case.id}|out{k}" in GOLD:
        out.append(GOLD[f"{case.id}|out{k}"])
        k += 1
    return out


def test_fixture_matches_the_case_table():
    """Every case has stored outputs, nothing stale is stored, and the stored inputs
    are the table's (else: rerun fixtures/gen_torch_golden.py)."""
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    stored = {k.split("|")[0] for k in GOLD}
    assert stored == set(ids), f"stale fixture: missing {sorted(set(ids) - stored)}, " \
                               f"extra {sorted(stored - set(ids))}"
    for c in CASES:
        for x, y in zip(c.args, _stored_args(c)):
            for p, q in zip(x if isinstance(x, list) else [x], y if isinstance(y, list) else [y]):
                if isinstance(p, np.ndarray):
                    np.testing.assert_array_equal(p, q, err_msg=f"{c.id}: inputs changed")


def _compare(got, want, case, k, what):
    got = np.asarray(got)
    msg = f"{case.id} ({case.op}) output {k}, {what}"
    assert got.shape == want.shape, f"{msg}: shape {got.shape} != torch's {want.shape}"
    assert got.dtype == want.dtype, f"{msg}: dtype {got.dtype} != torch's {want.dtype}"
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=msg)
    else:
        rtol, atol = case.tol
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_matches_torch(case):
    """The eager call and the reference kernel both give PyTorch's values."""
    stored = f"{case.id}|out0" in GOLD
    assert stored, f"{case.id}: not in the fixture; rerun gen_torch_golden.py"
    op = OPS[case.op]
    attrs = dict(op.attrs)
    attrs.update(case.attrs)
    args = _stored_args(case)
    want = _expected(case)
    picks = case.outputs or tuple(range(len(want)))
    assert len(picks) == len(want)
    eager = as_tuple(invoke(op, to_args(args), dict(attrs)))
    ref = as_tuple(reference_call(op, args, dict(attrs))[0])
    for k, j in enumerate(picks):
        _compare(eager[j].numpy(), want[k], case, j, "eager")
        _compare(ref[j], want[k], case, j, "reference")


def test_every_torch_case_names_a_real_op():
    assert not sorted({c.op for c in CASES} - set(OPS))
