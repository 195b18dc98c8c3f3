"""One eager training step (forward, loss, backward, optimizer step, clear grads)
of three models, in fw and, when installed, PyTorch:

- ``mlp``: MLP 784-256-256-10 (ReLU), batch 128, cross entropy, Adam;
- ``lenet``: LeNet-5 (conv 6@5x5 pad 2, pool, conv 16@5x5, pool, 120-84-10), batch 64
  of 1x28x28 images, cross entropy, Adam;
- ``transformer``: a 2-layer Transformer encoder (d_model 128, 4 heads, feed-forward
  512, no dropout), batch 16 of 64 positions, mean-squared error, AdamW.

The builders (`fw_step`, `torch_step`) are shared with the side-by-side script
(asv_bench/workloads_nn.py adds Paddle, built by `paddle_api_step` like fw: the two
spell the models, optimizers and steps alike): each returns a zero-argument closure
running one step on fixed random data.
"""

import numpy as np

import fw

MODELS = ["mlp", "lenet", "transformer"]
SHAPES = {  # input shape, target kind
    "mlp": ((128, 784), "class"),
    "lenet": ((64, 1, 28, 28), "class"),
    "transformer": ((16, 64, 128), "regress"),
}


def data(name, seed=0):
    """Fixed random inputs and targets (NumPy) for model `name`."""
    rng = np.random.default_rng(seed)
    shape, kind = SHAPES[name]
    x = rng.standard_normal(shape).astype(np.float32)
    if kind == "class":
        y = rng.integers(0, 10, shape[0]).astype(np.int64)
    else:
        y = rng.standard_normal(shape).astype(np.float32)
    return x, y


def _step(model, loss_fn, x, y, opt, clear_grad):
    """The timed closure: forward, loss, backward, optimizer step, clear grads."""

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        clear_grad()
        return loss

    return step


# ---------------------------------------------------------------- fw (and Paddle)
def _paddle_api_model(nn, name):
    """Model `name` from `nn`: fw.nn or paddle.nn, whose layers have the same names and
    signatures."""
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    if name == "lenet":
        return nn.Sequential(nn.Conv2D(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2D(2, 2),
                             nn.Conv2D(6, 16, 5), nn.ReLU(), nn.MaxPool2D(2, 2), nn.Flatten(),
                             nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                             nn.Linear(84, 10))
    layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0)
    return nn.TransformerEncoder(layer, 2)


def paddle_api_step(lib, name):
    """One eager training step of model `name` as a closure, in `lib`: the fw or the
    paddle module (seed, nn, optimizer, to_tensor and clear_grad are spelled alike)."""
    lib.seed(0)
    model = _paddle_api_model(lib.nn, name)
    if name == "transformer":
        opt = lib.optimizer.AdamW(1e-3, parameters=model.parameters())
        loss_fn = lib.nn.functional.mse_loss
    else:
        opt = lib.optimizer.Adam(1e-3, parameters=model.parameters())
        loss_fn = lib.nn.functional.cross_entropy
    x, y = (lib.to_tensor(a) for a in data(name))
    return _step(model, loss_fn, x, y, opt, opt.clear_grad)


def fw_step(name):
    """One fw eager training step of model `name` as a closure."""
    return paddle_api_step(fw, name)


# ---------------------------------------------------------------- PyTorch
def _torch_model(name):
    import torch.nn as tnn

    if name == "mlp":
        return tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 256),
                              tnn.ReLU(), tnn.Linear(256, 10))
    if name == "lenet":
        return tnn.Sequential(tnn.Conv2d(1, 6, 5, padding=2), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                              tnn.Conv2d(6, 16, 5), tnn.ReLU(), tnn.MaxPool2d(2, 2),
                              tnn.Flatten(), tnn.Linear(400, 120), tnn.ReLU(),
                              tnn.Linear(120, 84), tnn.ReLU(), tnn.Linear(84, 10))
    layer = tnn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    # the fast path for inference only matters in eval mode; training runs the plain layers
    return tnn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def torch_step(name):
    """The same step in PyTorch (eager, default threads)."""
    import torch

    torch.manual_seed(0)
    model = _torch_model(name)
    if name == "transformer":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        loss_fn = torch.nn.functional.mse_loss
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = torch.nn.functional.cross_entropy
    x, y = (torch.from_numpy(a) for a in data(name))
    return _step(model, loss_fn, x, y, opt, opt.zero_grad)


# ---------------------------------------------------------------- asv
class TrainStep:
    """fw: one eager training step."""

    params = MODELS
    param_names = ["model"]
    timeout = 300

    def setup(self, name):
        self.step = fw_step(name)
        self.step()  # packs the optimizer's flat buffers outside the timing

    def time_step(self, name):
        self.step()


try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

if torch is not None:

    class TorchTrainStep:
        """PyTorch: the same step."""

        params = MODELS
        param_names = ["model"]
        timeout = 300

        def setup(self, name):
            self.step = torch_step(name)
            self.step()

        def time_step(self, name):
            self.step()
