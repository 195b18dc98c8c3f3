"""`create_predictor` and `Predictor`: load a model file, optimise its program,
compile it once, run it.

Creation (`create_predictor`): ``fw.core.ir.load(..., for_inference=True)``
reads the model file within the config's `LoadLimits`, checking its checksums
(a malformed or damaged file raises ``ModelFormatError`` naming it), and refuses
a program that writes its own weights (state updates) unless
``config.enable_strip_state_updates()`` asks to remove them; weights from a separate
params file replace stored ones by label; with ``ir_optim`` the parameters
become constants (a predictor never trains: constant folding may then
precompute weight-only expressions) and the passes of ``config.pass_builder()``
run under fw-core's ``PassManager`` (the program is verified after each;
``switch_ir_debug`` dumps it after each); weights nothing reads any more
(folded batch norms) are dropped; the executor compiles the program once
(``fw.core.ir.executor.Compiled``). Then every weight array the predictor holds
is made read-only (``flags.writeable = False``): a kernel that wrote into one
would raise instead of changing what later runs, and other clones, compute.

Running: a predictor holds one slot per input (filled by its handles) and the
outputs of its last run. Everything else — the compiled program and the
weights — is shared, read-only, by the predictors `Predictor.clone` makes: the
compiled function keeps its intermediates in local variables, never writes into
inputs, parameters or constants, and its kernels are reentrant, so clones can
run concurrently from several threads (one predictor per thread; a predictor's
own handles are not synchronised).
"""

from __future__ import annotations

import logging
import os

import numpy as np

from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.core.internal import freeze, native
from fw.core.tensor import wrap as _wrap
from fw.inference.config import Config
from fw.inference.tensor import Tensor, _host_array

__all__ = ["Predictor", "create_predictor"]

_log = logging.getLogger("fw.inference")
_ndarray = np.ndarray


def _apply_cache_capacity(config) -> None:
    if config._mkldnn_cache_capacity is not None:
        _native = native()
        if _native is None:
            return
        _native.set_cache_capacity(config._mkldnn_cache_capacity)


def _executor(compiled, config):
    """``execute(arrays) -> [outputs]``: the compiled program over the weights read once
    (`Compiled.bind_params`: they are frozen, nothing replaces them after creation), run
    with the config's CPU thread count when it sets one. The count applies while this
    predictor runs and is restored afterwards, so one predictor's setting does not change
    the rest of the process. A GPU predictor copies host inputs to its device first."""
    if config.use_gpu():
        # the path the GPU run verified (parameters resolved per call); the bound form
        # below is the CPU predictors' only
        from fw.core import place

        be, idx = place.get_backend("gpu"), config.gpu_device_id()

        def run_gpu(arrays):
            return compiled([be.asarray(a, idx) if type(a) is _ndarray else a
                             for a in arrays], None, False)

        return run_gpu
    run = compiled.bind_params()
    if not config._threads_set:
        return run
    n = config._threads
    _native = native()
    if _native is None:
        from threadpoolctl import threadpool_limits

        def run_blas(arrays):
            with threadpool_limits(limits=n, user_api="blas"):
                return run(arrays)

        return run_blas
    get, put = _native.get_num_threads, _native.set_num_threads

    def run_threads(arrays):
        prev = get()
        if prev == n:
            return run(arrays)
        put(n)
        try:
            return run(arrays)
        finally:
            put(prev)

    return run_threads


