"""The rest of ``paddle.static``'s names: metrics (`accuracy`, `auc`), variables
(`create_global_var`, `create_parameter`, `WeightNormParamAttr`), `Print`,
`ExponentialMovingAverage`, and the execution-tuning classes that fw accepts as
no-ops (`BuildStrategy`, `CompiledProgram`) or refuses (the IPU/XPU ones).
"""

from __future__ import annotations

import contextlib

from fw.core.ir.core import Value

__all__ = ["accuracy", "auc", "ctr_metric_bundle", "create_global_var", "create_parameter",
           "WeightNormParamAttr",
           "Print", "ExponentialMovingAverage", "BuildStrategy", "CompiledProgram",
           "IpuStrategy", "IpuCompiledProgram", "ipu_shard_guard", "set_ipu_shard",
           "xpu_places", "device_guard", "name_scope"]


def accuracy(input, label, k=1, correct=None, total=None):  # noqa: A002
    """Top-`k` accuracy of a batch (Paddle's ``static.accuracy``): the fraction of
    rows of `input` whose `label` is among the k highest scores.

    Args:
        input (Tensor): scores ``[N, C]``. label (Tensor): int ``[N, 1]`` or ``[N]``.
        k (int): top-k. correct, total: accepted for Paddle code (ignored: fw
            returns the fraction only).

    Returns:
        Tensor: a float32 scalar.

    Examples:
        >>> import fw
        >>> x = fw.to_tensor([[0.1, 0.9], [0.8, 0.2]])
        >>> y = fw.to_tensor([[1], [1]], dtype="int64")
        >>> float(fw.static.accuracy(x, y))
        0.5
    """
    import fw

    s = list(input.shape)
    if len(s) != 2:
        raise ValueError(f"static.accuracy: 'input' must be [N, C], got shape {s}")
    ls = list(label.shape)
    if len(ls) not in (1, 2) or (len(ls) == 2 and ls[1] != 1):
        raise ValueError(f"static.accuracy: 'label' must be [N, 1] or [N], got shape {ls}")
    if s[1] >= 0 and not 1 <= k <= s[1]:
        raise ValueError(f"static.accuracy: k={k} must be in [1, {s[1]}]")
    _, idx = fw.topk(input, k, axis=-1)
    lab = fw.reshape(label, [-1, 1]).astype(idx.dtype)
    hit = fw.any(idx == lab, axis=-1).astype("float32")
    return fw.mean(hit)


def auc(input, label, curve="ROC", num_thresholds=4095, topk=1, slide_steps=1,  # noqa: A002
        ins_tag_weight=None):
    """Area under the ROC (or PR) curve of a binary classifier's batch (Paddle's
    ``static.auc``), computed from `num_thresholds` + 1 histogram buckets of the
    positive-class probability ``input[:, 1]``, as Paddle's auc op does.

    fw computes the batch statistic only: Paddle's returned global accumulator is
    the same batch value here (fw keeps no stat tensors across runs; use
    `fw.metric.Auc` to accumulate across batches).

    Args:
        input (Tensor): ``[N, 2]`` probabilities. label (Tensor): ``[N, 1]`` 0/1.
        curve (str): ``"ROC"`` or ``"PR"``. num_thresholds (int): buckets - 1.
        topk, slide_steps, ins_tag_weight: accepted.

    Returns:
        tuple: ``(auc, batch_auc, [])``: two float scalars (equal) and no state vars.

    Examples:
        >>> import fw
        >>> p = fw.to_tensor([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
        >>> y = fw.to_tensor([[0], [1], [0], [1]], dtype="int64")
        >>> float(fw.static.auc(p, y)[0])
        1.0
    """
    import fw

    s = list(input.shape)
    if len(s) != 2 or s[1] != 2:
        raise ValueError(f"static.auc: 'input' must be [N, 2] class probabilities, got {s}")
    if curve not in ("ROC", "PR"):
        raise ValueError(f"static.auc: curve must be 'ROC' or 'PR', got {curve!r}")
    nb = int(num_thresholds) + 1
    p = input[:, 1]
    bucket = fw.clip(fw.floor(p * num_thresholds), 0, num_thresholds).astype("int64")
    y = fw.reshape(label, [-1]).astype("float32")
    onehot = fw.nn.functional.one_hot(bucket, nb)  # [N, nb]
    pos = fw.sum(onehot * fw.unsqueeze(y, 1), axis=0)
    neg = fw.sum(onehot * fw.unsqueeze(1.0 - y, 1), axis=0)
    # walk thresholds from the highest bucket down (Paddle's trapezoid rule)
    tp = fw.flip(fw.cumsum(fw.flip(pos, [0]), 0), [0])
    fp = fw.flip(fw.cumsum(fw.flip(neg, [0]), 0), [0])
    tp = fw.concat([tp, fw.zeros([1], "float32")])
    fp = fw.concat([fp, fw.zeros([1], "float32")])
    tot_p, tot_n = tp[0], fp[0]
    if curve == "ROC":
        area = fw.sum((fp[:-1] - fp[1:]) * (tp[:-1] + tp[1:]) / 2.0)
        val = area / fw.maximum(tot_p * tot_n, fw.to_tensor(1e-12))
        val = fw.where((tot_p > 0) & (tot_n > 0), val, fw.zeros_like(val))
    else:
        prec = tp / fw.maximum(tp + fp, fw.to_tensor(1e-12))
        rec = tp / fw.maximum(tot_p, fw.to_tensor(1e-12))
        val = fw.sum((rec[:-1] - rec[1:]) * (prec[:-1] + prec[1:]) / 2.0)
    return val, val, []


