"""The Predictor with and without ``Config.enable_mkldnn_bfloat16()`` (the ``cpu_bfloat16``
pass, fw.core.ir.passes.cpu_bfloat16) on the zoo rows it is for: the BERT-style encoder at
batch 1 and 8, ResNet-18 at batch 1 (224 and 64), one oneDNN thread. On a CPU without
native bf16 the switch stays off and both columns time float32 (the setup says so)."""

import os
import sys
import tempfile
import warnings

import fw
import fw.inference as infer

_CASES = {"bert_encoder-b1": ("bert_encoder", 1, None),
          "bert_encoder-b8": ("bert_encoder", 8, None),
          "resnet18-b1@224": ("resnet18", 1, 224), "resnet18-b1@64": ("resnet18", 1, 64)}


class Bf16WithWithout:
    params = (list(_CASES), [True, False])
    param_names = ("model", "bf16")

    def setup(self, case, bf16):
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests"))
        import zoo

        name, batch, hw = _CASES[case]
        self.dir = tempfile.TemporaryDirectory()
        fw.seed(0)
        model = zoo.build(fw, name)
        x = zoo.example_input(fw, name, batch=batch, hw=hw)
        prefix = os.path.join(self.dir.name, name)
        fw.jit.save(fw.jit.to_static(model, input_spec=[fw.static.InputSpec(
            [None, *x.shape[1:]], x.dtype)]), prefix)
        config = infer.Config(prefix)
        config.disable_glog_info()
        config.set_cpu_math_library_num_threads(1)
        if bf16:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # no native bf16: float32
                config.enable_mkldnn_bfloat16()
        self.pred, self.x = infer.create_predictor(config), [x.numpy()]
        self.pred.run(self.x)  # primitives created, weights prepacked

    def teardown(self, case, bf16):
        self.dir.cleanup()

    def time_run(self, case, bf16):
        self.pred.run(self.x)
