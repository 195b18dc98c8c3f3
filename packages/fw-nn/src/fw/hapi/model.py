"""`Model`: Paddle's high-level training API (``paddle.Model``).

``Model(network)`` + ``prepare(optimizer, loss, metrics)`` + ``fit(train_data,
eval_data, ...)``; ``evaluate``, ``predict`` and the single-batch forms
``train_batch``/``eval_batch``/``predict_batch``; checkpoints with ``save``/``load``
(``<path>.pdparams`` and ``<path>.pdopt`` through fw.save/fw.load).

A batch from the data loader is split into inputs and labels: the first
``len(inputs)`` fields (the number of InputSpecs given, else the number of
positional parameters of ``network.forward``) go to the network, the rest to the
loss and metrics.
"""

from __future__ import annotations

import inspect
import os

import numpy as np

from fw.core.tensor import Tensor, to_tensor
from fw.hapi.callbacks import config_callbacks

__all__ = ["Model"]


def _to_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _to_numpy(x):
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    return to_tensor(x)


def _rename_state(state, names):
    """Optimizer state keyed by parameter names -> keyed by the names in `names`
    (Model checkpoints store structured names, ``"0.weight_moment1_0"``, so they load
    into another instance of the network, whose parameters have other unique names)."""
    order = sorted(names, key=len, reverse=True)

    def conv(key):
        for n in order:
            if key == n:
                return names[n]
            if key.startswith(n + "_"):
                return names[n] + key[len(n):]
        return key

    out = {}
    for k, v in state.items():
        if k == "master_weights" and isinstance(v, dict):
            out[k] = {conv(n): t for n, t in v.items()}
        elif k == "LR_Scheduler":
            out[k] = v
        else:
            out[conv(k)] = v
    return out