def _replace_weights(program, path) -> None:
    """Replace the program's params/consts by the tensors of safetensors file `path`."""
    from safetensors import safe_open

    from fw.core.ir.serialize import ModelFormatError
    from fw.core.tensor import wrap

    if not os.path.isfile(path):
        raise FileNotFoundError(f"no params file at {path!r}")
    slots = {a.label: a for a in program.params()}
    try:
        with safe_open(path, framework="np") as f:
            names = list(f.keys())
            unknown = [n for n in names if n not in slots]
            if unknown:
                raise ModelFormatError(f"{path}: tensors {unknown} are not parameters of the "
                                       f"model (it has {sorted(slots)})")
            for n in names:
                a, t = f.get_tensor(n), slots[n].type
                if a.dtype != t.dtype.np or a.ndim != t.ndim or any(
                        e not in (-1, g) for e, g in zip(t.shape, a.shape)):
                    raise ModelFormatError(f"{path}: tensor {n!r} is {a.dtype}{list(a.shape)}, "
                                           f"the model needs {t}")
                w = wrap(np.array(a, copy=True))
                w.name = n
                w.persistable = True
                program.captured[n] = w
    except ModelFormatError:
        raise
    except Exception as e:  # a damaged or foreign file
        raise ModelFormatError(f"{path}: cannot read the params file: {type(e).__name__}: "
                               f"{e}") from e


def _freeze(program) -> None:
    """Make every parameter a constant: a predictor never trains, so constant folding
    may precompute what depends on weights alone (a transposed weight) and dce may
    drop the weights nothing reads any more."""
    for a in program.block.args:
        if a.role == "param":
            a.role = "const"
    program.touch()


def _drop_unused_weights(program) -> None:
    from fw.core.ir.passes.rewrite import Rewriter

    rw = Rewriter(program)
    for a in list(program.params()):
        if not rw.has_uses(a):
            rw.remove_arg(a)


class _Shared:
    """What clones share: the program, its compiled form, names and types."""

    def __init__(self, program, compiled, config):
        self.program = program
        self.compiled = compiled
        self.execute = _executor(compiled, config)
        self.config = config
        ins = program.inputs()
        self.input_names = [a.label if a.label else f"input_{i}" for i, a in enumerate(ins)]
        if len(set(self.input_names)) != len(self.input_names):
            self.input_names = [f"{n}_{i}" for i, n in enumerate(self.input_names)]
        self.input_types = [a.type for a in ins]
        outs = program.outputs
        self.output_names = [f"output_{i}" for i in range(len(outs))]
        self.output_types = [v.type for v in outs]
        # outputs that are block-0 values (an input, a weight) are handed out as copies
        self.aliased = {i for i, v in enumerate(outs) if v.owner is program.block}
        self.in_index = {n: i for i, n in enumerate(self.input_names)}
        # the hot path's input check, per input: (NumPy dtype, the dims after the first),
        # when only the first dim may vary (a batch); else None (the handle checks)
        self.fast_fit = [(t.dtype.np, tuple(t.shape[1:])) if t.shape and -1 not in t.shape[1:]
                         else None for t in self.input_types]
        self.out_index = {n: i for i, n in enumerate(self.output_names)}


