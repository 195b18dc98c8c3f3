"""Record real Paddle 3.3.1's results of the deterministic Tensor members that issue 16
added to fw (fill_diagonal_, fill_diagonal_tensor, resize_, set_, cast_, transpose_,
float8 casts, check_shape errors, random_ dtypes) into
fixtures/paddle_tensor_methods.json. Run once with a Python that has Paddle (CI never
needs it):

    /work/tmp/paddle-venv/bin/python packages/fw-core/tests/gen_tensor_methods_fixture.py
"""

import json
import pathlib
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def main():
    warnings.simplefilter("ignore")
    import paddle

    out = {}
    vals = np.array([0.3, -1.7, 1.5, 300.0, 500.0, 1e-3, -0.0625, 57344.0, 1e6], np.float32)
    out["float8_in"] = vals.tolist()
    for name in ("float8_e4m3fn", "float8_e5m2"):
        a = paddle.to_tensor(vals).astype(getattr(paddle, name))
        out[name] = a.astype("float32").numpy().tolist()
    cases = {}
    x = paddle.to_tensor(np.arange(12, dtype="float32").reshape(3, 4))
    x.fill_diagonal_(-1.0, offset=-1)
    cases["fill_diag_offset_neg"] = x.numpy().tolist()
    x = paddle.zeros([3, 4])
    x.fill_diagonal_(5.0, offset=1)
    cases["fill_diag_offset_pos"] = x.numpy().tolist()
    for wrap in (True, False):
        x = paddle.zeros([7, 3])
        x.fill_diagonal_(5.0, wrap=wrap)
        cases[f"fill_diag_wrap_{wrap}"] = x.numpy().tolist()
    x = paddle.zeros([3, 3, 3])
    x.fill_diagonal_(2.0)
    cases["fill_diag_3d"] = x.numpy().tolist()
    x = paddle.ones([2, 3, 4])
    cases["fill_diag_tensor"] = x.fill_diagonal_tensor(paddle.full([3, 2], 7.0), offset=1,
                                                       dim1=0, dim2=2).numpy().tolist()
    x = paddle.zeros([2, 2])
    x.fill_diagonal_tensor_(paddle.to_tensor([7.0, 8.0]))
    cases["fill_diag_tensor_"] = x.numpy().tolist()
    for shape, fz in (([2, 3], True), ([3], False), ([2, 2], False)):
        x = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])
        x.resize_(shape, fill_zero=fz)
        cases[f"resize_{shape}_{fz}"] = x.numpy().tolist()
    src = paddle.to_tensor([[11.0, 22.0, 33.0], [1.0, 2.0, 3.0]])
    x = paddle.to_tensor([1.0])
    x.set_(src, [2, 2], [1, 2], 4)
    cases["set_strided"] = x.numpy().tolist()
    x = paddle.to_tensor([1.0])
    x.set_(src, [3])
    cases["set_shape"] = x.numpy().tolist()
    x = paddle.to_tensor([1.5, 2.7, -3.2])
    x.cast_("int32")
    cases["cast_"] = [x.numpy().tolist(), str(x.dtype)]
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(1, 2, 3))
    x.transpose_([2, 0, 1])
    cases["transpose_"] = [x.numpy().tolist(), list(x.shape)]
    x = paddle.to_tensor([1.0, 2.0])
    x.copy_(paddle.to_tensor([5.0, 6.0]), False)
    cases["copy_"] = x.numpy().tolist()
    t = paddle.ones([2, 3])
    cases["members"] = {"get_device": t.get_device(), "is_dist": t.is_dist(),
                        "sparse_dim": t.sparse_dim(), "dense_dim": t.dense_dim(),
                        "is_selected_rows": t.is_selected_rows(), "layout": t.layout,
                        "inplace_version": t.inplace_version, "device": t.device}
    errs = {}
    for bad in ([2, 3.5], [2, -1], "23"):
        try:
            paddle.check_shape(bad, "fill_constant")
            errs[repr(bad)] = None
        except Exception as e:  # noqa: BLE001 - the error type is what is recorded
            errs[repr(bad)] = type(e).__name__
    cases["check_shape_errors"] = errs
    out["cases"] = cases
    with open(HERE / "fixtures" / "paddle_tensor_methods.json", "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    print("wrote", len(cases), "cases")


if __name__ == "__main__":
    main()
