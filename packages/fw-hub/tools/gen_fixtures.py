"""Write fw-hub's checkpoint fixtures with the real frameworks (run once, results committed).

    /work/tmp/paddle-venv/bin/python packages/fw-hub/tools/gen_fixtures.py paddle
    /work/tmp/torch-opsrules/bin/python packages/fw-hub/tools/gen_fixtures.py torch

Output: packages/fw-hub/tests/fixtures/
- paddle_mlp.pdparams (paddle.save, protocol 4), paddle_mlp_p2.pdparams (protocol 2),
  paddle_mlp.pdopt (an Adam state after one step), paddle_nested.pdparams (a Tensor
  saved outside a state dict, beside plain values), paddle_expected.npz;
- torch_mlp.bin (torch.save of a state dict: a square Linear, BatchNorm1d with its
  int64 num_batches_tracked, a Linear 4->3), torch_views.pt (tensors sharing one
  storage with offsets and strides; float16/bfloat16/int8/bool), torch_expected.npz
  (bfloat16 stored as its uint16 bits; the MLP's eval-mode output on a fixed input).

CI never needs Paddle or PyTorch: the tests read these files with fw and compare
against the .npz written here from the frameworks' own tensors.
"""

import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")


def paddle_fixtures():
    import paddle

    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.BatchNorm1D(4),
                                 paddle.nn.Linear(4, 3))
    model(paddle.randn([8, 4]))  # moves the BN statistics off their defaults
    sd = model.state_dict()
    paddle.save(sd, os.path.join(OUT, "paddle_mlp.pdparams"))
    paddle.save(sd, os.path.join(OUT, "paddle_mlp_p2.pdparams"), protocol=2)
    # copied now: the optimizer step below updates the parameters in place
    expected = {f"pdparams/{k}": v.numpy().copy() for k, v in sd.items()}
    opt = paddle.optimizer.Adam(parameters=model.parameters(), learning_rate=0.01)
    model(paddle.randn([8, 4])).sum().backward()
    opt.step()
    paddle.save(opt.state_dict(), os.path.join(OUT, "paddle_mlp.pdopt"))
    nested_t = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    paddle.save({"epoch": 3, "weights": nested_t, "tags": ["a", "b"]},
                os.path.join(OUT, "paddle_nested.pdparams"))
    for k, v in opt.state_dict().items():
        if hasattr(v, "numpy"):
            expected[f"pdopt/{k}"] = v.numpy()
    expected["nested/weights"] = nested_t.numpy()
    np.savez_compressed(os.path.join(OUT, "paddle_expected.npz"), **expected)


def torch_fixtures():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4),
                                torch.nn.Linear(4, 3))
    model(torch.randn(8, 4))
    sd = model.state_dict()
    torch.save(sd, os.path.join(OUT, "torch_mlp.bin"))
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    views = {
        "base": base,
        "slice": base[1:, ::2],  # offset 6, strides (6, 2)
        "t": base.t(),  # a transposed view: strides (1, 6)
        "half": torch.linspace(-2, 2, 5, dtype=torch.float16),
        "bf16": torch.linspace(-2, 2, 5, dtype=torch.bfloat16),
        "i8": torch.tensor([-3, 0, 7], dtype=torch.int8),
        "mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "meta": {"step": 7, "names": ["x", "y"]},
    }
    torch.save(views, os.path.join(OUT, "torch_views.pt"))
    expected = {f"mlp/{k}": v.numpy() for k, v in sd.items()}
    model.eval()  # the reference output fw must reproduce after from_torch
    x = torch.linspace(-1, 1, 8 * 4).reshape(8, 4)
    with torch.no_grad():
        expected["mlp_forward/x"] = x.numpy()
        expected["mlp_forward/y"] = model(x).numpy()
    for k, v in views.items():
        if isinstance(v, torch.Tensor):
            if v.dtype == torch.bfloat16:
                expected[f"views/{k}"] = v.view(torch.int16).numpy().view(np.uint16)
            else:
                expected[f"views/{k}"] = v.numpy()
    np.savez_compressed(os.path.join(OUT, "torch_expected.npz"), **expected)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    {"paddle": paddle_fixtures, "torch": torch_fixtures}[sys.argv[1]]()