def create_predictor(config: Config) -> Predictor:
    """Build a `Predictor` from `config`: load, verify and optimise the model.

    The config is copied, so later edits of it do not change the predictor.

    Args:
        config (Config): the model and the switches.

    Returns:
        Predictor: ready to `run`.

    Raises:
        FileNotFoundError: no model file where the config says.
        ModelFormatError: the model (or params) file is malformed or damaged, or its
            program writes its weights (names the file); ``ModelLimitError`` when it
            exceeds ``config.model_limits()``.
        VerificationError: a pass produced an invalid program (names the pass).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> import fw.inference as infer
        >>> from fw.static import InputSpec
        >>> net = fw.nn.Linear(4, 2)
        >>> spec = [InputSpec([None, 4], "float32", name="x")]
        >>> path = fw.jit.save(net, "linear", input_spec=spec)
        >>> predictor = infer.create_predictor(infer.Config(path))
        >>> predictor.get_input_names()
        ['x']
        >>> out = predictor.run([np.ones((3, 4), np.float32)])
        >>> out[0].shape
        [3, 2]
    """
    from fw.core.ir import load
    from fw.core.ir.executor import Compiled
    from fw.inference.paddle_format import load_paddle_model

    if not isinstance(config, Config):
        raise InvalidTypeError(f"create_predictor takes a fw.inference.Config, got "
                               f"{type(config).__name__}")
    config = Config(config)  # later edits of the caller's config do not leak in
    paddle = load_paddle_model(config)  # None unless the config names a Paddle model
    if paddle is not None:
        program, path = paddle
    else:
        path = config.model_file()
        program, _ = load(path, for_inference=True, strip_updates=config._strip_updates,
                          limits=config.model_limits())
        params = config.params_file()
        if params and os.path.abspath(params) != os.path.abspath(path):
            _replace_weights(program, params)
    _apply_cache_capacity(config)
    if config.ir_optim():
        _freeze(program)
        from fw.core.ir.passes import PassManager

        dump = config.ir_debug_dir() if config._ir_debug else None
        pm = PassManager(_passes(config), dump=dump)
        pm.run(program)
        if not config.glog_info_disabled():
            for name, changed, seconds in pm.log:
                _log.info("--- Running IR pass [%s] (%.2f ms%s)", name, seconds * 1e3,
                          ", changed" if changed else "")
    _drop_unused_weights(program)
    if config._save_optim_model:
        from fw.core.ir import save

        out = config.optim_model_path()
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        save(program, out)
    if config.use_gpu():
        _to_gpu(program, config.gpu_device_id())
        compiled = Compiled(program, "gpu", memory_optimize=config.memory_optim_enabled())
        return Predictor(_Shared(program, compiled, config))
    _read_only(program)
    override = None
    if not config.mkldnn_enabled():  # disable_mkldnn: the NumPy references throughout
        override = {op.name: op.opdef.reference for op in program.walk()
                    if op.opdef.reference is not None}
    # prepared kernels (fw.core.kernels.cpu.prepared): each op's attributes bound and its
    # geometry kept per input shape, so a steady run is the native calls and little else
    compiled = Compiled(program, "cpu", kernel_override=override,
                        memory_optimize=config.memory_optim_enabled(),
                        prepare=config.prepared_kernels_enabled(),
                        nonfinite_checks=config.nonfinite_checks_enabled())
    return Predictor(_Shared(program, compiled, config))


def _passes(config) -> list:
    """The pass list of `config`, the bf16 pass given the config's op set (a name in the
    list runs with the pass's defaults: every op it supports)."""
    from fw.core.ir.passes import get_pass

    return [get_pass(p, op_types=config._bf16_ops) if p == "cpu_bfloat16" else p
            for p in config.pass_builder().all_passes()]


def _to_gpu(program, index) -> None:
    """Copy the weights to GPU `index` once; runs read them there."""
    from fw.core import place
    from fw.core.tensor import wrap

    be = place.get_backend("gpu")
    for n, t in list(program.captured.items()):
        a = getattr(t, "_data", t)
        if isinstance(a, np.ndarray):
            w = wrap(be.asarray(a, index))
            w.name = n
            w.persistable = True
            program.captured[n] = w


def _read_only(program) -> None:
    """Make the weights read-only: a predictor (and its clones, in other threads)
    must compute the same outputs from them on every run."""
    for t in program.captured.values():
        a = getattr(t, "_data", t)
        if isinstance(a, np.ndarray):
            # read-only, and stamped: the native kernels reorder a frozen weight into
            # their preferred layout once per predictor, not once per run
            freeze(a)


