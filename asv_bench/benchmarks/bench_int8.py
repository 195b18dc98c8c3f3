"""int8 execution: the Predictor on quantized (QDQ) zoo models, with fold_qdq (int8
kernels) and without it (the same QDQ program in float32), against the float model.

Targets (issue 13, 2-core reference machine): ResNet-18 (16x3x64x64 and 1x3x224x224)
and MobileNetV2 1x3x224x224 int8 >= 2.0x faster than the float model's Predictor and
faster than onnxruntime's int8 (asv_bench/int8_side_by_side.py runs that comparison);
LeNet b64 int8 not slower than float32.

- ``Int8Predictor.time_run``: ``kind`` = ``fp32`` (the float model), ``int8`` (its QDQ
  form through the whole inference pipeline) or ``qdq_no_fold`` (the QDQ form with
  ``fold_qdq`` deleted from the pipeline: what fold_qdq saves; the pipeline's per-pass
  with/without benchmark in bench_inference.py runs float models, where the pass does
  nothing);
- ``Int8Kernels``: one ResNet 3x3 conv and one classifier product, int8 vs float32
  kernels, called directly.

One oneDNN thread (``set_cpu_math_library_num_threads(1)``): the machine is shared.
The QDQ programs come from fw.core.testing.qdq (per-channel int8 weights, abs-max
calibrated int8 activations), the form fw.quantization's convert writes.
"""

import os
import sys
import tempfile

import numpy as np

import fw
import fw.inference as infer

ROWS = {"resnet18-b16@64": ("resnet18", 16, 64), "resnet18-b1@224": ("resnet18", 1, 224),
        "mobilenet_v2-b1@224": ("mobilenet_v2", 1, 224), "lenet-b64": ("lenet", 64, None)}


def _zoo():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
    import zoo

    return zoo


def _models(directory, name, batch, hw):
    """(float model path, QDQ model path, input)."""
    from fw.core.ir import load, save
    from fw.core.testing.qdq import quantize_program

    zoo = _zoo()
    fw.seed(0)
    model = zoo.build(fw, name)
    x = zoo.example_input(fw, name, batch=batch, hw=hw)
    spec = [fw.static.InputSpec([None, *x.shape[1:]], x.dtype)]
    path = fw.jit.save(fw.jit.to_static(model, input_spec=spec), os.path.join(directory, name))
    prog, _ = load(path)
    quantize_program(prog, [zoo.example_input(fw, name, batch=batch, hw=hw, seed=s).numpy()
                            for s in (1, 2)])
    qpath = os.path.join(directory, name + "_qdq.fwmodel")
    save(prog, qpath)
    return path, qpath, x.numpy()


class Int8Predictor:
    params = (list(ROWS), ["fp32", "int8", "qdq_no_fold"])
    param_names = ("model", "kind")
    timeout = 300

    def setup(self, row, kind):
        self.dir = tempfile.TemporaryDirectory()
        path, qpath, self.x = _models(self.dir.name, *ROWS[row])
        config = infer.Config(path if kind == "fp32" else qpath)
        config.disable_glog_info()
        config.set_cpu_math_library_num_threads(1)
        if kind == "qdq_no_fold":
            config.pass_builder().delete_pass("fold_qdq")
        self.pred = infer.create_predictor(config)
        self.pred.run([self.x])  # primitives created, weights prepacked

    def teardown(self, row, kind):
        self.dir.cleanup()

    def time_run(self, row, kind):
        self.pred.run([self.x])


class Int8Kernels:
    params = (["conv3x3_64@56", "matmul_16x512x1000"], ["float32", "int8"])
    param_names = ("layer", "dtype")

    def setup(self, layer, dtype):
        from fw.core import _native
        from fw.core.kernels.frozen import freeze
        from fw.core.ops import OPS

        _native.set_num_threads(1)
        rng = np.random.default_rng(0)
        one = np.ones(1, np.float32)
        if layer.startswith("conv"):
            shape, wshape = (1, 56, 56, 64), (64, 64, 3, 3)
            op = OPS["fused_conv" if dtype == "float32" else "quantized_conv2d"]
            attrs = op.canon({**op.attrs, "padding": 1, "channel_last": True,
                              "activation": "relu"})
        else:
            shape, wshape = (16, 512), (512, 1000)
            op = OPS["fused_matmul" if dtype == "float32" else "quantized_matmul"]
            attrs = op.canon({**op.attrs, "activation": "relu"})
        if dtype == "float32":
            x = rng.standard_normal(shape).astype(np.float32)
            w = rng.standard_normal(wshape).astype(np.float32)
            args = [x, w, None, None]
        else:
            x = rng.integers(0, 128, shape).astype(np.uint8)
            w = rng.integers(-127, 128, wshape).astype(np.int8)
            n = wshape[0] if layer.startswith("conv") else wshape[1]
            args = [x, w, one, np.full(n, 0.01, np.float32), None, None, None, None, None]
        freeze(w)
        self.kernel, self.args, self.attrs = op.kernels["cpu"], args, attrs
        self.kernel(*args, **attrs)

    def time_kernel(self, layer, dtype):
        self.kernel(*self.args, **self.attrs)