def ctr_metric_bundle(input, label, ins_tag_weight=None):  # noqa: A002
    """Running CTR statistics (Paddle's ``static.ctr_metric_bundle``): six
    persistable ``[1]`` accumulators that each run of the program adds its batch to:
    squared error ``sum((input - label)^2)``, absolute error ``sum|input - label|``,
    ``sum(input)``, ``q = sum(sigmoid(input)) * w``, positives ``sum(label)`` and
    instances ``N * w``, where ``w = ins_tag_weight[0]`` (default 1; 0 marks a fake
    batch). On concrete tensors the accumulators are updated at once.

    Args:
        input (Tensor): predicted probabilities ``[N, 1]``. label (Tensor): ``[N, 1]``.
        ins_tag_weight (Tensor, optional): ``[1, 1]`` (or more rows; the first counts).

    Returns:
        tuple: (sqrerr, abserr, prob, q, pos_num, ins_num) accumulators.

    Examples:
        >>> import fw
        >>> p = fw.to_tensor([[0.5], [0.25]])
        >>> y = fw.to_tensor([[1.0], [0.0]])
        >>> acc = fw.static.ctr_metric_bundle(p, y)
        >>> [round(float(a), 4) for a in acc]
        [0.3125, 0.75, 0.75, 1.1846, 1.0, 2.0]
    """
    import fw

    if list(input.shape) != list(label.shape):
        raise ValueError(f"static.ctr_metric_bundle: input {list(input.shape)} and label "
                         f"{list(label.shape)} must have the same shape")
    accs = []
    for what in ("sqrerr", "abserr", "prob", "q", "pos_num", "ins_num"):
        a = fw.zeros([1], "float32")
        a.persistable = True
        a.name = f"ctr_metric_bundle.{what}_{id(a):x}"
        accs.append(a)
    x = input.astype("float32")
    y = label.astype("float32")
    w = (fw.reshape(ins_tag_weight, [-1])[0:1].astype("float32") if ins_tag_weight is not None
         else None)
    d = x - y
    ones = fw.ones_like(fw.reshape(y[:, 0:1] if len(y.shape) > 1 else y, [-1]))
    batch = [fw.sum(d * d), fw.sum(fw.abs(d)), fw.sum(x), fw.sum(fw.nn.functional.sigmoid(x)),
             fw.sum(y), fw.sum(ones)]
    if w is not None:
        batch[3] = batch[3] * w
        batch[5] = batch[5] * w
    symbolic = next((v for v in (input, label, ins_tag_weight) if type(v) is Value), None)
    if symbolic is None:
        for a, b in zip(accs, batch):
            a.set_value((a + fw.reshape(b, [1])).numpy())
        return tuple(accs)
    from fw.static._mode import builder_for

    with builder_for(symbolic) as bld:
        for a, b in zip(accs, batch):
            bld.record_update(a, bld.current_value(a) + fw.reshape(b, [1]))
    return tuple(accs)


