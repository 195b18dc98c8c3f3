"""Callbacks of `fw.Model` (Paddle's ``paddle.callbacks``).

A callback gets ``set_model(model)``, ``set_params(params)`` (``epochs``, ``steps``,
``verbose``, ``metrics``, ``save_dir``, ``batch_size``, ``log_freq``, ``save_freq``) and
the ``on_*`` events of training, evaluation and prediction, with ``logs`` holding
``loss``, the metrics, ``step`` and ``batch_size``.
"""

from __future__ import annotations

import numbers
import os
import sys
import time
import warnings

import numpy as np

__all__ = ["Callback", "CallbackList", "ProgBarLogger", "ModelCheckpoint", "EarlyStopping",
           "LRScheduler", "ReduceLROnPlateau", "VisualDL", "TensorBoard", "config_callbacks"]


class Callback:
    """Base class of ``fw.Model``'s callbacks: override the events you need.

    ``fit``, ``evaluate`` and ``predict`` call the hooks in this order: ``on_train_begin``;
    per epoch ``on_epoch_begin``, per batch ``on_train_batch_begin`` /
    ``on_train_batch_end``, then (every ``eval_freq`` epochs) the ``on_eval_*`` hooks and
    ``on_epoch_end``; finally ``on_train_end``. ``self.model`` is the running ``fw.Model``
    and ``self.params`` the run's parameters; setting ``self.model.stop_training = True``
    ends training after the current epoch.

    Examples:
        >>> import fw
        >>> from fw.io import TensorDataset
        >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
        >>> net = fw.nn.Linear(2, 1)
        >>> model = fw.Model(net)
        >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
        >>> model.prepare(opt, fw.nn.MSELoss())
        >>> class LossLog(fw.callbacks.Callback):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.losses = []
        ...     def on_train_batch_end(self, step, logs=None):
        ...         self.losses.append(float(logs["loss"]))
        >>> log = LossLog()
        >>> model.fit(data, batch_size=2, epochs=2, verbose=0, callbacks=[log])
        >>> len(log.losses), log.losses[-1] < log.losses[0]
        (4, True)
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_params(self, params):
        """Receive the run's parameters (``batch_size``, ``epochs``, ``steps``,
        ``verbose``, ``metrics``) before it starts; stored as ``self.params``.

        Args:
            params (dict): the run's parameters.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print(self.params["epochs"], self.params["batch_size"])
            >>> model.fit(data, batch_size=2, epochs=3, verbose=0, callbacks=[Show()])
            3 2
        """
        self.params = params

    def set_model(self, model):
        """Receive the ``fw.Model`` being run; stored as ``self.model``.

        Args:
            model (Model): the model.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_end(self, logs=None):
            ...         print(self.model is model)
            >>> model.fit(data, batch_size=2, epochs=1, verbose=0, callbacks=[Show()])
            True
        """
        self.model = model

    def on_train_begin(self, logs=None):
        """Called at the start of `fw.Model.fit`.

        Does nothing unless overridden.

        Args:
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("on_train_begin", sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_train_begin []
        """
        pass

    def on_train_end(self, logs=None):
        """Called at the end of `fw.Model.fit`.

        Does nothing unless overridden.

        Args:
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_end(self, logs=None):
            ...         print("on_train_end", sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_train_end ['batch_size', 'loss', 'samples', 'step']
        """
        pass

    def on_eval_begin(self, logs=None):
        """Called at the start of an evaluation (`fit`'s or `evaluate`'s).

        Does nothing unless overridden.

        Args:
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_eval_begin(self, logs=None):
            ...         print("on_eval_begin", sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_eval_begin ['metrics', 'steps']
            on_eval_begin ['metrics', 'steps']
        """
        pass

    def on_eval_end(self, logs=None):
        """Called at the end of an evaluation; ``logs`` has the loss and metrics.

        Does nothing unless overridden.

        Args:
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_eval_end(self, logs=None):
            ...         print("on_eval_end", sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_eval_end ['batch_size', 'loss', 'samples', 'step']
            on_eval_end ['batch_size', 'loss', 'samples', 'step']
        """
        pass

    def on_predict_begin(self, logs=None):
        """Called at the start of `fw.Model.predict`.

        Does nothing unless overridden.

        Args:
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_predict_begin(self, logs=None):
            ...         print("on_predict_begin", sorted(logs or {}))
            >>> _ = model.predict(data, batch_size=2, verbose=0, callbacks=[Show()])
            on_predict_begin ['steps']
        """
        pass

    def on_predict_end(self, logs=None):
        """Called at the end of `fw.Model.predict`.

        Does nothing unless overridden.

        Args:
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_predict_end(self, logs=None):
            ...         print("on_predict_end", sorted(logs or {}))
            >>> _ = model.predict(data, batch_size=2, verbose=0, callbacks=[Show()])
            on_predict_end []
        """
        pass

    def on_epoch_begin(self, epoch, logs=None):
        """Called at the start of each training epoch.

        Does nothing unless overridden.

        Args:
            epoch (int): the epoch number, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_epoch_begin(self, epoch, logs=None):
            ...         print("on_epoch_begin", epoch, sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_epoch_begin 0 []
            on_epoch_begin 1 []
        """
        pass

    def on_epoch_end(self, epoch, logs=None):
        """Called at the end of each training epoch; ``logs`` has the epoch's last loss and
        metrics.

        Does nothing unless overridden.

        Args:
            epoch (int): the epoch number, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("on_epoch_end", epoch, sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_epoch_end 0 ['batch_size', 'loss', 'samples', 'step']
            on_epoch_end 1 ['batch_size', 'loss', 'samples', 'step']
        """
        pass

    def on_train_batch_begin(self, step, logs=None):
        """Called before each training batch.

        Does nothing unless overridden.

        Args:
            step (int): the batch number within the epoch or pass, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_batch_begin(self, step, logs=None):
            ...         print("on_train_batch_begin", step, sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_train_batch_begin 0 []
            on_train_batch_begin 1 ['batch_size', 'loss', 'step']
            on_train_batch_begin 0 []
            on_train_batch_begin 1 ['batch_size', 'loss', 'step']
        """
        pass

    def on_train_batch_end(self, step, logs=None):
        """Called after each training batch; ``logs`` has the batch's loss and metrics.

        Does nothing unless overridden.

        Args:
            step (int): the batch number within the epoch or pass, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("on_train_batch_end", step, sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_train_batch_end 0 ['batch_size', 'loss', 'step']
            on_train_batch_end 1 ['batch_size', 'loss', 'step']
            on_train_batch_end 0 ['batch_size', 'loss', 'step']
            on_train_batch_end 1 ['batch_size', 'loss', 'step']
        """
        pass

    def on_eval_batch_begin(self, step, logs=None):
        """Called before each evaluation batch.

        Does nothing unless overridden.

        Args:
            step (int): the batch number within the epoch or pass, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_eval_batch_begin(self, step, logs=None):
            ...         print("on_eval_batch_begin", step, sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_eval_batch_begin 0 []
            on_eval_batch_begin 1 ['batch_size', 'loss', 'step']
            on_eval_batch_begin 0 []
            on_eval_batch_begin 1 ['batch_size', 'loss', 'step']
        """
        pass

    def on_eval_batch_end(self, step, logs=None):
        """Called after each evaluation batch.

        Does nothing unless overridden.

        Args:
            step (int): the batch number within the epoch or pass, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_eval_batch_end(self, step, logs=None):
            ...         print("on_eval_batch_end", step, sorted(logs or {}))
            >>> _ = model.fit(data, eval_data=data, batch_size=2, epochs=2, verbose=0,
            ...           callbacks=[Show()])
            on_eval_batch_end 0 ['batch_size', 'loss', 'step']
            on_eval_batch_end 1 ['batch_size', 'loss', 'step']
            on_eval_batch_end 0 ['batch_size', 'loss', 'step']
            on_eval_batch_end 1 ['batch_size', 'loss', 'step']
        """
        pass

    def on_predict_batch_begin(self, step, logs=None):
        """Called before each prediction batch.

        Does nothing unless overridden.

        Args:
            step (int): the batch number within the epoch or pass, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_predict_batch_begin(self, step, logs=None):
            ...         print("on_predict_batch_begin", step, sorted(logs or {}))
            >>> _ = model.predict(data, batch_size=2, verbose=0, callbacks=[Show()])
            on_predict_batch_begin 0 []
            on_predict_batch_begin 1 []
        """
        pass

    def on_predict_batch_end(self, step, logs=None):
        """Called after each prediction batch.

        Does nothing unless overridden.

        Args:
            step (int): the batch number within the epoch or pass, from 0.
            logs (dict, optional): what the model reports at this point (e.g.
                ``loss``, metrics, ``batch_size``). Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.io import TensorDataset
            >>> data = TensorDataset([fw.ones([4, 2]), fw.zeros([4, 1])])
            >>> net = fw.nn.Linear(2, 1)
            >>> model = fw.Model(net)
            >>> opt = fw.optimizer.SGD(0.1, parameters=net.parameters())
            >>> model.prepare(opt, fw.nn.MSELoss())
            >>> class Show(fw.callbacks.Callback):
            ...     def on_predict_batch_end(self, step, logs=None):
            ...         print("on_predict_batch_end", step, sorted(logs or {}))
            >>> _ = model.predict(data, batch_size=2, verbose=0, callbacks=[Show()])
            on_predict_batch_end 0 ['batch_size', 'step']
            on_predict_batch_end 1 ['batch_size', 'step']
        """
        pass


class CallbackList:
    """Dispatches each event to every callback, in order (what ``fw.Model`` uses).

    Args:
        callbacks (list, optional): the callbacks. Default: None.

    Examples:
        >>> import fw
        >>> from fw.hapi.callbacks import CallbackList
        >>> class Show(fw.callbacks.Callback):
        ...     def on_train_begin(self, logs=None):
        ...         print("train begins", logs)
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         print("epoch", epoch, "ends", logs)
        ...     def on_train_batch_end(self, step, logs=None):
        ...         print("batch", step, logs, self.params)
        >>> cbks = CallbackList([Show()])
        >>> cbks.set_params({"epochs": 1})
        >>> cbks.on_begin("train", {"lr": 0.1})
        train begins {'lr': 0.1}
        >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
        batch 0 {'loss': 0.5} {'epochs': 1}
        >>> cbks.on_epoch_end(0, {"loss": 0.5})
        epoch 0 ends {'loss': 0.5}
    """

    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])
        self.params = {}
        self.model = None

    def append(self, cb):
        """Add a callback at the end.

        Args:
            cb (Callback): the callback.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self.callbacks.append(cb)

    def __iter__(self):
        return iter(self.callbacks)

    def set_params(self, params):
        """Give every callback the run's parameters.

        Args:
            params (dict): the parameters.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        """Give every callback the model.

        Args:
            model (Model): the model.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self.model = model
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, name, *args):
        for c in self.callbacks:
            getattr(c, name)(*args)

    def on_begin(self, mode, logs=None):
        """Call every callback's ``on_<mode>_begin``.

        Args:
            mode (str): ``"train"``, ``"eval"`` or ``"predict"``.
            logs (dict, optional): passed on. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self._call(f"on_{mode}_begin", logs)

    def on_end(self, mode, logs=None):
        """Call every callback's ``on_<mode>_end``.

        Args:
            mode (str): ``"train"``, ``"eval"`` or ``"predict"``.
            logs (dict, optional): passed on. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self._call(f"on_{mode}_end", logs)

    def on_epoch_begin(self, epoch=None, logs=None):
        """Call every callback's ``on_epoch_begin``.

        Args:
            epoch (int, optional): the epoch. Default: None.
            logs (dict, optional): passed on. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch=None, logs=None):
        """Call every callback's ``on_epoch_end``.

        Args:
            epoch (int, optional): the epoch. Default: None.
            logs (dict, optional): passed on. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode, step=None, logs=None):
        """Call every callback's ``on_<mode>_batch_begin``.

        Args:
            mode (str): ``"train"``, ``"eval"`` or ``"predict"``.
            step (int, optional): the batch number. Default: None.
            logs (dict, optional): passed on. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self._call(f"on_{mode}_batch_begin", step, logs)

    def on_batch_end(self, mode, step=None, logs=None):
        """Call every callback's ``on_<mode>_batch_end``.

        Args:
            mode (str): ``"train"``, ``"eval"`` or ``"predict"``.
            step (int, optional): the batch number. Default: None.
            logs (dict, optional): passed on. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.hapi.callbacks import CallbackList
            >>> class Show(fw.callbacks.Callback):
            ...     def on_train_begin(self, logs=None):
            ...         print("train begins", logs)
            ...     def on_epoch_end(self, epoch, logs=None):
            ...         print("epoch", epoch, "ends", logs)
            ...     def on_train_batch_end(self, step, logs=None):
            ...         print("batch", step, logs, self.params)
            >>> cbks = CallbackList([Show()])
            >>> cbks.set_params({"epochs": 1})
            >>> cbks.on_begin("train", {"lr": 0.1})
            train begins {'lr': 0.1}
            >>> cbks.on_batch_end("train", 0, {"loss": 0.5})
            batch 0 {'loss': 0.5} {'epochs': 1}
            >>> cbks.on_epoch_end(0, {"loss": 0.5})
            epoch 0 ends {'loss': 0.5}
        """
        self._call(f"on_{mode}_batch_end", step, logs)


def _fmt(v):
    if isinstance(v, (list, tuple)):
        return " ".join(_fmt(x) for x in v)
    if isinstance(v, np.ndarray):
        v = v.reshape(-1)
        return " ".join(f"{float(x):.4f}" for x in v[:4])
    if isinstance(v, numbers.Number):
        return f"{float(v):.4f}" if isinstance(v, float) else str(v)
    return str(v)


class ProgBarLogger(Callback):
    """Report training progress (``fw.Model`` adds one per its ``verbose``).

    ``verbose=1`` draws a tqdm bar per epoch on a terminal and, when stdout is not one
    (a log file, a pipe, a notebook capture), prints the ``verbose=2`` lines instead;
    ``verbose=2`` prints a line every ``log_freq`` steps and one per epoch; ``verbose=0``
    is silent.

    Args:
        log_freq (int, optional): steps between log lines (or bar refreshes). Default: 1.
        verbose (int, optional): 0, 1 or 2. Default: 2.

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
        >>> logger = fw.callbacks.ProgBarLogger(log_freq=2, verbose=2)
        >>> model.fit(data, batch_size=8, epochs=1, verbose=0, callbacks=[logger])
        Epoch 1/1
        step 2/2 - loss: 0.9829 - acc: 0.1250 - ...ms/step
        Epoch 1 done - loss: 0.9829 - acc: 0.1250 - samples: 16
    """

    def __init__(self, log_freq=1, verbose=2):
        super().__init__()
        self.log_freq = max(int(log_freq), 1)
        self.verbose = verbose
        self._bar = None

    def _keys(self, logs):
        keys = ["loss"] + [k for k in (logs or {}) if k not in ("loss", "step", "batch_size")]
        return [k for k in keys if k in (logs or {})]

    def _line(self, logs):
        return " - ".join(f"{k}: {_fmt(logs[k])}" for k in self._keys(logs))

    def _lines(self) -> bool:
        # plain lines: verbose=2, or verbose=1 with no terminal to draw a bar on
        if self.verbose == 2:
            return True
        isatty = getattr(sys.stdout, "isatty", None)
        return self.verbose == 1 and not (isatty is not None and isatty())

    def _open_bar(self, total, desc):
        if self._lines():
            return None
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is a dependency; still work without it
            return None
        return tqdm(total=total, desc=desc, leave=True, dynamic_ncols=True, disable=None,
                    file=sys.stdout)

    def on_train_begin(self, logs=None):
        self.epochs = self.params.get("epochs")
        self.train_metrics = self.params.get("metrics", [])

    def on_epoch_begin(self, epoch=None, logs=None):
        self.steps = self.params.get("steps")
        self.epoch = epoch
        self._t0 = time.time()
        if self.verbose and self.epochs:
            if self.verbose == 1:
                self._bar = self._open_bar(self.steps, f"Epoch {epoch + 1}/{self.epochs}")
            if self._bar is None:
                print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)

    def _progress(self, step, logs, total):
        if self._bar is not None:
            self._bar.update(step + 1 - self._bar.n)
            self._bar.set_postfix_str(self._line(logs), refresh=False)
        elif self._lines() and ((step + 1) % self.log_freq == 0 or (total and step + 1 == total)):
            ms = (time.time() - self._t0) * 1000 / (step + 1)
            of = f"/{total}" if total else ""
            print(f"step {step + 1}{of} - {self._line(logs)} - {ms:.0f}ms/step", flush=True)

    def on_train_batch_end(self, step, logs=None):
        if self.verbose:
            self._progress(step, logs or {}, self.steps)

    def on_epoch_end(self, epoch, logs=None):
        if self._bar is not None:
            self._bar.set_postfix_str(self._line(logs or {}))
            self._bar.close()
            self._bar = None
        elif self._lines() and logs:
            print(f"Epoch {epoch + 1} done - {self._line(logs)}", flush=True)

    def on_eval_begin(self, logs=None):
        self.eval_steps = (logs or {}).get("steps")
        self._t0 = time.time()
        if self.verbose:
            if self.verbose == 1:
                self._bar = self._open_bar(self.eval_steps, "Eval")
            if self._bar is None:
                print("Eval begin...", flush=True)

    def on_eval_batch_end(self, step, logs=None):
        if self.verbose:
            self._progress(step, logs or {}, self.eval_steps)

    def on_eval_end(self, logs=None):
        if self._bar is not None:
            self._bar.set_postfix_str(self._line(logs or {}))
            self._bar.close()
            self._bar = None
        elif self._lines():
            print(f"Eval samples: {(logs or {}).get('samples', '?')} - "
                  f"{self._line(logs or {})}", flush=True)

    def on_predict_begin(self, logs=None):
        self._t0 = time.time()
        if self.verbose == 1:
            self._bar = self._open_bar((logs or {}).get("steps"), "Predict")

    def on_predict_batch_end(self, step, logs=None):
        if self._bar is not None:
            self._bar.update(step + 1 - self._bar.n)

    def on_predict_end(self, logs=None):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class ModelCheckpoint(Callback):
    """Save the model every ``save_freq`` epochs to ``save_dir/<epoch>`` and at the
    end of training to ``save_dir/final`` (``.pdparams`` and ``.pdopt`` files).
    ``fw.Model.fit(save_dir=...)`` adds one.

    Args:
        save_freq (int, optional): the period in epochs. Default: 1.
        save_dir (str, optional): the directory; None saves nothing. Default: None.

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
        >>> ckpt = fw.callbacks.ModelCheckpoint(save_freq=2, save_dir="ckpt")
        >>> model.fit(data, batch_size=8, epochs=3, verbose=0, callbacks=[ckpt])
        >>> import os
        >>> sorted(os.listdir("ckpt"))
        ['1.pdopt', '1.pdparams', 'final.pdopt', 'final.pdparams']
    """

    def __init__(self, save_freq=1, save_dir=None):
        super().__init__()
        self.save_freq = max(int(save_freq), 1)
        self.save_dir = save_dir

    def _dir(self):
        return self.save_dir or self.params.get("save_dir")

    def on_epoch_begin(self, epoch=None, logs=None):
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        d = self._dir()
        if d and self.model is not None and (epoch + 1) % self.save_freq == 0:
            self.model.save(os.path.join(d, str(epoch)))

    def on_train_end(self, logs=None):
        d = self._dir()
        if d and self.model is not None:
            self.model.save(os.path.join(d, "final"))


class EarlyStopping(Callback):
    """Stop training when an evaluated quantity stops improving.

    The quantity comes from the evaluation after each epoch, so ``fit`` needs
    ``eval_data``. With ``save_best_model`` and a ``save_dir``, the best model is saved
    to ``save_dir/best_model``.

    Args:
        monitor (str, optional): the log key to watch, ``"loss"`` or a metric name.
            Default: "loss".
        mode (str, optional): ``"min"``, ``"max"`` or ``"auto"`` (max for accuracy-like
            names, min otherwise). Default: "auto".
        patience (int, optional): evaluations without improvement tolerated. Default: 0.
        verbose (int, optional): print when stopping. Default: 1.
        min_delta (float, optional): the smallest change that counts as improvement.
            Default: 0.
        baseline (float, optional): a value the quantity must beat first. Default: None.
        save_best_model (bool, optional): save the best model. Default: True.

    Examples:
        >>> import fw
        >>> from fw.io import TensorDataset
        >>> _ = fw.seed(0)
        >>> x = fw.randn([16, 4])
        >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        >>> model = fw.Model(net)
        >>> opt = fw.optimizer.SGD(learning_rate=0.0, parameters=model.parameters())
        >>> model.prepare(opt, fw.nn.CrossEntropyLoss())   # a zero rate: the loss never improves
        >>> stop = fw.callbacks.EarlyStopping(monitor="loss", patience=1, verbose=0)
        >>> seen = []
        >>> class Epochs(fw.callbacks.Callback):
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         seen.append(epoch)
        >>> model.fit(data, data, batch_size=8, epochs=10, verbose=0, callbacks=[stop, Epochs()])
        >>> seen
        [0, 1, 2]
    """

    def __init__(self, monitor="loss", mode="auto", patience=0, verbose=1, min_delta=0,
                 baseline=None, save_best_model=True):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.save_best_model = save_best_model
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode!r} is unknown, using 'auto'", stacklevel=2)
            mode = "auto"
        if mode == "min" or (mode == "auto" and "acc" not in monitor):
            self.monitor_op = np.less
            self.min_delta *= -1
        else:
            self.monitor_op = np.greater

    def on_train_begin(self, logs=None):
        self.wait_epoch = 0
        self.stopped_epoch = 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = np.inf if self.monitor_op is np.less else -np.inf
        self.save_dir = self.params.get("save_dir")

    def on_eval_end(self, logs=None):
        if logs is None or self.monitor not in logs:
            warnings.warn(f"EarlyStopping: the monitored key '{self.monitor}' is not in the "
                          f"evaluation logs {sorted(logs or {})}", stacklevel=2)
            return
        current = logs[self.monitor]
        if isinstance(current, (list, tuple, np.ndarray)):
            current = float(np.asarray(current).reshape(-1)[0])
        elif not isinstance(current, numbers.Number):
            return
        if self.monitor_op(current - self.min_delta, self.best_value):
            self.best_value = current
            self.wait_epoch = 0
            if self.save_best_model and self.save_dir is not None and self.model is not None:
                self.model.save(os.path.join(self.save_dir, "best_model"))
        else:
            self.wait_epoch += 1
        if self.wait_epoch > self.patience and self.model is not None:
            self.model.stop_training = True
            if self.verbose > 0:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.", flush=True)
        self.stopped_epoch += 1


class LRScheduler(Callback):
    """Step the optimizer's learning-rate scheduler after every batch (``by_step``) or
    every epoch (``by_epoch``). ``fw.Model.fit`` adds one stepping by batch unless you
    pass your own.

    Args:
        by_step (bool, optional): step after every training batch. Default: True.
        by_epoch (bool, optional): step after every epoch (set ``by_step=False``).
            Default: False.

    Examples:
        >>> import fw
        >>> from fw.io import TensorDataset
        >>> _ = fw.seed(0)
        >>> x = fw.randn([16, 4])
        >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        >>> model = fw.Model(net)
        >>> sched = fw.optimizer.lr.StepDecay(learning_rate=0.1, step_size=1, gamma=0.5)
        >>> opt = fw.optimizer.SGD(learning_rate=sched, parameters=model.parameters())
        >>> model.prepare(opt, fw.nn.CrossEntropyLoss())
        >>> per_epoch = fw.callbacks.LRScheduler(by_step=False, by_epoch=True)
        >>> model.fit(data, batch_size=8, epochs=3, verbose=0, callbacks=[per_epoch])
        >>> sched.last_epoch, opt.get_lr()
        (3, 0.0125)
    """

    def __init__(self, by_step=True, by_epoch=False):
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("LRScheduler callback: by_step and by_epoch are exclusive")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def _scheduler(self):
        from fw.optimizer.lr import LRScheduler as Sched

        opt = getattr(self.model, "_optimizer", None)
        lr = getattr(opt, "_learning_rate", None)
        return lr if isinstance(lr, Sched) else None

    def on_epoch_end(self, epoch, logs=None):
        s = self._scheduler()
        if self.by_epoch and s is not None:
            s.step()

    def on_train_batch_end(self, step, logs=None):
        s = self._scheduler()
        if self.by_step and s is not None:
            s.step()


class ReduceLROnPlateau(Callback):
    """Multiply the (float) learning rate by ``factor`` when the monitored evaluation
    quantity has not improved for ``patience`` evaluations.

    Args:
        monitor (str, optional): the log key to watch (``"loss"`` or a metric name).
            Default: "loss".
        factor (float, optional): the reduction factor, below 1. Default: 0.1.
        patience (int, optional): evaluations without improvement before reducing.
            Default: 10.
        verbose (int, optional): print reductions. Default: 1.
        mode (str, optional): ``"min"``, ``"max"`` or ``"auto"``. Default: "auto".
        min_delta (float, optional): the smallest change that counts as improvement.
            Default: 0.0001.
        cooldown (int, optional): evaluations to wait after a reduction. Default: 0.
        min_lr (float, optional): the lower bound of the rate. Default: 0.

    Examples:
        >>> import fw
        >>> from fw.io import TensorDataset
        >>> _ = fw.seed(0)
        >>> x = fw.randn([16, 4])
        >>> data = TensorDataset([x, (x.sum(axis=1, keepdim=True) > 0).astype("int64")])
        >>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        >>> model = fw.Model(net)
        >>> opt = fw.optimizer.SGD(learning_rate=0.0, parameters=model.parameters())
        >>> model.prepare(opt, fw.nn.CrossEntropyLoss())   # a zero rate: the loss never improves
        >>> opt.set_lr(1e-9)
        >>> reduce = fw.callbacks.ReduceLROnPlateau(patience=1, factor=0.5, verbose=0,
        ...                                         min_delta=0.1)
        >>> model.fit(data, data, batch_size=8, epochs=4, verbose=0, callbacks=[reduce])
        >>> opt.get_lr() < 1e-9
        True
    """

    def __init__(self, monitor="loss", factor=0.1, patience=10, verbose=1, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: 'factor' must be < 1.0, got {factor}")
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self.cooldown_counter = 0
        self.wait = 0
        if mode not in ("auto", "min", "max"):
            mode = "auto"
        self.mode = "max" if mode == "max" or (mode == "auto" and "acc" in monitor) else "min"
        self._reset()

    def _reset(self):
        self.best = np.inf if self.mode == "min" else -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def _better(self, a, b):
        return a < b - self.min_delta if self.mode == "min" else a > b + self.min_delta

    def on_eval_end(self, logs=None):
        if logs is None or self.monitor not in logs:
            warnings.warn(f"ReduceLROnPlateau: the monitored key '{self.monitor}' is not in "
                          f"the evaluation logs {sorted(logs or {})}", stacklevel=2)
            return
        cur = logs[self.monitor]
        cur = float(np.asarray(cur).reshape(-1)[0])
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._better(cur, self.best):
            self.best = cur
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                opt = getattr(self.model, "_optimizer", None)
                from fw.optimizer.lr import LRScheduler as Sched

                if opt is None or isinstance(opt._learning_rate, Sched):
                    warnings.warn("ReduceLROnPlateau: the optimizer's learning rate is driven "
                                  "by an LRScheduler; not changing it", stacklevel=2)
                    return
                old = opt.get_lr()
                new = max(old * self.factor, self.min_lr)
                if old - new > 1e-12:
                    opt.set_lr(new)
                    if self.verbose > 0:
                        print(f"ReduceLROnPlateau: learning rate reduced to {new}.", flush=True)
                self.cooldown_counter = self.cooldown
                self.wait = 0


class TensorBoard(Callback):
    """Log the training and evaluation scalars (loss and metrics) to TensorBoard event
    files in `log_dir` (``train/`` per step, ``eval/`` per evaluation) with
    ``fw.utils.LogWriter``; flushed every `flush_secs` seconds and after each epoch and
    evaluation.

    Args:
        log_dir (str): the directory of the event files.
        flush_secs (int, optional): seconds between background flushes. Default: 30.

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
        >>> board = fw.callbacks.TensorBoard(log_dir="logs")
        >>> model.fit(data, data, batch_size=8, epochs=1, verbose=0, callbacks=[board])
        >>> import os
        >>> any(f.startswith("events.out.tfevents") for f in os.listdir("logs"))
        True
    """

    def __init__(self, log_dir, flush_secs=30):
        super().__init__()
        self.log_dir = log_dir
        self.flush_secs = flush_secs
        self._writer = None
        self.train_step = 0
        self.eval_step = 0

    def _w(self):
        if self._writer is None:
            from fw.hapi.tensorboard import open_writer

            self._writer = open_writer(self.log_dir, self.flush_secs)
        return self._writer

    def _write(self, prefix, logs, step):
        for k, v in (logs or {}).items():
            if k in ("step", "batch_size", "samples", "steps"):
                continue
            vals = np.asarray(v, dtype=np.float64).reshape(-1)
            if vals.size == 0 or not np.isfinite(vals[0]):
                continue
            self._w().add_scalar(f"{prefix}/{k}", float(vals[0]), step)

    def on_train_batch_end(self, step, logs=None):
        self.train_step += 1
        self._write("train", logs, self.train_step)

    def on_eval_end(self, logs=None):
        self.eval_step += 1
        self._write("eval", logs, self.eval_step)
        if self._writer is not None:
            self._writer.flush()

    def on_epoch_end(self, epoch, logs=None):
        if self._writer is not None:
            self._writer.flush()

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class VisualDL(TensorBoard):
    """Paddle's VisualDL logging callback: fw writes TensorBoard event files with
    ``fw.utils.LogWriter`` (VisualDL and TensorBoard both display them); the same as
    `TensorBoard`.

    Args:
        log_dir (str): the directory of the event files.
        flush_secs (int, optional): seconds between background flushes. Default: 30.

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
        >>> model.fit(data, batch_size=8, epochs=1, verbose=0,
        ...           callbacks=[fw.callbacks.VisualDL(log_dir="vdl")])
        >>> import os
        >>> len(os.listdir("vdl")) > 0
        True
    """


def config_callbacks(callbacks=None, model=None, batch_size=None, epochs=None, steps=None,
                     log_freq=2, verbose=2, save_freq=1, save_dir=None, metrics=None,
                     mode="train"):
    """The `CallbackList` ``fw.Model`` runs: your callbacks plus a `ProgBarLogger`
    (when `verbose`), a `ModelCheckpoint` and an `LRScheduler` stepper (when training),
    unless you gave one of those yourself.

    Args:
        callbacks (list, optional): your callbacks. Default: None.
        model (Model, optional): the model they get. Default: None.
        batch_size (int, optional): the run's batch size (for ``params``). Default: None.
        epochs (int, optional): the number of epochs. Default: None.
        steps (int, optional): the batches per epoch. Default: None.
        log_freq (int, optional): the `ProgBarLogger`'s period. Default: 2.
        verbose (int, optional): the `ProgBarLogger`'s verbosity; 0 adds none. Default: 2.
        save_freq (int, optional): the `ModelCheckpoint`'s period. Default: 1.
        save_dir (str, optional): the `ModelCheckpoint`'s directory. Default: None.
        metrics (list, optional): the metric names (for ``params``). Default: None.
        mode (str, optional): ``"train"``, ``"eval"`` or ``"predict"``. Default: "train".

    Returns:
        CallbackList, the callbacks with ``params`` and the model set.

    Examples:
        >>> import fw
        >>> from fw.hapi.callbacks import config_callbacks
        >>> cbks = config_callbacks(callbacks=[fw.callbacks.EarlyStopping()], epochs=2, verbose=0)
        >>> [type(c).__name__ for c in cbks]
        ['EarlyStopping', 'ModelCheckpoint', 'LRScheduler']
        >>> cbks.params["epochs"]
        2
    """
    cbks = list(callbacks or [])
    if not any(isinstance(c, ProgBarLogger) for c in cbks) and verbose:
        cbks = [ProgBarLogger(log_freq, verbose=verbose)] + cbks
    if mode == "train":
        if not any(isinstance(c, ModelCheckpoint) for c in cbks):
            cbks = cbks + [ModelCheckpoint(save_freq, save_dir)]
        if not any(isinstance(c, LRScheduler) for c in cbks):
            cbks = cbks + [LRScheduler()]
    lst = CallbackList(cbks)
    lst.set_model(model)
    params = {"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
              "metrics": metrics or [], "save_dir": save_dir, "log_freq": log_freq,
              "save_freq": save_freq}
    lst.set_params(params)
    return lst