class Model:
    """A network wrapped for high-level training: `prepare`, then `fit`, `evaluate`,
    `predict`, `save` / `load`, or one batch at a time (`train_batch`, `eval_batch`,
    `predict_batch`). Paddle's ``paddle.Model``, in dynamic mode.

    Args:
        network (Layer): the network.
        inputs (InputSpec|list, optional): the inputs' specs; in dynamic mode only their
            number is used (and `summary` / ``save(training=False)`` read their shapes).
            Default: None.
        labels (InputSpec|list, optional): the labels' specs (unused in dynamic mode).
            Default: None.

    Examples:
        >>> import fw
        >>> from fw.io import TensorDataset
        >>> _ = fw.seed(0)
        >>> x = fw.randn([16, 4])
        >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        >>> model = fw.Model(net)
        >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
        >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
        >>> model.fit(data, epochs=5, batch_size=8, verbose=0)
        >>> sorted(model.evaluate(data, batch_size=8, verbose=0))
        ['acc', 'loss']
    """

    def __init__(self, network, inputs=None, labels=None):
        self.network = network
        self._inputs = _to_list(inputs) if inputs is not None else None
        self._labels = _to_list(labels) if labels is not None else None
        self._optimizer = None
        self._loss = None
        self._metrics = []
        self._amp = None
        self._scaler = None
        self.stop_training = False
        self.mode = "train"

    # ------------------------------------------------------------ configuration
    def prepare(self, optimizer=None, loss=None, metrics=None, amp_configs=None):
        """Set the optimizer, the loss, the metrics and mixed precision for the
        following calls.

        Args:
            optimizer (Optimizer, optional): the optimizer (needed to train). Default: None.
            loss (Layer|callable, optional): ``loss(*outputs, *labels)``, e.g.
                ``fw.nn.CrossEntropyLoss()``. Default: None.
            metrics (Metric|list, optional): ``fw.metric.Metric`` instances. Default: None.
            amp_configs (str|dict, optional): None, a level (``"O1"`` / ``"O2"``) or a dict with
                ``level``, ``dtype``, ``init_loss_scaling``, ``custom_white_list``,
                ``custom_black_list``, ``use_dynamic_loss_scaling``. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> model.train_batch([x[:4]], [fw.zeros([4, 1], "int64")])[1]
            [0.75]
        """
        from fw.metric import Metric

        self._optimizer = optimizer
        if loss is not None and not callable(loss):
            raise TypeError(f"Model.prepare: 'loss' must be a Layer or a callable, got "
                            f"{type(loss).__name__}")
        self._loss = loss
        metrics = _to_list(metrics)
        for m in metrics:
            if not isinstance(m, Metric):
                raise TypeError(f"Model.prepare: metrics must be fw.metric.Metric instances, "
                                f"got {type(m).__name__}")
        self._metrics = metrics
        self._configure_amp(amp_configs)

    def _configure_amp(self, cfg):
        self._amp = None
        self._scaler = None
        if cfg is None:
            return
        if isinstance(cfg, str):
            cfg = {"level": cfg}
        cfg = dict(cfg)
        level = str(cfg.pop("level", "O1")).upper()
        if level == "O0":
            return
        from fw import amp

        dtype = cfg.pop("dtype", None)
        scaler_keys = ("init_loss_scaling", "incr_ratio", "decr_ratio", "incr_every_n_steps",
                       "decr_every_n_nan_or_inf", "use_dynamic_loss_scaling")
        scaler_cfg = {k: cfg.pop(k) for k in scaler_keys if k in cfg}
        cast_cfg = {k: cfg.pop(k) for k in ("custom_white_list", "custom_black_list",
                                            "use_promote") if k in cfg}
        if level == "O2":
            res = amp.decorate(self.network, self._optimizer, level="O2", dtype=dtype)
            self.network = res[0] if self._optimizer is not None else res
        self._amp = dict(level=level, dtype=dtype, **cast_cfg)
        probe = amp.auto_cast(**self._amp)
        # bfloat16 keeps float32's range: loss scaling is for float16 only
        if probe._state.dtype.name == "float16":
            self._scaler = amp.GradScaler(**scaler_cfg)

    def _autocast(self):
        if self._amp is None:
            import contextlib

            return contextlib.nullcontext()
        from fw import amp

        return amp.auto_cast(**self._amp)

    def parameters(self, *args, **kwargs):
        """The network's parameters (what an optimizer takes).

        Args:
            *args: passed to ``Layer.parameters``.
            **kwargs: passed to ``Layer.parameters``.

        Returns:
            list, the parameters.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> [p.shape for p in model.parameters()]
            [[4, 8], [8], [8, 2], [2]]
        """
        return self.network.parameters(*args, **kwargs)

    # ------------------------------------------------------------ one batch
    def _forward(self, inputs):
        with self._autocast():
            return self.network(*[_as_tensor(x) for x in inputs])

    def _losses(self, outputs, labels):
        with self._autocast():
            losses = self._loss(*(_to_list(outputs) + labels))
        return _to_list(losses)

    def _update_metrics(self, outputs, labels):
        vals = []
        for m in self._metrics:
            outs = m.compute(*(_to_list(outputs) + labels))
            vals.append(m.update(*[_to_numpy(o) for o in _to_list(outs)]))
        return vals

    def train_batch(self, inputs, labels=None, update=True):
        """Run one training step (forward, loss, backward, optimizer update) on a batch.

        Args:
            inputs (list): the network's inputs (Tensors or arrays).
            labels (list, optional): the labels. Default: None.
            update (bool, optional): apply the optimizer (False only accumulates the
                gradients). Default: True.

        Returns:
            list, the losses as NumPy arrays; ``(losses, metrics)`` when metrics are set.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> losses, metrics = model.train_batch([x[:4]], [fw.ones([4, 1], "int64")])
            >>> losses[0].shape, len(metrics)
            ((), 1)
        """
        if self._optimizer is None or self._loss is None:
            raise RuntimeError("Model.train_batch: call prepare(optimizer, loss) first")
        self.network.train()
        self.mode = "train"
        inputs = _to_list(inputs)
        labels = [_as_tensor(y) for y in _to_list(labels)]
        outputs = self._forward(inputs)
        losses = self._losses(outputs, labels)
        final = losses[0]
        for extra in losses[1:]:
            final = final + extra
        if self._scaler is not None:
            self._scaler.scale(final).backward()
            if update:
                self._scaler.minimize(self._optimizer, final)
                self._optimizer.clear_grad()
        else:
            final.backward()
            if update:
                self._optimizer.step()
                self._optimizer.clear_grad()
        metrics = self._update_metrics(outputs, labels)
        out = [_to_numpy(x) for x in losses]
        return (out, metrics) if metrics else out

    def eval_batch(self, inputs, labels=None):
        """Evaluate one batch without gradients.

        Args:
            inputs (list): the network's inputs.
            labels (list, optional): the labels. Default: None.

        Returns:
            list, the losses (if a loss is set); ``(losses, metrics)`` when metrics are set.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> losses, metrics = model.eval_batch([x[:4]], [fw.ones([4, 1], "int64")])
            >>> losses[0].shape, len(metrics)
            ((), 1)
        """
        from fw.autograd import no_grad

        self.network.eval()
        self.mode = "eval"
        inputs = _to_list(inputs)
        labels = [_as_tensor(y) for y in _to_list(labels)]
        with no_grad():
            outputs = self._forward(inputs)
            losses = self._losses(outputs, labels) if self._loss is not None else []
            metrics = self._update_metrics(outputs, labels)
        out = [_to_numpy(x) for x in losses]
        if metrics:
            return out, metrics
        return out

    def predict_batch(self, inputs):
        """The network's outputs on one batch.

        Args:
            inputs (list): the network's inputs.

        Returns:
            list, one NumPy array per output.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> (out,) = model.predict_batch([x[:3]])
            >>> out.shape
            (3, 2)
        """
        from fw.autograd import no_grad

        self.network.eval()
        self.mode = "test"
        with no_grad():
            outputs = self._forward(_to_list(inputs))
        return [_to_numpy(o) for o in _to_list(outputs)]

    # ------------------------------------------------------------ checkpoints
    def save(self, path, training=True):
        """Save the parameters to ``path + ".pdparams"`` and, with an optimizer, its state
        to ``path + ".pdopt"``; ``training=False`` exports an inference model instead
        (through ``fw.jit.save``: needs fw-jit and the `inputs` specs).

        Args:
            path (str): the path prefix; missing directories are created.
            training (bool, optional): save to resume training (True) or for inference.
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> model.save("ckpt/model")
            >>> import os
            >>> sorted(os.listdir("ckpt"))
            ['model.pdopt', 'model.pdparams']
        """
        from fw.nn.serialization import save

        if not training:
            try:
                import fw.jit as jit
            except ModuleNotFoundError as e:
                if e.name and e.name.startswith("fw.jit"):
                    raise ModuleNotFoundError(
                        "Model.save(training=False) exports an inference program, which is "
                        "provided by the fw-jit package: pip install fw-jit (or save with "
                        "training=True for a checkpoint)", name="fw.jit") from None
                raise
            return jit.save(self.network, path, input_spec=self._inputs)
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        save(self.network.state_dict(), path + ".pdparams")
        if self._optimizer is not None:
            names = {p.name: s for s, p in self.network.named_parameters()}
            save(_rename_state(self._optimizer.state_dict(), names), path + ".pdopt")

    def load(self, path, skip_mismatch=False, reset_optimizer=False):
        """Load ``path + ".pdparams"`` and, unless `reset_optimizer` or no optimizer is
        set, ``path + ".pdopt"``.

        Args:
            path (str): the path prefix `save` used.
            skip_mismatch (bool, optional): skip entries whose shape differs (fine-tuning a
                changed head) instead of raising. Default: False.
            reset_optimizer (bool, optional): do not load the optimizer's state. Default: False.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> model.save("ckpt/model")
            >>> w = net[0].weight.numpy().copy()
            >>> model.fit(data, batch_size=8, epochs=1, verbose=0)
            >>> model.load("ckpt/model")
            >>> bool((net[0].weight.numpy() == w).all())
            True
        """
        import warnings

        from fw.nn.serialization import load

        if path.endswith(".pdparams"):
            path = path[:-len(".pdparams")]
        params = load(path + ".pdparams")
        if skip_mismatch:
            own = self.network.state_dict()
            kept = {}
            for k, v in params.items():
                if k in own and list(np.shape(_to_numpy(v))) != list(own[k].shape):
                    warnings.warn(f"Model.load: skipping '{k}': saved shape "
                                  f"{list(np.shape(_to_numpy(v)))} vs {list(own[k].shape)}",
                                  stacklevel=2)
                    continue
                kept[k] = v
            params = kept
        self.network.set_state_dict(params)
        if self._optimizer is not None and not reset_optimizer and \
                os.path.exists(path + ".pdopt"):
            names = {s: p.name for s, p in self.network.named_parameters()}
            self._optimizer.set_state_dict(_rename_state(load(path + ".pdopt"), names))

    # ------------------------------------------------------------ loops
    def _n_inputs(self):
        if self._inputs is not None:
            return len(self._inputs)
        try:
            sig = inspect.signature(self.network.forward)
        except (TypeError, ValueError):
            return 1
        n = 0
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and \
                    p.default is p.empty:
                n += 1
            elif p.kind == p.VAR_POSITIONAL:
                return None
        return max(n, 1)

    def _split(self, data):
        data = _to_list(data)
        n = self._n_inputs()
        if n is None:
            n = len(data) - (len(self._labels) if self._labels is not None else 1)
        return data[:n], data[n:]

    def _loader(self, data, batch_size, shuffle, drop_last, num_workers):
        from fw.io import DataLoader, Dataset

        if data is None:
            return None
        if isinstance(data, Dataset):
            return DataLoader(data, batch_size=batch_size, shuffle=shuffle,
                              drop_last=drop_last, num_workers=num_workers)
        return data

    def _run_one_epoch(self, loader, cbks, mode, num_iters=None):
        logs = {}
        samples = 0
        for m in self._metrics:
            m.reset()
        step = -1
        for step, data in enumerate(loader):
            if num_iters is not None and step >= num_iters:
                break
            inputs, labels = self._split(data)
            cbks.on_batch_begin(mode, step, logs)
            if mode == "train":
                res = self.train_batch(inputs, labels)
            elif mode == "eval":
                res = self.eval_batch(inputs, labels)
            else:
                res = self.predict_batch(inputs)
                self._pred_outs.append(res)
                bs = int(np.shape(res[0])[0]) if res and np.ndim(res[0]) else 1
                samples += bs
                cbks.on_batch_end(mode, step, {"step": step, "batch_size": bs})
                continue
            losses, metrics = (res if isinstance(res, tuple) else (res, []))
            if losses:
                logs["loss"] = [float(np.asarray(v).reshape(-1)[0]) for v in losses] \
                    if len(losses) > 1 else float(np.asarray(losses[0]).reshape(-1)[0])
            for m, v in zip(self._metrics, metrics):
                names = _to_list(m.name())
                vals = _to_list(v)
                for nm, val in zip(names, vals):
                    logs[nm] = val
            bs = int(np.shape(_to_numpy(inputs[0]))[0]) if inputs and \
                np.ndim(_to_numpy(inputs[0])) else 1
            samples += bs
            logs["step"] = step
            logs["batch_size"] = bs
            cbks.on_batch_end(mode, step, logs)
            if self.stop_training and mode == "train":
                break
        # epoch-level metric values: accumulated over the whole epoch
        for m in self._metrics:
            for nm, val in zip(_to_list(m.name()), _to_list(m.accumulate())):
                logs[nm] = val
        logs["samples"] = samples
        return logs

    def fit(self, train_data=None, eval_data=None, batch_size=1, epochs=1, eval_freq=1,
            log_freq=10, save_dir=None, save_freq=1, verbose=2, drop_last=False, shuffle=True,
            num_workers=0, callbacks=None, accumulate_grad_batches=1, num_iters=None):
        """Train for `epochs` over `train_data`, evaluating on `eval_data` every
        `eval_freq` epochs.

        Callbacks (``ProgBarLogger`` per `verbose`, ``ModelCheckpoint`` with `save_dir`, and
        yours) report progress, save checkpoints and may stop training early.

        Args:
            train_data (Dataset|DataLoader, optional): the training data. Default: None.
            eval_data (Dataset|DataLoader, optional): the evaluation data. Default: None.
            batch_size (int, optional): the batch size when the data is a Dataset. Default: 1.
            epochs (int, optional): the number of epochs. Default: 1.
            eval_freq (int, optional): evaluate every this many epochs. Default: 1.
            log_freq (int, optional): log every this many batches. Default: 10.
            save_dir (str, optional): save a checkpoint there every `save_freq` epochs and at
                the end (``final.pdparams``). Default: None.
            save_freq (int, optional): the checkpoint period in epochs. Default: 1.
            verbose (int, optional): 0 silent, 1 one line per epoch, 2 a progress bar (lines
                when stdout is not a terminal). Default: 2.
            drop_last (bool, optional): drop the last incomplete batch. Default: False.
            shuffle (bool, optional): shuffle the training data each epoch. Default: True.
            num_workers (int, optional): DataLoader worker processes. Default: 0.
            callbacks (list, optional): ``fw.callbacks.Callback`` instances. Default: None.
            accumulate_grad_batches (int, optional): update every this many batches,
                accumulating gradients. Default: 1.
            num_iters (int, optional): stop after this many batches. Default: None.

        Returns:
            None (the logs reach the callbacks).

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> before = model.evaluate(data, batch_size=16, verbose=0)["loss"]
            >>> model.fit(data, data, batch_size=4, epochs=10, verbose=0, save_dir="ckpt")
            >>> after = model.evaluate(data, batch_size=16, verbose=0)["loss"]
            >>> after[0] < before[0]
            True
            >>> import os
            >>> os.path.exists("ckpt/final.pdparams")
            True
        """
        if train_data is None:
            raise ValueError("Model.fit: train_data is required")
        if accumulate_grad_batches != 1:
            raise NotImplementedError("Model.fit: accumulate_grad_batches > 1 is not supported; "
                                      "call train_batch(update=False) yourself")
        train_loader = self._loader(train_data, batch_size, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, batch_size, False, False, num_workers)
        steps = len(train_loader) if hasattr(train_loader, "__len__") else None
        if num_iters is not None and steps is not None:
            steps = min(steps, num_iters)
        metric_names = [n for m in self._metrics for n in _to_list(m.name())]
        cbks = config_callbacks(callbacks, model=self, batch_size=batch_size, epochs=epochs,
                                steps=steps, log_freq=log_freq, verbose=verbose,
                                save_freq=save_freq, save_dir=save_dir,
                                metrics=["loss"] + metric_names)
        self.stop_training = False
        cbks.on_begin("train")
        logs = {}
        done_iters = 0
        for epoch in range(epochs):
            cbks.on_epoch_begin(epoch)
            left = None if num_iters is None else num_iters - done_iters
            logs = self._run_one_epoch(train_loader, cbks, "train", left)
            done_iters += logs.get("step", -1) + 1
            cbks.on_epoch_end(epoch, logs)
            if eval_loader is not None and (epoch + 1) % eval_freq == 0:
                self._evaluate_with(eval_loader, cbks)
            if self.stop_training or (num_iters is not None and done_iters >= num_iters):
                break
        cbks.on_end("train", logs)

    def _evaluate_with(self, loader, cbks):
        steps = len(loader) if hasattr(loader, "__len__") else None
        cbks.on_begin("eval", {"steps": steps, "metrics": ["loss"]})
        logs = self._run_one_epoch(loader, cbks, "eval")
        cbks.on_end("eval", logs)
        return logs

    def evaluate(self, eval_data, batch_size=1, log_freq=10, verbose=2, num_workers=0,
                 callbacks=None, num_samples=None):
        """Evaluate on `eval_data`: the mean loss and the metrics.

        Args:
            eval_data (Dataset|DataLoader): the data.
            batch_size (int, optional): the batch size when the data is a Dataset. Default: 1.
            log_freq (int, optional): log every this many batches. Default: 10.
            verbose (int, optional): 0 silent, 1 or 2 progress. Default: 2.
            num_workers (int, optional): DataLoader worker processes. Default: 0.
            callbacks (list, optional): ``fw.callbacks.Callback`` instances. Default: None.
            num_samples (int, optional): evaluate only the first samples. Default: None.

        Returns:
            dict, ``{"loss": [value], <metric name>: value}``.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> result = model.evaluate(data, batch_size=8, verbose=0)
            >>> sorted(result), len(result["loss"])
            (['acc', 'loss'], 1)
        """
        loader = self._loader(eval_data, batch_size, False, False, num_workers)
        metric_names = [n for m in self._metrics for n in _to_list(m.name())]
        cbks = config_callbacks(callbacks, model=self, batch_size=batch_size, log_freq=log_freq,
                                verbose=verbose, metrics=["loss"] + metric_names, mode="eval")
        logs = self._evaluate_with(loader, cbks)
        out = {}
        if "loss" in logs:
            out["loss"] = _to_list(logs["loss"])
        for n in metric_names:
            if n in logs:
                out[n] = logs[n]
        return out

    def predict(self, test_data, batch_size=1, num_workers=0, stack_outputs=False, verbose=1,
                callbacks=None):
        """Run the network over `test_data` (no labels needed).

        Args:
            test_data (Dataset|DataLoader): the inputs (a dataset whose items are inputs, or
                input tuples; extra label fields are ignored).
            batch_size (int, optional): the batch size when the data is a Dataset. Default: 1.
            num_workers (int, optional): DataLoader worker processes. Default: 0.
            stack_outputs (bool, optional): concatenate the batches into one array per output.
                Default: False.
            verbose (int, optional): 0 silent, 1 progress. Default: 1.
            callbacks (list, optional): ``fw.callbacks.Callback`` instances. Default: None.

        Returns:
            list, one entry per output: a list of the batches' NumPy arrays, or one array with
            `stack_outputs`.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> (batches,) = model.predict(data, batch_size=8, verbose=0)
            >>> len(batches), batches[0].shape
            (2, (8, 2))
            >>> (stacked,) = model.predict(data, batch_size=8, verbose=0, stack_outputs=True)
            >>> stacked.shape
            (16, 2)
        """
        loader = self._loader(test_data, batch_size, False, False, num_workers)
        cbks = config_callbacks(callbacks, model=self, batch_size=batch_size, verbose=verbose,
                                mode="predict")
        self._pred_outs = []
        steps = len(loader) if hasattr(loader, "__len__") else None
        cbks.on_begin("predict", {"steps": steps})
        self._run_one_epoch(loader, cbks, "predict")
        cbks.on_end("predict", {})
        outs = self._pred_outs
        self._pred_outs = []
        if not outs:
            return []
        per_output = [list(x) for x in zip(*outs)]
        if stack_outputs:
            return [np.concatenate(o, axis=0) for o in per_output]
        return per_output

    def summary(self, input_size=None, dtype=None):
        """`fw.summary` of the network: a table of layers, output shapes and parameter
        counts (printed).

        Args:
            input_size (tuple|list, optional): the input shape(s), batch included; None takes
                them from the `inputs` specs. Default: None.
            dtype (str, optional): the input dtype. Default: None (float32).

        Returns:
            dict, ``{"total_params": int, "trainable_params": int}``.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> _ = fw.seed(0)
            >>> x = fw.randn([16, 4])
            >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
            >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
            >>> model.prepare(opt, fw.nn.CrossEntropyLoss(), fw.metric.Accuracy())
            >>> info = model.summary((1, 4))
            ----------------------------------------------------
              Layer (type)  Input Shape  Output Shape  Param #
            ====================================================
                Linear-1      [[1, 4]]      [1, 8]        40
                 ReLU-1       [[1, 8]]      [1, 8]        0
                Linear-2      [[1, 8]]      [1, 2]        18
            ====================================================
            Total params: 58
            Trainable params: 58
            Non-trainable params: 0
            ----------------------------------------------------
            Input size (MB): 0.00
            Forward/backward pass size (MB): 0.00
            Params size (MB): 0.00
            Estimated Total Size (MB): 0.00
            ----------------------------------------------------
            >>> info
            {'total_params': 58, 'trainable_params': 58}
        """
        from fw.hapi.summary import summary

        if input_size is None and self._inputs:
            input_size = [tuple(getattr(s, "shape", s)) for s in self._inputs]
            if len(input_size) == 1:
                input_size = input_size[0]
        if input_size is None:
            raise ValueError("Model.summary: give input_size (or InputSpecs to Model)")
        return summary(self.network, input_size, dtypes=dtype)