def create_global_var(shape, value, dtype, persistable=False, force_cpu=False, name=None):
    """A tensor filled with `value` that static programs read as a variable
    (Paddle's ``static.create_global_var``); ``persistable`` ones are saved with
    the program's parameters.

    Args:
        shape (list): the shape. value (float): the fill value. dtype: its dtype.
        persistable (bool): saved with the parameters. force_cpu (bool): accepted.
        name (str, optional): its name.

    Returns:
        Tensor: the variable (gradients stop at it).

    Examples:
        >>> import fw
        >>> v = fw.static.create_global_var([2], 1.5, "float32", name="g")
        >>> v.numpy().tolist(), v.name
        ([1.5, 1.5], 'g')
    """
    import fw

    shape = [int(s) for s in shape]
    if any(s < 0 for s in shape):
        raise ValueError(f"static.create_global_var: shape {shape} must be fully known")
    t = fw.full(shape, value, dtype)
    t.stop_gradient = True
    t.persistable = bool(persistable)
    if name is not None:
        t.name = name
    return t


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False,
                     default_initializer=None):
    """A trainable parameter (Paddle's ``static.create_parameter``): the same as
    `fw.create_parameter`; programs that use it train it.

    Args:
        shape (list). dtype. name (str, optional). attr (ParamAttr, optional).
        is_bias (bool): zero initialised when no initializer is given.
        default_initializer (Initializer, optional).

    Returns:
        Parameter.

    Examples:
        >>> import fw
        >>> w = fw.static.create_parameter([3, 2], "float32", name="w")
        >>> w.shape, w.name
        ([3, 2], 'w')
    """
    from fw.nn import create_parameter as _cp

    return _cp(shape, dtype, name=name, attr=attr, is_bias=is_bias,
               default_initializer=default_initializer)


def _param_attr_base():
    from fw.nn import ParamAttr

    return ParamAttr


class WeightNormParamAttr:
    """A `ParamAttr` that asks for weight normalisation along `dim` (Paddle's
    ``static.WeightNormParamAttr``). fw's layers read its ParamAttr fields (name,
    initializer, learning rate, …); the reparameterisation itself is
    `fw.nn.utils.weight_norm` on a dygraph layer (fw's static layers do not split
    the weight into g and v).

    Args:
        dim (int, optional): the dim kept by the norm. name, initializer,
        learning_rate, regularizer, trainable, do_model_average, need_clip: as
        `fw.ParamAttr`.

    Examples:
        >>> import fw
        >>> a = fw.static.WeightNormParamAttr(dim=0, name="w")
        >>> a.dim, a.name, isinstance(a, fw.ParamAttr)
        (0, 'w', True)
    """

    def __new__(cls, *args, **kwargs):
        base = _param_attr_base()
        # a ParamAttr subclass made once: fw.static must not import fw.nn eagerly
        sub = _WN_CLASS.get("cls")
        if sub is None:
            sub = type("WeightNormParamAttr", (base,), {"__doc__": cls.__doc__,
                                                        "__init__": _wn_init})
            _WN_CLASS["cls"] = sub
        obj = base.__new__(sub)
        obj.__init__(*args, **kwargs)
        return obj


_WN_CLASS: dict = {}


def _wn_init(self, dim=None, name=None, initializer=None, learning_rate=1.0, regularizer=None,
             trainable=True, do_model_average=False, need_clip=True):
    _param_attr_base().__init__(self, name=name, initializer=initializer,
                                learning_rate=learning_rate, regularizer=regularizer,
                                trainable=trainable, do_model_average=do_model_average,
                                need_clip=need_clip)
    self.dim = dim