class Predictor:
    """Runs one compiled inference program (made by `create_predictor`).

    Handle style (Paddle Inference): set inputs through `get_input_handle`, call
    ``run()``, read outputs through `get_output_handle`. List style (Paddle 3):
    ``outputs = predictor.run([x])`` takes arrays or fw Tensors in input order and
    returns fw Tensors. `clone` gives a predictor sharing the compiled program and the
    weights, with its own handles, for another thread.

    Args:
        shared: internal; build predictors with `create_predictor`.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> import fw.inference as infer
        >>> from fw.static import InputSpec
        >>> net = fw.nn.Linear(4, 2)
        >>> spec = [InputSpec([None, 4], "float32", name="x")]
        >>> path = fw.jit.save(net, "linear", input_spec=spec)
        >>> predictor = infer.create_predictor(infer.Config(path))
        >>> x = np.ones((3, 4), np.float32)
        >>> h = predictor.get_input_handle("x")
        >>> h.copy_from_cpu(x)
        >>> predictor.run()
        >>> y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
        >>> y.shape, bool(np.allclose(y, net(fw.to_tensor(x)).numpy(), atol=1e-6))
        ((3, 2), True)
    """

    def __init__(self, shared: _Shared):
        self._s = shared
        self._in: list = [None] * len(shared.input_names)
        self._out: list = [None] * len(shared.output_names)
        self._handles: dict = {}

    # ------------------------------------------------------------ names and handles
    def get_input_names(self) -> list:
        """The names of the program's inputs, in feed order.

        Returns:
            list[str]: the input names (the ``InputSpec`` names given to ``fw.jit.save``).

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.get_input_names()
            ['x']
        """
        return list(self._s.input_names)

    def get_output_names(self) -> list:
        """The names of the program's outputs (``output_0``, ``output_1``, …).

        Returns:
            list[str]: the output names.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.get_output_names()
            ['output_0']
        """
        return list(self._s.output_names)

    def get_input_handle(self, name: str) -> Tensor:
        """The handle of input `name` (the same object on every call).

        Args:
            name (str): an input name from `get_input_names`.

        Returns:
            Tensor: the input handle (an error lists the inputs for an unknown name).

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> h = predictor.get_input_handle("x")
            >>> h is predictor.get_input_handle("x"), h.shape()
            (True, [-1, 4])
        """
        i = self._s.in_index.get(name)
        if i is None:
            raise InvalidArgumentError(f"the model has no input named {name!r}; its inputs are "
                                       f"{self._s.input_names}")
        return self._handle(("in", i), True, i, name, self._s.input_types[i])

    def get_output_handle(self, name: str) -> Tensor:
        """The handle of output `name`.

        Args:
            name (str): an output name from `get_output_names`.

        Returns:
            Tensor: the output handle; read it with ``copy_to_cpu()`` after `run`.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> _ = predictor.run([np.ones((1, 4), np.float32)])
            >>> predictor.get_output_handle("output_0").copy_to_cpu().shape
            (1, 2)
        """
        i = self._s.out_index.get(name)
        if i is None:
            raise InvalidArgumentError(f"the model has no output named {name!r}; its outputs "
                                       f"are {self._s.output_names}")
        return self._handle(("out", i), False, i, name, self._s.output_types[i])

    def _handle(self, key, is_input, i, name, t):
        h = self._handles.get(key)
        if h is None:
            h = self._handles[key] = Tensor(self, i, is_input, name, t)
        return h

    def get_input_tensor_shape(self) -> dict:
        """The input shapes as the program declares them (-1: dynamic).

        Returns:
            dict[str, list[int]]: ``{input name: shape}``.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.get_input_tensor_shape()
            {'x': [-1, 4]}
        """
        return {n: list(t.shape) for n, t in zip(self._s.input_names, self._s.input_types)}

    @property
    def program(self):
        """The (optimised) program this predictor runs.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> type(predictor.program).__name__
            'Program'
        """
        return self._s.program

    # ------------------------------------------------------------ running
    def run(self, inputs=None):
        """Run the program.

        Without arguments: on the data set through the input handles; the results are read
        through the output handles, and it returns None. With `inputs` (a list of arrays or
        fw Tensors, one per input in `get_input_names` order): runs on them (no copy; the
        handles' data is left alone) and returns the outputs as a list of fw Tensors (the
        output handles see them too).

        Args:
            inputs (list, optional): arrays or Tensors, one per input. Default: None.

        Returns:
            list[Tensor]|None: the outputs in list style, None in handle style.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> net = fw.nn.Linear(4, 2)
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(net, "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> out = predictor.run([np.zeros((2, 4), np.float32)])
            >>> len(out), out[0].shape
            (1, [2, 2])
        """
        if inputs is not None:
            return self._run_list(inputs)
        ins = self._in
        for a in ins:
            if a is None:
                self._missing_inputs()
        self._out = self._s.execute(ins)

    def _missing_inputs(self):
        missing = [n for n, a in zip(self._s.input_names, self._in) if a is None]
        raise InvalidArgumentError(
            f"run(): input(s) {missing} have no data; set each with "
            f"predictor.get_input_handle(name).copy_from_cpu(array) first, or pass the "
            f"inputs: predictor.run([arrays])")

    def _run_list(self, inputs):
        s = self._s
        if isinstance(inputs, (_ndarray,)) or not isinstance(inputs, (list, tuple)):
            raise InvalidTypeError(f"run(inputs): inputs is a list with one array per input "
                                   f"{s.input_names}, got {type(inputs).__name__}")
        if len(inputs) != len(s.input_names):
            raise InvalidArgumentError(f"run(inputs): the model takes {len(s.input_names)} "
                                       f"input(s) {s.input_names}, got {len(inputs)}")
        arrays = []
        fast = s.fast_fit
        for i, x in enumerate(inputs):
            f = fast[i]
            if type(x) is _ndarray and f is not None and x.dtype is f[0] and \
                    x.shape[1:] == f[1] and x.ndim:
                arrays.append(x)  # the common case: an array of the input's type
                continue
            a = x if type(x) is _ndarray else _host_array(x, "run")
            if a is None:
                a = np.asarray(x, dtype=s.input_types[i].dtype.np)
            h = self._handles.get(("in", i)) or self.get_input_handle(s.input_names[i])
            if not h._fits(a):
                h._check(a, "run")
            arrays.append(a)
        outs = s.execute(arrays)
        for i, o in enumerate(outs):
            if i in s.aliased or (type(o) is _ndarray and o.base is not None):
                outs[i] = o.copy()  # never hand out a view of the caller's data or a weight
        self._out = outs
        return [_wrap(o) for o in outs]

    def clone(self) -> Predictor:
        """A predictor sharing this one's compiled program and weights, with its own input
        and output handles (safe to run concurrently from another thread).

        Returns:
            Predictor: the clone.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> twin = predictor.clone()
            >>> twin.run([np.ones((2, 4), np.float32)])[0].shape
            [2, 2]
        """
        return Predictor(self._s)

    def clear_intermediate_tensor(self) -> None:
        """Kept for Paddle's API: intermediates never outlive ``run()`` in fw (they are
        locals of the compiled program), so there is nothing to clear.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> predictor.clear_intermediate_tensor()
        """

    def try_shrink_memory(self) -> int:
        """Release the outputs of the last run held by this predictor (read them first).

        Returns:
            int: the number of bytes released.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> import fw.inference as infer
            >>> from fw.static import InputSpec
            >>> spec = [InputSpec([None, 4], "float32", name="x")]
            >>> path = fw.jit.save(fw.nn.Linear(4, 2), "linear", input_spec=spec)
            >>> predictor = infer.create_predictor(infer.Config(path))
            >>> _ = predictor.run([np.ones((3, 4), np.float32)])
            >>> predictor.try_shrink_memory()       # 3 x 2 float32 outputs
            24
        """
        n = sum(getattr(o, "nbytes", 0) for o in self._out if o is not None)
        self._out = [None] * len(self._out)
        return int(n)

    def __repr__(self) -> str:
        return (f"<fw.inference.Predictor inputs={self._s.input_names} "
                f"outputs={self._s.output_names}>")
