"""Record real Paddle 3.3.1's results for the functions of issue 16's last names
(fractional max pooling, flash_attn_qkvpacked, multi_label_margin_loss,
class_center_sample, rnnt_loss with its gradient, adaptive_log_softmax_with_loss) into
fixtures/paddle_names.npz. Run once with a Python that has Paddle (CI never needs it):

    /work/tmp/paddle-venv/bin/python packages/fw-nn/tests/gen_names_fixture.py

Inputs are drawn here with NumPy (seeded) and stored next to Paddle's outputs, so the
test feeds fw the very same arrays. Paddle 3.3's CPU build has no kernels for
flash_attn_varlen_qkvpacked, flash_attention_v3_varlen, sparse_attention,
margin_cross_entropy and flashmask_attention; their tests compare with NumPy instead.
"""

import pathlib
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def main():
    warnings.simplefilter("ignore")
    import paddle
    import paddle.nn.functional as F

    rng = np.random.default_rng(16)
    out = {}

    # fractional max pooling: disjoint and overlapping regions, 2-D and 3-D, with masks
    x2 = rng.standard_normal((2, 3, 9, 9)).astype(np.float64)
    out["fmp2_x"] = x2
    cases2 = [("a", 5, None, 0.3), ("b", [7, 7], 2, 0.5), ("c", [4, 6], None, 0.7),
              ("d", [3, 8], [3, 2], 0.25)]
    for tag, size, k, u in cases2:
        xt = paddle.to_tensor(x2, stop_gradient=False)
        o, m = F.fractional_max_pool2d(xt, size, kernel_size=k, random_u=u, return_mask=True)
        o.sum().backward()
        out[f"fmp2_{tag}_out"], out[f"fmp2_{tag}_mask"] = o.numpy(), m.numpy()
        out[f"fmp2_{tag}_grad"] = xt.grad.numpy()
    x3 = rng.standard_normal((1, 2, 7, 6, 8)).astype(np.float64)
    out["fmp3_x"] = x3
    for tag, size, k, u in [("a", 3, None, 0.4), ("b", [4, 3, 5], 2, 0.6)]:
        o, m = F.fractional_max_pool3d(paddle.to_tensor(x3), size, kernel_size=k, random_u=u,
                                       return_mask=True)
        out[f"fmp3_{tag}_out"], out[f"fmp3_{tag}_mask"] = o.numpy(), m.numpy()

    # flash_attn_qkvpacked (Paddle's CPU math path): causal and not, with weights
    qkv = rng.standard_normal((2, 5, 3, 2, 8)).astype(np.float32)
    out["fa_qkv"] = qkv
    for causal in (False, True):
        o, w = F.flash_attn_qkvpacked(paddle.to_tensor(qkv), causal=causal,
                                      return_softmax=True)
        out[f"fa_out_{int(causal)}"], out[f"fa_w_{int(causal)}"] = o.numpy(), w.numpy()

    # multi_label_margin_loss
    xm = rng.standard_normal((4, 5)).astype(np.float64)
    ym = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, -1, 2, 2, 2]])
    out["mlml_x"], out["mlml_y"] = xm, ym
    xt = paddle.to_tensor(xm, stop_gradient=False)
    loss = F.multi_label_margin_loss(xt, paddle.to_tensor(ym), reduction="none")
    loss.sum().backward()
    out["mlml_none"], out["mlml_grad"] = loss.numpy(), xt.grad.numpy()
    out["mlml_mean"] = F.multi_label_margin_loss(paddle.to_tensor(xm),
                                                 paddle.to_tensor(ym)).numpy()

    # class_center_sample: the remapped labels and the positive centers are deterministic
    lab = np.array([7, 2, 7, 11, 2, 0])
    r, c = F.class_center_sample(paddle.to_tensor(lab), 20, 8)
    out["ccs_label"], out["ccs_remapped"], out["ccs_centers"] = lab, r.numpy(), c.numpy()

    # rnnt_loss: values per sequence, reductions, and the gradient (FastEmit on and off)
    acts = rng.standard_normal((2, 4, 3, 5)).astype(np.float64) * 0.5 - 1.0
    labels = np.array([[1, 3], [2, 0]], np.int32)
    ilen, llen = np.array([4, 3], np.int32), np.array([2, 1], np.int32)
    out["rnnt_x"], out["rnnt_y"], out["rnnt_il"], out["rnnt_ll"] = acts, labels, ilen, llen
    for red in ("none", "mean", "sum"):
        out[f"rnnt_{red}"] = F.rnnt_loss(paddle.to_tensor(acts), paddle.to_tensor(labels),
                                         paddle.to_tensor(ilen), paddle.to_tensor(llen),
                                         reduction=red).numpy()
    for lam in (0.0, 0.001):
        xt = paddle.to_tensor(acts, stop_gradient=False)
        loss = F.rnnt_loss(xt, paddle.to_tensor(labels), paddle.to_tensor(ilen),
                           paddle.to_tensor(llen), fastemit_lambda=lam, reduction="sum")
        loss.backward()
        out[f"rnnt_grad_{lam}"] = xt.grad.numpy()

    # adaptive_log_softmax_with_loss (functional, given weights)
    xa = rng.standard_normal((6, 8)).astype(np.float32)
    la = np.array([0, 1, 3, 5, 9, 2])
    hw = rng.standard_normal((8, 4)).astype(np.float32)  # shortlist 2 + 2 clusters
    hb = rng.standard_normal((4,)).astype(np.float32)
    t0 = [rng.standard_normal((8, 4)).astype(np.float32),
          rng.standard_normal((4, 3)).astype(np.float32)]
    t1 = [rng.standard_normal((8, 2)).astype(np.float32),
          rng.standard_normal((2, 5)).astype(np.float32)]
    for k, v in {"asm_x": xa, "asm_y": la, "asm_hw": hw, "asm_hb": hb, "asm_t00": t0[0],
                 "asm_t01": t0[1], "asm_t10": t1[0], "asm_t11": t1[1]}.items():
        out[k] = v
    o, loss = F.adaptive_log_softmax_with_loss(
        paddle.to_tensor(xa), paddle.to_tensor(la), paddle.to_tensor(hw),
        [[paddle.to_tensor(a) for a in t0], [paddle.to_tensor(a) for a in t1]], [2, 5, 10],
        paddle.to_tensor(hb))
    out["asm_out"], out["asm_loss"] = o.numpy(), loss.numpy()

    np.savez_compressed(HERE / "fixtures" / "paddle_names.npz", **out)
    print(f"wrote {len(out)} arrays")


if __name__ == "__main__":
    main()