def Print(input, first_n=-1, message=None, summarize=20, print_tensor_name=True,  # noqa: A002, N802
          print_tensor_type=True, print_tensor_shape=True, print_tensor_layout=True,
          print_tensor_lod=True, print_phase="both"):
    """Print `input` and return it (Paddle's ``static.Print``). On a concrete tensor
    it prints now. fw programs have no print op: on a static variable it raises,
    naming `fw.jit`'s graph break (``print(tensor)`` in converted code) as the way.

    Args:
        input (Tensor). first_n (int): accepted. message (str, optional): a prefix.
        summarize (int): elements shown (-1: all). print_tensor_*: which fields.
        print_phase (str): accepted.

    Returns:
        Tensor: `input`.

    Examples:
        >>> import fw
        >>> _ = fw.static.Print(fw.to_tensor([1.0, 2.0]), message="x", print_tensor_name=False,
        ...                     print_tensor_type=False, print_tensor_layout=False,
        ...                     print_tensor_lod=False)  # doctest: +NORMALIZE_WHITESPACE
        x shape: [2] data: [1.0, 2.0]
    """
    if type(input) is Value:
        raise NotImplementedError(
            "static.Print: fw static programs have no print op; fetch the variable with "
            "Executor.run, or use print(tensor) inside fw.jit.to_static code (a graph break)")
    if print_phase not in ("forward", "backward", "both"):
        raise ValueError(f"static.Print: print_phase must be forward/backward/both, got "
                         f"{print_phase!r}")
    vals = input.numpy().reshape(-1).tolist()
    if summarize is not None and summarize >= 0:
        vals = vals[:summarize]
    parts = [message] if message else []
    if print_tensor_name:
        parts.append(f"name: {getattr(input, 'name', None) or 'generated_tensor'}")
    if print_tensor_type:
        parts.append(f"dtype: {input.dtype}")
    if print_tensor_shape:
        parts.append(f"shape: {list(input.shape)}")
    if print_tensor_layout:
        parts.append("layout: NCHW")
    if print_tensor_lod:
        parts.append("lod: []")
    parts.append(f"data: {vals}")
    print("\t".join(parts))
    return input


