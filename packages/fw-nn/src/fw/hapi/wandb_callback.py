"""`WandbCallback` (Paddle's ``paddle.callbacks.WandbCallback``): log `fw.Model`'s
training and evaluation metrics to Weights & Biases.

The ``wandb`` package is imported when the callback is made (a clear ImportError says
how to install it when it is missing, as in Paddle). Only the process of local rank 0
writes (``PADDLE_LOCAL_RANK`` / ``LOCAL_RANK``, as set by the launchers): the run's
metric layout follows Paddle's — ``train/<metric>`` against ``train/step`` every batch,
``eval/<metric>`` against ``epoch`` after each evaluation.
"""

from __future__ import annotations

import numbers
import os
import warnings

from fw.hapi.callbacks import Callback
from fw.utils.lazy_import import try_import

__all__ = ["WandbCallback"]


def _local_rank() -> int:
    for var in ("PADDLE_LOCAL_RANK", "LOCAL_RANK"):
        v = os.environ.get(var)
        if v not in (None, ""):
            return int(v)
    return 0


class WandbCallback(Callback):
    """Track metrics of `fw.Model.fit` / `evaluate` in a Weights & Biases run.

    Args:
        project (str, optional): the W&B project.
        entity (str, optional): the team or user creating the run.
        name (str, optional): the run's name (W&B generates one by default).
        dir (str, optional): where W&B stores its metadata.
        mode (str, optional): 'online', 'offline' or 'disabled'.
        job_type (str, optional): groups runs together.
        **kwargs: more arguments of ``wandb.init``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> try:
            ...     cb = fw.callbacks.WandbCallback(project="demo", mode="disabled")
            ... except ImportError as e:  # without the wandb package
            ...     print("pip install wandb" in str(e))
            True
    """

    def __init__(self, project=None, entity=None, name=None, dir=None, mode=None,  # noqa: A002
                 job_type=None, **kwargs):
        super().__init__()
        self.wandb = try_import("wandb", "You want to use `wandb` which is not installed "
                                         "yet install it with `pip install wandb`")
        self.wandb_args = {"project": project, "name": name, "entity": entity, "dir": dir,
                           "mode": mode, "job_type": job_type, **kwargs}
        self._run = None
        _ = self.run

    def _is_write(self) -> bool:
        return _local_rank() == 0

    @property
    def run(self):
        """The W&B run the callback logs to, started on first use with the
        constructor's arguments (``wandb.init(project=..., ...)``); a run already in
        progress is reused (with a warning). Only local rank 0 writes: on other ranks
        this is None.

        Returns:
            wandb.sdk.wandb_run.Run | None: the run.

        Examples:
            The example stands a small fake module in for the wandb package:

            >>> import fw
            >>> import sys, types
            >>> fake = types.ModuleType("wandb")
            >>> fake.run = None
            >>> fake.init = lambda **kw: types.SimpleNamespace(project=kw["project"])
            >>> sys.modules["wandb"] = fake
            >>> cb = fw.callbacks.WandbCallback(project="demo", mode="offline")
            >>> cb.run.project, cb.run is cb.run
            ('demo', True)
            >>> del sys.modules["wandb"]
        """
        if self._is_write() and self._run is None:
            if getattr(self.wandb, "run", None) is not None:
                warnings.warn("There is a wandb run already in progress and newly created "
                              "instances of `WandbCallback` will reuse this run. If this is "
                              "not desired, call `wandb.finish()` before instantiating "
                              "`WandbCallback`.", stacklevel=3)
                self._run = self.wandb.run
            else:
                self._run = self.wandb.init(**self.wandb_args)
        return self._run

    def on_train_begin(self, logs=None):
        self.epochs = self.params["epochs"]
        self.train_metrics = self.params["metrics"]
        self._is_fit = True
        self.train_step = 0
        if self._is_write():
            self.run.define_metric("train/step")
            self.run.define_metric("train/*", step_metric="train/step")
            self.run.define_metric("epoch")
            self.run.define_metric("eval/*", step_metric="epoch")

    def on_epoch_begin(self, epoch, logs=None):
        self.steps = self.params.get("steps")
        self.epoch = epoch

    def _updates(self, logs, mode):
        if not self._is_write():
            return
        logs = logs or {}
        metrics = getattr(self, f"{mode}_metrics")
        if mode == "train":
            out = {"train/step": self.train_step}
        else:
            out = {"epoch": getattr(self, "epoch", 0)}
        for k in metrics:
            if k in logs:
                v = logs[k]
                if isinstance(v, (list, tuple)):
                    v = v[0]
                if isinstance(v, numbers.Number) or hasattr(v, "item"):
                    out[f"{mode}/{k}"] = float(v)
        self.run.log(out)

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        self._updates(logs, "train")

    def on_eval_begin(self, logs=None):
        logs = logs or {}
        self.eval_steps = logs.get("steps")
        self.eval_metrics = logs.get("metrics", [])

    def on_train_end(self, logs=None):
        if self._is_write():
            self.run.finish()

    def on_eval_end(self, logs=None):
        if self._is_write():
            self._updates(logs, "eval")
            if not hasattr(self, "_is_fit"):  # evaluate() alone: its run ends here
                self.run.finish()
                self._run = None
