"""fw on an NVIDIA GPU next to PyTorch's CUDA build and CuPy, in one process, on the
workloads of the GPU issue. Usage (on a machine with a GPU, CuPy and PyTorch):

    FW_DISABLE_NATIVE=1 python asv_bench/gpu_side_by_side.py [--only NAME] [--json FILE]

Every timed closure is run `n` times and the device is synchronised once after the
loop, so an eager framework's launch overhead counts, as it does in training; medians
of several such loops are reported. GEMMs print TFLOP/s (8192x8192x8192: 1.1 TFLOP
per product); steps print milliseconds. Rows whose framework is missing print "-".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _sync_all():
    import cupy

    cupy.cuda.Device().synchronize()
    try:
        import torch

        torch.cuda.synchronize()
    except ImportError:
        pass


def bench(fn, n=None, rounds=5, min_time=0.05):
    """Median seconds per call of fn (n calls per round, one sync per round)."""
    fn()
    _sync_all()
    if n is None:
        n = 1
        while True:
            t = time.perf_counter()
            for _ in range(n):
                fn()
            _sync_all()
            if time.perf_counter() - t >= min_time:
                break
            n *= 2
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        _sync_all()
        times.append((time.perf_counter() - t) / n)
    return statistics.median(times)


# ---------------------------------------------------------------- GEMM
def gemm_rows(size, dtype_name):
    import cupy
    import ml_dtypes

    import fw

    flops = 2.0 * size ** 3
    npdt = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16,
            "float32": np.float32}[dtype_name]
    rng = cupy.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=cupy.float32).astype(npdt)
    b = rng.standard_normal((size, size), dtype=cupy.float32).astype(npdt)
    out = {}
    fa, fb = fw.to_tensor(a), fw.to_tensor(b)
    assert fa.place.is_gpu_place() and fa.dtype.name == dtype_name
    out["fw"] = flops / bench(lambda: fw.matmul(fa, fb)) / 1e12
    out["cupy"] = flops / bench(lambda: cupy.matmul(a, b)) / 1e12
    try:
        import torch

        tdt = {"bfloat16": torch.bfloat16, "float16": torch.float16,
               "float32": torch.float32}[dtype_name]
        ta = torch.randn(size, size, device="cuda").to(tdt)
        tb = torch.randn(size, size, device="cuda").to(tdt)
        out["torch"] = flops / bench(lambda: ta @ tb) / 1e12
    except ImportError:
        pass
    # same values as the reference product (float32 accumulation): a check, not a timing
    got = fw.matmul(fa[:64], fb).numpy().astype(np.float32)
    want = cupy.asnumpy(a[:64].astype(cupy.float32) @ b.astype(cupy.float32))
    err = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))
    out["max_rel_err"] = err
    return out


# ---------------------------------------------------------------- training steps
def fw_steps(name, graphs=False):
    """(eager step, to_static step, their losses) of fw on the gpu: the cpu benchmarks'
    models and step pair (bench_jit._pair), with parameters and data on the gpu.
    `graphs`: the to_static step is compiled with FW_GPU_GRAPHS=1 (CUDA-graph replay)."""
    from benchmarks.bench_jit import _pair
    from benchmarks.bench_training import _paddle_api_model, data

    import fw

    fw.set_device("gpu")
    fw.seed(0)
    if name == "transformer":
        opt, loss_fn = (lambda ps: fw.optimizer.AdamW(1e-3, parameters=ps),
                        fw.nn.functional.mse_loss)
    else:
        opt, loss_fn = (lambda ps: fw.optimizer.Adam(1e-3, parameters=ps),
                        fw.nn.functional.cross_entropy)
    x, y = (fw.to_tensor(a) for a in data(name))
    assert x.place.is_gpu_place()
    old = os.environ.get("FW_GPU_GRAPHS")
    os.environ["FW_GPU_GRAPHS"] = "1" if graphs else "0"
    try:  # (the switch is read when the program is compiled: in _pair's warm-up)
        eager, static = _pair(lambda: _paddle_api_model(fw.nn, name), opt, loss_fn, x, y)
    finally:
        if old is None:
            os.environ.pop("FW_GPU_GRAPHS", None)
        else:
            os.environ["FW_GPU_GRAPHS"] = old
    le = [float(eager(x, y)) for _ in range(3)]
    ls = [float(static(x, y)) for _ in range(3)]
    return (lambda: eager(x, y)), (lambda: static(x, y)), le, ls


def torch_step(name):
    import torch
    from benchmarks.bench_training import _torch_model, data

    torch.manual_seed(0)
    model = _torch_model(name).cuda()
    if name == "transformer":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        loss_fn = torch.nn.functional.mse_loss
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = torch.nn.functional.cross_entropy
    x, y = (torch.from_numpy(a).cuda() for a in data(name))

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def train_rows(name):
    out = {}
    eager, static, le, ls = fw_steps(name)
    out["fw eager"] = bench(eager) * 1e3
    out["fw to_static"] = bench(static) * 1e3
    out["losses eager/static"] = [le, ls]
    # ---- gpurt (issue 17 runtime): the to_static step replayed as a CUDA graph
    try:
        _, graphed, _, lg = fw_steps(name, graphs=True)
        out["fw to_static graphs"] = bench(graphed) * 1e3
        out["losses graphs"] = lg
    except Exception as e:  # noqa: BLE001 - reported in the row, the others still run
        out["fw to_static graphs"] = f"error: {type(e).__name__}: {e}"
    # ---- end gpurt
    try:
        out["torch eager"] = bench(torch_step(name)) * 1e3
    except ImportError:
        pass
    return out


# ---------------------------------------------------------------- ResNet-18 inference
def resnet_rows(batch=64):
    import fw

    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    import zoo

    out = {}
    fw.set_device("gpu")
    fw.seed(0)
    model = zoo.build(fw, "resnet18")
    model.eval()
    x = fw.to_tensor(np.random.default_rng(0).standard_normal((batch, 3, 224, 224))
                     .astype(np.float32))

    def run():
        with fw.no_grad():
            return model(x)
    out["fw eager"] = bench(run, rounds=3) * 1e3
    try:
        import torch
        from zoo_torch import build as tbuild

        tm = tbuild("resnet18").cuda().eval()
        tx = torch.from_numpy(x.numpy()).cuda()

        def trun():
            with torch.no_grad():
                return tm(tx)
        out["torch eager"] = bench(trun, rounds=3) * 1e3
    except ImportError:
        pass
    return out


# ---------------------------------------------------------------- [gpuk] kernel rows
# (issue 17's RawKernels, fw.core.kernels.gpu.{conv,pool,softmax,norm}: each op's gpu
# kernel next to its NumPy reference run on the same CuPy arrays, and PyTorch)
def kernel_rows():
    import cupy

    from fw.core.ops import OPS
    from fw.core.place import get_backend

    get_backend("gpu")  # makes the backend, which attaches the gpu kernels
    rng = cupy.random.default_rng(0)

    def randn(*shape):
        return rng.standard_normal(shape, dtype=cupy.float32)

    x = randn(64, 64, 56, 56)
    w = randn(64, 64, 3, 3)
    w1 = randn(64, 1, 3, 3)
    g = randn(64, 64, 56, 56)
    xs = randn(2048, 1000)
    xl = randn(2048, 512)
    lab = cupy.asarray(np.random.default_rng(0).integers(0, 1000, 2048))
    geo = {"stride": (1,), "padding": (1,), "dilation": (1,), "groups": 1,
           "channel_last": False}
    cases = {
        "conv 3x3 64->64 56x56 b64": ("conv", (x, w, None), geo, "conv"),
        "conv_transpose (input grad)": ("conv_transpose", (g, w, None),
                                        dict(geo, output_padding=(0,), output_size=(56, 56)),
                                        "convt"),
        "conv_grad_weight": ("conv_grad_weight", (x, g),
                             dict(geo, kernel_size=(3, 3)), "wgrad"),
        "depthwise conv 3x3 64ch": ("conv", (x, w1, None), dict(geo, groups=64), "dw"),
        "max_pool 3x3 s2 p1": ("max_pool", (x,), {"kernel_size": (3,), "stride": (2,),
                                                  "padding": (1,), "ceil_mode": False,
                                                  "channel_last": False}, "maxpool"),
        "adaptive_avg_pool 1": ("adaptive_avg_pool", (x,), {"output_size": (1,),
                                                            "channel_last": False}, "gap"),
        "softmax 2048x1000": ("softmax", (xs,), {"axis": -1}, "softmax"),
        "layer_norm 2048x512": ("layer_norm", (xl, None, None),
                                {"epsilon": 1e-5, "begin_norm_axis": 1}, "ln"),
        "cross_entropy 2048x1000": ("cross_entropy_with_softmax", (xs, lab, None),
                                    {"soft_label": False, "ignore_index": -100,
                                     "reduction": "mean", "axis": -1, "use_softmax": True},
                                    "ce"),
    }
    try:
        import torch
        import torch.nn.functional as F

        tx = torch.as_tensor(x, device="cuda")
        tw, tw1, tg = (torch.as_tensor(a, device="cuda") for a in (w, w1, g))
        txs, txl = torch.as_tensor(xs, device="cuda"), torch.as_tensor(xl, device="cuda")
        tlab = torch.as_tensor(lab, device="cuda")
        tfns = {
            "conv": lambda: F.conv2d(tx, tw, padding=1),
            "convt": lambda: F.conv_transpose2d(tg, tw, padding=1),
            "wgrad": lambda: torch.nn.grad.conv2d_weight(tx, tw.shape, tg, padding=1),
            "dw": lambda: F.conv2d(tx, tw1, padding=1, groups=64),
            "maxpool": lambda: F.max_pool2d(tx, 3, 2, 1),
            "gap": lambda: F.adaptive_avg_pool2d(tx, 1),
            "softmax": lambda: torch.softmax(txs, -1),
            "ln": lambda: F.layer_norm(txl, (512,)),
            "ce": lambda: F.cross_entropy(txs, tlab),
        }
    except ImportError:
        tfns = {}
    out = {}
    for label, (name, args, attrs, tkey) in cases.items():
        op = OPS[name]
        fast = op.kernels.get("gpu")
        row = {}
        if fast is not None:
            row["fw kernel"] = bench(lambda f=fast, a=args, k=attrs: f(*a, **k), rounds=3) * 1e3
        row["fw reference"] = bench(lambda f=op.reference, a=args, k=attrs: f(*a, **k),
                                    rounds=3) * 1e3
        if tkey in tfns:
            row["torch"] = bench(tfns[tkey], rounds=3) * 1e3
        out[label + " (ms)"] = row
    return out


def resnet_tf32_rows(batch=64):
    """ResNet-18 inference with FW_GPU_CONV_TF32 (the convolution GEMMs on TF32 tensor
    cores, as PyTorch's cuDNN convolutions run by default)."""
    import fw
    from fw.core.kernels.gpu import conv as gconv

    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    import zoo

    fw.set_device("gpu")
    fw.seed(0)
    model = zoo.build(fw, "resnet18")
    model.eval()
    x = fw.to_tensor(np.random.default_rng(0).standard_normal((batch, 3, 224, 224))
                     .astype(np.float32))

    def run():
        with fw.no_grad():
            return model(x)
    old = gconv.TF32
    gconv.TF32 = True
    try:
        return {"fw eager": bench(run, rounds=3) * 1e3}
    finally:
        gconv.TF32 = old
# ---------------------------------------------------------------- [gpuk] end


# ---------------------------------------------------------------- [gpudnn] cuDNN rows
# (fw.core.kernels.gpu.cudnn, off by default: these rows install its kernels for their
# own duration, whatever FW_GPU_CUDNN says, and put the previous kernels back)
class _with_cudnn:
    def __init__(self, tf32=False):
        self.tf32 = tf32

    def __enter__(self):
        import cupy

        from fw.core.kernels.gpu import conv as gconv
        from fw.core.kernels.gpu import cudnn
        from fw.core.ops import OPS
        from fw.core.place import get_backend

        get_backend("gpu")
        names = ("conv", "conv_transpose", "conv_grad_weight")
        self.saved = {n: OPS[n].kernels.get("gpu") for n in names}
        self.old_env, self.old_tf32 = os.environ.get("FW_GPU_CUDNN"), gconv.TF32
        os.environ["FW_GPU_CUDNN"] = "1"
        gconv.TF32 = self.tf32
        ks = cudnn.kernels(cupy, {n: self.saved[n] or OPS[n].reference for n in names})
        if not ks:
            raise RuntimeError(f"cuDNN not found (tried {cudnn.library_candidates()})")
        for n, fn in ks.items():
            OPS[n].kernels["gpu"] = fn
        return ks

    def __exit__(self, *exc):
        from fw.core.kernels.gpu import conv as gconv
        from fw.core.ops import OPS

        for n, fn in self.saved.items():
            if fn is None:
                OPS[n].kernels.pop("gpu", None)
            else:
                OPS[n].kernels["gpu"] = fn
        gconv.TF32 = self.old_tf32
        if self.old_env is None:
            os.environ.pop("FW_GPU_CUDNN", None)
        else:
            os.environ["FW_GPU_CUDNN"] = self.old_env


def _cudnn_cases(ks, x, w, w1, g, geo):
    return {
        "conv 3x3 64->64 56x56 b64": lambda: ks["conv"](x, w, None, **geo),
        "conv_transpose (input grad)": lambda: ks["conv_transpose"](
            g, w, None, output_padding=(0,), output_size=(56, 56), **geo),
        "conv_grad_weight": lambda: ks["conv_grad_weight"](x, g, kernel_size=(3, 3), **geo),
        "depthwise conv 3x3 64ch": lambda: ks["conv"](x, w1, None, **dict(geo, groups=64)),
    }


def cudnn_kernel_rows():
    """The conv rows of `kernel_rows` through cuDNN: fp32 (FMA, then TF32) and fp16."""
    import cupy

    rng = cupy.random.default_rng(0)
    geo = {"stride": (1,), "padding": (1,), "dilation": (1,), "groups": 1,
           "channel_last": False}
    out = {}
    for dt, tf32 in (("float32", False), ("float32", True), ("float16", False)):
        x = rng.standard_normal((64, 64, 56, 56), dtype=cupy.float32).astype(dt)
        w = rng.standard_normal((64, 64, 3, 3), dtype=cupy.float32).astype(dt)
        w1 = rng.standard_normal((64, 1, 3, 3), dtype=cupy.float32).astype(dt)
        g = rng.standard_normal((64, 64, 56, 56), dtype=cupy.float32).astype(dt)
        with _with_cudnn(tf32) as ks:
            cases = _cudnn_cases(ks, x, w, w1, g, geo)
            tag = f"{dt}{' TF32' if tf32 else ''}"
            for label, fn in cases.items():
                out[f"{label} {tag} (ms)"] = bench(fn, rounds=3) * 1e3
    return out


def resnet_cudnn_rows(batch=64):
    """ResNet-18 inference with the cuDNN convolutions (fp32 FMA, then TF32)."""
    out = {}
    for tf32 in (False, True):
        with _with_cudnn(tf32):
            out["fw eager cudnn" + (" TF32" if tf32 else "")] = \
                resnet_rows(batch)["fw eager"]
    return out
# ---------------------------------------------------------------- [gpudnn] end


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import cupy

    import fw

    props = fw.device.cuda.get_device_properties()
    print(f"# {props.name}, CuPy {cupy.__version__}, fw {fw.__version__}", flush=True)
    rows = {
        "gemm bf16 8192 (TFLOP/s)": lambda: gemm_rows(8192, "bfloat16"),
        "gemm fp16 8192 (TFLOP/s)": lambda: gemm_rows(8192, "float16"),
        "gemm fp32 4096 (TFLOP/s, no TF32)": lambda: gemm_rows(4096, "float32"),
        "train mlp b128 Adam (ms)": lambda: train_rows("mlp"),
        "train lenet b64 Adam (ms)": lambda: train_rows("lenet"),
        "train transformer 2L d128 b16 AdamW (ms)": lambda: train_rows("transformer"),
        "resnet18 b64 inference (ms)": resnet_rows,
        "resnet18 b64 inference, TF32 conv GEMMs (ms)": resnet_tf32_rows,  # [gpuk]
        "gpu kernels, fw kernel / reference / torch": kernel_rows,  # [gpuk]
        "cudnn conv kernels (ms)": cudnn_kernel_rows,  # [gpudnn]
        "resnet18 b64 inference, cudnn convs (ms)": resnet_cudnn_rows,  # [gpudnn]
    }
    results = {}
    for label, fn in rows.items():
        if args.only and args.only not in label:
            continue
        try:
            results[label] = fn()
        except Exception as e:
            results[label] = {"error": f"{type(e).__name__}: {e}"}
            traceback.print_exc()
        print(f"{label}: {json.dumps(results[label])}", flush=True)
        if args.json:  # [gpuk] after every row: a run cut short by its timeout keeps them
            with open(args.json, "w") as f:
                json.dump({"device": props.name, "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