class ExponentialMovingAverage:
    """Exponential moving averages of the trainable parameters (Paddle's
    ``static.ExponentialMovingAverage``).

    `update()` (after ``optimizer.minimize``) adds to the default main program the
    update ``ema = decay * ema + (1 - decay) * param`` of every parameter the program
    uses (with `thres_steps`, ``decay = min(decay, (1 + t) / (10 + t))``);
    ``with ema.apply(exe):`` swaps the bias-corrected averages ``ema / (1 -
    decay^t)`` (t: the steps run, decay: the latest step's) into the parameters
    and `restore` puts the trained values back.

    Args:
        decay (float): the decay rate. thres_steps (Tensor, optional): a step count
            variable for the warm-up decay. name (str, optional).

    Examples:
        >>> import fw, numpy as np
        >>> fw.enable_static()
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [1, 1])
        ...     two = fw.nn.initializer.Constant(2.0)
        ...     w = fw.static.create_parameter([1, 1], "float32", name="ema_w",
        ...                                    default_initializer=two)
        ...     y = fw.matmul(x, w)
        ...     ema = fw.static.ExponentialMovingAverage(0.5)
        ...     ema.update()
        >>> exe = fw.static.Executor()
        >>> _ = exe.run(main, feed={"x": np.ones([1, 1], "float32")}, fetch_list=[y])
        >>> with ema.apply(exe):
        ...     float(w.numpy()[0, 0])
        2.0
        >>> fw.disable_static()
    """

    def __init__(self, decay=0.999, thres_steps=None, name=None):
        if not 0.0 <= float(decay) <= 1.0:
            raise ValueError(f"ExponentialMovingAverage: decay must be in [0, 1], got {decay}")
        self._decay = float(decay)
        self._thres_steps = thres_steps
        self._name = name or "ema"
        self._shadow: dict = {}  # id(param) -> (param, shadow tensor)
        self._step = None
        self._backup: dict = {}

    def update(self):
        """Add the moving-average updates to the default main program (call it after the
        net, and ``optimizer.minimize``, are built); each run of the program then updates
        the averages.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> fw.enable_static()
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main):
            ...     x = fw.static.data("x", [1, 1])
            ...     w = fw.static.create_parameter([1, 1], "float32", name="ema_upd_w")
            ...     y = fw.matmul(x, w)
            ...     before = len(list(main.walk()))
            ...     fw.static.ExponentialMovingAverage(0.5).update()
            >>> len(list(main.walk())) > before     # the update ops were added
            True
            >>> fw.disable_static()
        """
        import fw
        from fw.static._mode import builder_for
        from fw.static._program import default_main_program

        prog = default_main_program()
        params = [prog.captured[a.label] for a in prog.all_parameters()
                  if a.label in prog.captured]
        params = [p for p in params if getattr(p, "trainable", False)]
        if not params:
            raise ValueError("ExponentialMovingAverage.update: the default main program uses "
                             "no trainable parameters yet (call it after building the net)")
        if self._step is None:
            self._step = fw.zeros([], "float32")
            self._step.persistable = True
            self._step.name = f"{self._name}.step"
            # the decay of the latest step (scheduled with thres_steps): apply's bias
            # correction uses it, as Paddle's apply program does
            self._decay_t = fw.full([], self._decay, "float32")
            self._decay_t.persistable = True
            self._decay_t.name = f"{self._name}.decay"
        for p in params:
            if id(p) not in self._shadow:
                s = fw.zeros(list(p.shape), p.dtype)
                s.persistable = True
                s.name = f"{p.name}.{self._name}"
                self._shadow[id(p)] = (p, s)
        with builder_for(prog) as b:
            step = b.current_value(self._step) + 1.0
            b.record_update(self._step, step)
            if self._thres_steps is not None:
                t = fw.cast(self._thres_steps, "float32")
                decay = fw.minimum(fw.full([], self._decay, "float32"), (1.0 + t) / (10.0 + t))
            else:
                decay = fw.full([], self._decay, "float32")
            b.record_update(self._decay_t, decay)
            for p, s in self._shadow.values():
                new = decay * b.current_value(s) + (1.0 - decay) * b.current_value(p)
                b.record_update(s, new)

    @contextlib.contextmanager
    def apply(self, executor=None, need_restore=True):
        """Swap the averaged values into the parameters inside the ``with`` block
        (and back after it when `need_restore`).

        Args:
            executor (Executor, optional): accepted for Paddle's API. Default: None.
            need_restore (bool, optional): restore the trained values when the block ends.
                Default: True.

        Returns:
            contextmanager: the context in which the parameters hold the averages.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> fw.enable_static()
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main):
            ...     x = fw.static.data("x", [1, 1])
            ...     two = fw.nn.initializer.Constant(2.0)
            ...     w = fw.static.create_parameter([1, 1], "float32", name="ema_apply_w",
            ...                                    default_initializer=two)
            ...     y = fw.matmul(x, w)
            ...     ema = fw.static.ExponentialMovingAverage(0.5)
            ...     ema.update()
            >>> exe = fw.static.Executor()
            >>> _ = exe.run(main, feed={"x": np.ones([1, 1], "float32")}, fetch_list=[y])
            >>> with ema.apply(exe):
            ...     float(w.numpy()[0, 0])
            2.0
            >>> fw.disable_static()
        """
        import numpy as np

        if self._step is None:
            raise RuntimeError("ExponentialMovingAverage.apply: call update() first")
        t = float(self._step.numpy())
        # Paddle: ema / (1 - decay^t) once a step ran, decay being the latest one
        corr = 1.0 - float(self._decay_t.numpy()) ** t if t > 0 else 1.0
        self._backup = {}
        for key, (p, s) in self._shadow.items():
            self._backup[key] = p.numpy().copy()
            p.set_value((s.numpy() / corr).astype(self._backup[key].dtype) if t > 0
                        else np.asarray(self._backup[key]))
        try:
            yield
        finally:
            if need_restore:
                self.restore(executor)

    def restore(self, executor=None):
        """Put the parameters' trained values back after ``apply(need_restore=False)``.

        Args:
            executor (Executor, optional): accepted for Paddle's API. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> fw.enable_static()
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main):
            ...     x = fw.static.data("x", [1, 1])
            ...     two = fw.nn.initializer.Constant(2.0)
            ...     w = fw.static.create_parameter([1, 1], "float32", name="ema_restore_w",
            ...                                    default_initializer=two)
            ...     y = fw.matmul(x, w)
            ...     ema = fw.static.ExponentialMovingAverage(0.5)
            ...     ema.update()
            >>> exe = fw.static.Executor()
            >>> _ = exe.run(main, feed={"x": np.ones([1, 1], "float32")}, fetch_list=[y])
            >>> with ema.apply(exe, need_restore=False):
            ...     pass
            >>> ema.restore(exe)
            >>> float(w.numpy()[0, 0])
            2.0
            >>> fw.disable_static()
        """
        for key, (p, _s) in self._shadow.items():
            if key in self._backup:
                p.set_value(self._backup[key])
        self._backup = {}


class BuildStrategy:
    """Paddle's graph-build options (fusions, memory reuse, …). fw's program
    compiler chooses its own passes, so every option is accepted and stored but has
    no effect (listed in docs/paddle_differences.md).

    Examples:
        >>> import fw
        >>> bs = fw.static.BuildStrategy()
        >>> bs.enable_inplace = True
        >>> bs.enable_inplace
        True
    """

    class ReduceStrategy:
        """How gradients are reduced across devices (a no-op in fw)."""
        AllReduce = 0
        Reduce = 1
        _NoReduce = 2

    class GradientScaleStrategy:
        """How the loss gradient is scaled across devices (a no-op in fw)."""
        CoeffNumDevice = 0
        One = 1
        Customized = 2

    def __init__(self):
        self.reduce_strategy = BuildStrategy.ReduceStrategy.AllReduce
        self.gradient_scale_strategy = BuildStrategy.GradientScaleStrategy.CoeffNumDevice
        self.enable_inplace = False
        self.memory_optimize = False
        self.fuse_elewise_add_act_ops = False
        self.fuse_bn_act_ops = False
        self.fuse_relu_depthwise_conv = False
        self.fuse_broadcast_ops = False
        self.fuse_all_optimizer_ops = False
        self.fuse_all_reduce_ops = False
        self.enable_auto_fusion = False
        self.enable_sequential_execution = False
        self.sync_batch_norm = False
        self.debug_graphviz_path = ""
        self.build_cinn_pass = False


class CompiledProgram:
    """A program with a `BuildStrategy` (Paddle's ``static.CompiledProgram``).
    ``Executor.run`` accepts it and runs its program; the strategy is a no-op in fw.

    Args:
        program_or_graph (Program): the program. build_strategy (BuildStrategy,
            optional).

    Examples:
        >>> import fw, numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [2])
        ...     y = x * 2.0
        >>> cp = fw.static.CompiledProgram(main, fw.static.BuildStrategy())
        >>> fw.static.Executor().run(cp, feed={"x": np.ones(2, "float32")}, fetch_list=[y])[0]
        array([2., 2.], dtype=float32)
    """

    def __init__(self, program_or_graph, build_strategy=None):
        from fw.core.ir.core import Program as _P

        if not isinstance(program_or_graph, _P):
            raise TypeError(f"CompiledProgram: program_or_graph must be a Program, got "
                            f"{type(program_or_graph).__name__}")
        if build_strategy is not None and not isinstance(build_strategy, BuildStrategy):
            raise TypeError(f"CompiledProgram: build_strategy must be a BuildStrategy, got "
                            f"{type(build_strategy).__name__}")
        self._program = program_or_graph
        self._build_strategy = build_strategy or BuildStrategy()

    @property
    def program(self):
        """The program this CompiledProgram wraps.

        Examples:
            >>> import fw
            >>> prog = fw.static.Program()
            >>> fw.static.CompiledProgram(prog).program is prog
            True
        """
        return self._program


def _no_ipu(what):
    return RuntimeError(f"{what}: IPU devices are not supported on this device (fw has no "
                        f"Graphcore IPU backend)")


class IpuStrategy:
    """Paddle's Graphcore IPU options: not supported on this device (raises).

    Examples:
        >>> import fw
        >>> try:
        ...     fw.static.IpuStrategy()
        ... except RuntimeError as e:
        ...     print("not supported" in str(e))
        True
    """

    def __init__(self):
        raise _no_ipu("IpuStrategy")


class IpuCompiledProgram:
    """Paddle's IPU-compiled program: not supported on this device (fw has no
    Graphcore IPU backend); it raises a RuntimeError that says so.

    Args:
        program (Program, optional): the program. Default: None.
        scope (Scope, optional): the scope. Default: None.
        ipu_strategy (IpuStrategy, optional): the IPU options. Default: None.

    Returns:
        Never returns.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.static.IpuCompiledProgram()
        ... except RuntimeError as e:
        ...     print("not supported" in str(e))
        True
    """

    def __init__(self, program=None, scope=None, ipu_strategy=None):
        raise _no_ipu("IpuCompiledProgram")


@contextlib.contextmanager
def ipu_shard_guard(index=-1, stage=-1):
    """Paddle's IPU sharding scope: not supported on this device (fw has no Graphcore
    IPU backend); it raises a RuntimeError that says so.

    Args:
        index (int, optional): the IPU index of the ops inside. Default: -1.
        stage (int, optional): the pipeline stage. Default: -1.

    Returns:
        Never returns.

    Examples:
        >>> import fw
        >>> try:
        ...     with fw.static.ipu_shard_guard(index=0, stage=0):
        ...         pass
        ... except RuntimeError as e:
        ...     print("not supported" in str(e))
        True
    """
    raise _no_ipu("ipu_shard_guard")
    yield  # pragma: no cover


def set_ipu_shard(call_func, index=-1, stage=-1):
    """Paddle's IPU sharding of a layer or function: not supported on this device (fw
    has no Graphcore IPU backend); it raises a RuntimeError that says so.

    Args:
        call_func (callable): the layer or function.
        index (int, optional): the IPU index. Default: -1.
        stage (int, optional): the pipeline stage. Default: -1.

    Returns:
        Never returns.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.static.set_ipu_shard(fw.nn.Linear(2, 2), index=0)
        ... except RuntimeError as e:
        ...     print("not supported" in str(e))
        True
    """
    raise _no_ipu("set_ipu_shard")


def xpu_places(device_ids=None):
    """Kunlun XPU places: not supported on this device (fw has no XPU backend); it
    raises a RuntimeError that says so.

    Args:
        device_ids (list[int], optional): XPU ids. Default: None.

    Returns:
        Never returns.

    Examples:
        >>> import fw
        >>> try:
        ...     fw.static.xpu_places()
        ... except RuntimeError as e:
        ...     print("not supported" in str(e))
        True
    """
    raise RuntimeError("xpu_places: Kunlun XPU devices are not supported on this device")


@contextlib.contextmanager
def device_guard(device=None):
    """Paddle's per-op device placement in a static program. fw places a whole
    program on one device (the Executor's), so ``"cpu"``/``"gpu"``/``"gpu:N"`` are
    accepted and have no effect; anything else raises.

    Args:
        device (str, optional): ``"cpu"``, ``"gpu"`` or ``"gpu:N"``. Default: None.

    Returns:
        contextmanager: a context with no effect on placement.

    Examples:
        >>> import fw
        >>> with fw.static.device_guard("cpu"):
        ...     y = fw.ones([2]) + 1
        >>> y.numpy().tolist()
        [2.0, 2.0]
    """
    if device is not None:
        base = str(device).split(":")[0]
        if base not in ("cpu", "gpu"):
            raise ValueError(f"device_guard: device must be 'cpu', 'gpu' or 'gpu:N', got "
                             f"{device!r}")
    yield


_NAME_STACK: list = []


@contextlib.contextmanager
def name_scope(prefix=None):
    """A name scope for the ops built inside (Paddle's ``static.name_scope``). fw's
    ops carry no scope names, so it only nests prefixes (``current_name_scope()``).

    Args:
        prefix (str, optional): the scope's name; None or '' gives ``"scope"``.
            Default: None.

    Returns:
        contextmanager: the scope.

    Examples:
        >>> import fw
        >>> with fw.static.name_scope("encoder"):
        ...     with fw.static.name_scope("layer1"):
        ...         print(fw.static._extras.current_name_scope())
        /encoder/layer1/
    """
    _NAME_STACK.append(str(prefix or "") or "scope")
    try:
        yield
    finally:
        _NAME_STACK.pop()


def current_name_scope() -> str:
    """The active `name_scope` path (``"/"`` outside any)."""
    return "/" + "".join(p + "/" for p in _NAME_STACK)
