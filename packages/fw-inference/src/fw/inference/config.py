"""`Config`: where the model is and how a predictor should run it (Paddle
Inference's ``paddle.inference.Config``), and `PassBuilder`, the editable list of
IR passes a predictor runs."""

from __future__ import annotations

import copy
import glob
import os

from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError

__all__ = ["Config", "PassBuilder", "MODEL_SUFFIX"]

#: The suffix `fw.jit.save(layer, path)` gives the model file (``path + ".fwmodel"``).
MODEL_SUFFIX = ".fwmodel"


def _pipeline() -> list:
    from fw.core.ir.passes import PIPELINES

    return list(PIPELINES["inference"])


class PassBuilder:
    """The IR passes a predictor runs, in order (``config.pass_builder()``).

    Starts as fw-core's ``inference`` pipeline (constant folding, algebraic
    simplification, batch-norm folding, conv/matmul epilogue fusion, elementwise
    fusion, CSE, DCE). Names are those of ``fw.core.ir.passes.PASSES``.

    Args:
        passes (list[str], optional): the starting pass names; None: the inference
            pipeline. Default: None.

    Examples:
        >>> import fw
        >>> from fw.inference import Config
        >>> pb = Config().pass_builder()
        >>> pb.delete_pass("fuse_elementwise")
        >>> "fuse_elementwise" in pb.all_passes()
        False
    """

    def __init__(self, passes=None):
        self._passes = _pipeline() if passes is None else list(passes)

    @staticmethod
    def _known(name) -> str:
        from fw.core.ir.passes import PASSES

        if not isinstance(name, str):
            raise InvalidTypeError(f"a pass is named by a string, got {type(name).__name__}")
        if name not in PASSES:
            raise InvalidArgumentError(f"no IR pass named {name!r}; registered passes: "
                                       f"{sorted(PASSES)}")
        return name

    def all_passes(self) -> list:
        """The pass names, in the order they run.

        Returns:
            list[str]: a copy of the names.

        Examples:
            >>> import fw
            >>> from fw.inference import PassBuilder
            >>> PassBuilder(["constant_folding"]).all_passes()
            ['constant_folding']
        """
        return list(self._passes)

    def append_pass(self, name: str) -> None:
        """Run pass `name` last.

        Args:
            name (str): a registered pass (``fw.core.ir.passes.PASSES``).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import PassBuilder
            >>> pb = PassBuilder([])
            >>> pb.append_pass("constant_folding")
            >>> pb.all_passes()
            ['constant_folding']
        """
        self._passes.append(self._known(name))

    def insert_pass(self, idx: int, name: str) -> None:
        """Run pass `name` at position `idx`.

        Args:
            idx (int): the position.
            name (str): a registered pass.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import PassBuilder
            >>> pb = PassBuilder(["constant_folding"])
            >>> pb.insert_pass(0, "dce")
            >>> pb.all_passes()
            ['dce', 'constant_folding']
        """
        self._passes.insert(int(idx), self._known(name))

    def delete_pass(self, name) -> None:
        """Remove every occurrence of pass `name` (absent names are ignored, as in
        Paddle); an int removes the pass at that position.

        Args:
            name (str|int): a pass name, or a position.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import PassBuilder
            >>> pb = PassBuilder(["constant_folding", "dce"])
            >>> pb.delete_pass(0)
            >>> pb.all_passes()
            ['dce']
        """
        if isinstance(name, int):
            del self._passes[name]
        else:
            self._passes = [p for p in self._passes if p != name]

    def clear_passes(self) -> None:
        """Remove every pass (the predictor then runs the program as loaded).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import PassBuilder
            >>> pb = PassBuilder()
            >>> pb.clear_passes()
            >>> pb.all_passes()
            []
        """
        self._passes = []

    def debug_string(self) -> str:
        """The passes as one line, for logs.

        Returns:
            str: the names joined by `` -> ``.

        Examples:
            >>> import fw
            >>> from fw.inference import PassBuilder
            >>> PassBuilder(["constant_folding", "dce"]).debug_string()
            'constant_folding -> dce'
        """
        return " -> ".join(self._passes) or "(no passes)"

    def __repr__(self) -> str:
        return f"PassBuilder({self._passes})"


class Config:
    """How to build a `Predictor`: the model to load and the switches of the run.

    ``Config(model_path)`` names the model file that ``fw.jit.save`` writes
    (``prefix + ".fwmodel"``; the prefix alone is accepted too) or a directory holding
    exactly one ``*.fwmodel`` file. ``Config(model_path, params_path)`` adds a
    safetensors file whose tensors replace, by label, the weights stored in the model
    file (the model file always carries its own weights; the same path twice is the
    plain model). ``Config(other_config)`` copies a config.

    Switches (Paddle's names): `switch_ir_optim` (run the IR passes, default on),
    `enable_memory_optim` (free intermediates early and reuse their buffers, default
    off), `set_cpu_math_library_num_threads`, `enable_mkldnn` (default on: fw's CPU
    kernels, oneDNN) / `disable_mkldnn` (the NumPy reference kernels),
    `disable_glog_info`, `switch_ir_debug` (dump the program after every pass),
    `delete_pass` / `pass_builder`, `set_optim_cache_dir` + `enable_save_optim_model`
    (write the optimised model), `enable_use_gpu` (GPU through CuPy; raises where there
    is none), `summary`. fw's own: `set_model_limits` (the bounds a model file must stay within) and
    `enable_strip_state_updates` (run a model whose program writes its weights without
    those writes, instead of refusing it).

    Args:
        model_path (str|Config, optional): the model file, its ``fw.jit.save`` prefix, a
            directory holding one model file, or a Config to copy. Default: None (set it
            later with `set_model`).
        params_path (str, optional): a safetensors file of replacement weights.
            Default: None.

    Examples:
        >>> import fw
        >>> from fw.inference import Config
        >>> config = Config("model.fwmodel")
        >>> config.switch_ir_optim(True)
        >>> config.enable_memory_optim()
        >>> config.set_cpu_math_library_num_threads(2)
        >>> config.ir_optim(), config.memory_optim_enabled(), config.cpu_math_library_num_threads()
        (True, True, 2)
    """

    def __init__(self, model_path=None, params_path=None):
        self._model_path = None
        self._params_path = None
        self._ir_optim = True
        self._memory_optim = False
        self._threads = 1
        self._threads_set = False
        self._glog_disabled = False
        self._ir_debug = False
        self._ir_debug_dir = None
        self._optim_cache_dir = None
        self._save_optim_model = False
        self._mkldnn_cache_capacity = None
        self._mkldnn = True
        self._bf16 = False
        self._bf16_ops = frozenset()
        self._prepared = True
        self._nonfinite_checks = False
        self._pass_builder = PassBuilder()
        self._strip_updates = False
        self._model_limits = None  # None: fw.core.ir.serialize.DEFAULT_LIMITS
        if isinstance(model_path, Config):
            if params_path is not None:
                raise InvalidArgumentError("Config(config) copies a config; it takes no "
                                           "params_path")
            self.__dict__.update(copy.deepcopy(model_path.__dict__))
            return
        self.set_model(model_path, params_path)

    # ------------------------------------------------------------ the model
    def set_model(self, model_path, params_path=None) -> None:
        """Set the model file (or a directory, or the ``fw.jit.save`` prefix) and an
        optional safetensors file of replacement weights.

        Args:
            model_path (str): the model file, prefix or directory.
            params_path (str, optional): a safetensors file whose tensors replace the stored
                weights by label. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.set_model("other.fwmodel")
            >>> config.prog_file()
            'other.fwmodel'
        """
        self._model_path = None if model_path is None else os.fspath(model_path)
        self._params_path = None if params_path is None else os.fspath(params_path)

    def set_prog_file(self, path) -> None:
        """Set the model file (Paddle's name; same as ``set_model(path)``).

        Args:
            path (str|os.PathLike): the ``.fwmodel`` file written by ``fw.jit.save``, or a
                Paddle ``.json``/``.pdmodel``.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config()
            >>> config.set_prog_file("net.fwmodel")
            >>> config.prog_file()
            'net.fwmodel'
        """
        self._model_path = os.fspath(path)

    def set_params_file(self, path) -> None:
        """Set a separate weights file (a Paddle export's ``.pdiparams``); an
        ``.fwmodel`` carries its own weights.

        Args:
            path (str|os.PathLike): the weights file.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("net.fwmodel")
            >>> config.set_params_file("net.pdiparams")
            >>> config.params_file()
            'net.pdiparams'
        """
        self._params_path = os.fspath(path)

    def set_model_dir(self, path) -> None:
        """Set the model by its directory (the one ``*.fwmodel`` file in it is loaded).

        Args:
            path (str|os.PathLike): the directory.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> import os
            >>> os.makedirs("model_dir", exist_ok=True)
            >>> config = Config()
            >>> config.set_model_dir("model_dir")
            >>> config.model_dir()
            'model_dir'
        """
        self._model_path = os.fspath(path)

    def prog_file(self) -> str:
        """The model file the predictor will load (resolved when it exists, else the path
        as given; '' when none is set).

        Returns:
            str: the path.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.prog_file()
            'model.fwmodel'
        """
        if self._model_path is None:
            return ""
        try:
            return self.model_file()
        except (FileNotFoundError, InvalidArgumentError):
            return self._model_path

    def params_file(self) -> str:
        """The replacement-weights file ('' when the model file's own weights are used);
        for a model exported by Paddle, its ``.pdiparams``.

        Returns:
            str: the path, or ''.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config("net.fwmodel").params_file()
            ''
        """
        from fw.inference.paddle_format import resolve

        paddle = resolve(self._model_path, self._params_path)
        return paddle[1] if paddle is not None else self._params_path or ""

    def model_dir(self) -> str:
        """The directory of the model ('' when none is set).

        Returns:
            str: the directory.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config().model_dir()
            ''
            >>> Config("net.fwmodel").model_dir()
            '.'
        """
        if self._model_path is None:
            return ""
        if os.path.isdir(self._model_path):
            return self._model_path
        return os.path.dirname(self.prog_file()) or "."

    def model_file(self) -> str:
        """The model file to load: ``model_path`` itself, ``model_path + ".fwmodel"``,
        or the one ``*.fwmodel`` file in the directory ``model_path``.

        Raises:
            FileNotFoundError: nothing there. InvalidArgumentError: no path set, or
            a directory with several model files.

        Returns:
            str: the resolved path.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> with open("net.fwmodel", "wb") as f:   # stands for a file fw.jit.save wrote
            ...     _ = f.write(b"")
            >>> Config("net").model_file()
            'net.fwmodel'
        """
        p = self._model_path
        if p is None:
            raise InvalidArgumentError("Config: no model is set; pass the file written by "
                                       "fw.jit.save: Config('model.fwmodel') (or "
                                       "config.set_model(path))")
        from fw.inference.paddle_format import resolve

        paddle = resolve(p, self._params_path)  # a model exported by Paddle
        if paddle is not None:
            return paddle[0]
        if os.path.isfile(p):
            return p
        if not p.endswith(MODEL_SUFFIX) and os.path.isfile(p + MODEL_SUFFIX):
            return p + MODEL_SUFFIX
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(glob.escape(p), "*" + MODEL_SUFFIX)))
            if len(found) == 1:
                return found[0]
            if not found:
                raise FileNotFoundError(f"Config: the model directory {p!r} has no "
                                        f"'*{MODEL_SUFFIX}' file")
            raise InvalidArgumentError(f"Config: the model directory {p!r} holds several "
                                       f"model files {[os.path.basename(f) for f in found]}; "
                                       f"name one: Config(path)")
        raise FileNotFoundError(f"Config: no model file at {p!r}"
                                + ("" if p.endswith(MODEL_SUFFIX) else
                                   f" (nor {p + MODEL_SUFFIX!r})"))

    # ------------------------------------------------------------ loading
    def set_model_limits(self, **limits) -> None:
        """Raise (or lower) the bounds the model file must stay within, by name:
        ``max_ops``, ``max_block_depth``, ``max_tensors``, ``max_header_bytes``,
        ``max_value_bytes`` (see ``fw.core.ir.serialize.LoadLimits``; the others
        keep their values). A file beyond one raises ``ModelLimitError`` naming
        the limit; raise it only for a file you trust (a huge model).

        Args:
            **limits (int): new values of ``LoadLimits`` fields, by name.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> c = Config("model.fwmodel")
            >>> c.set_model_limits(max_ops=5_000_000)
            >>> c.model_limits().max_ops
            5000000
        """
        self._model_limits = self.model_limits().replace(**limits)

    def model_limits(self):
        """The `LoadLimits` the model file is held to (fw-core's defaults until
        `set_model_limits` changes them).

        Returns:
            LoadLimits: the limits.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> limits = Config("model.fwmodel").model_limits()
            >>> limits.max_ops > 0
            True
        """
        from fw.core.ir.serialize import DEFAULT_LIMITS

        return self._model_limits if self._model_limits is not None else DEFAULT_LIMITS

    def enable_strip_state_updates(self, x: bool = True) -> None:
        """Accept a model whose program writes its own weights (state updates,
        e.g. exported from a training step) by removing those writes, with a
        warning on logger ``fw.core.ir`` naming them. Off by default: such a
        model is refused (its outputs would drift from run to run and, with
        several clients, leak one request's data into another's result).

        Args:
            x (bool, optional): on or off. Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.enable_strip_state_updates()
            >>> config.strip_state_updates_enabled()
            True
        """
        self._strip_updates = bool(x)

    def strip_state_updates_enabled(self) -> bool:
        """Whether `enable_strip_state_updates` is on (off by default).

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config("model.fwmodel").strip_state_updates_enabled()
            False
        """
        return self._strip_updates

    # ------------------------------------------------------------ optimisation
    def switch_ir_optim(self, x: bool = True) -> None:
        """Run the IR passes (`pass_builder`) on the program before compiling it (on by
        default).

        Args:
            x (bool, optional): on or off. Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.switch_ir_optim(False)
            >>> config.ir_optim()
            False
        """
        self._ir_optim = bool(x)

    def ir_optim(self) -> bool:
        """Whether the IR passes run (`switch_ir_optim`).

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.ir_optim()
            True
        """
        return self._ir_optim

    def switch_prepared_kernels(self, x: bool = True) -> None:
        """fw's own: run the program's ops through prepared kernels (the default: each
        op's attributes bound and its geometry resolved once per input shape when the
        predictor is compiled, `fw.core.kernels.cpu.prepared`) or, with False, through
        the op table's kernels with keyword attributes on every call. The results are
        the same; the switch exists to measure and to rule the prepared kernels out.

        Args:
            x (bool, optional): on or off. Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config()
            >>> config.switch_prepared_kernels(False)
            >>> config.prepared_kernels_enabled()
            False
        """
        self._prepared = bool(x)

    def prepared_kernels_enabled(self) -> bool:
        """Whether the ops run through prepared kernels (`switch_prepared_kernels`).

        Returns:
            bool: the setting (True by default).

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config().prepared_kernels_enabled()
            True
        """
        return self._prepared

    def switch_nonfinite_checks(self, x: bool = True) -> None:
        """fw's own: where the fused kernels' NaN/Inf checks run (docs/reliability.md §2:
        a fused op gives what the unfused ops give eagerly, NaN and Inf included).

        False (the default, with prepared kernels): the predictor checks its float
        inputs once per run (its weights once, when it is created); when they are
        finite, the fused ops whose operands come from them through ops that keep
        finite values finite skip their per-call scans, and a run with a non-finite
        input runs every fused op with its checks. What this misses is a float32
        overflow inside the network turning finite inputs into an infinity that an
        activation then hides (the rule's documented gap, of the same kind).
        True: every fused op checks its result and operands on every call.

        Args:
            x (bool, optional): check on every call (True) or once per run (False).
                Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config()
            >>> config.switch_nonfinite_checks(True)
            >>> config.nonfinite_checks_enabled()
            True
        """
        self._nonfinite_checks = bool(x)

    def nonfinite_checks_enabled(self) -> bool:
        """Whether every fused op checks for NaN/Inf on every call (`switch_nonfinite_checks`).

        Returns:
            bool: the setting (False by default).

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config().nonfinite_checks_enabled()
            False
        """
        return self._nonfinite_checks

    def pass_builder(self) -> PassBuilder:
        """The editable list of passes the predictor runs when `ir_optim` is on.

        Returns:
            PassBuilder: the config's own builder (edits change this config).

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> pb = Config("model.fwmodel").pass_builder()
            >>> "dce" in pb.all_passes()
            True
        """
        return self._pass_builder

    def delete_pass(self, name: str) -> None:
        """Do not run pass `name` (``pass_builder().delete_pass(name)``).

        Args:
            name (str): a pass name from ``pass_builder().all_passes()``.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> first = config.pass_builder().all_passes()[0]
            >>> config.delete_pass(first)
            >>> first in config.pass_builder().all_passes()
            False
        """
        self._pass_builder.delete_pass(name)

    def switch_ir_debug(self, x: bool = True, dump_dir=None) -> None:
        """Write the program text after every pass when the predictor is created:
        ``00-input.fw``, ``01-<pass>.fw``, … in `dump_dir` (default: ``ir_debug``
        under `set_optim_cache_dir`'s directory, else ``./fw_ir_debug``).

        Args:
            x (bool, optional): on or off. Default: True.
            dump_dir (str, optional): where to write. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.switch_ir_debug(True, dump_dir="dump")
            >>> config.ir_debug_dir()
            'dump'
        """
        self._ir_debug = bool(x)
        if dump_dir is not None:
            self._ir_debug_dir = os.fspath(dump_dir)

    def ir_debug_dir(self) -> str:
        """Where `switch_ir_debug` writes the program dumps.

        Returns:
            str: the directory.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.set_optim_cache_dir("cache")
            >>> config.ir_debug_dir().endswith("ir_debug")
            True
        """
        if self._ir_debug_dir is not None:
            return self._ir_debug_dir
        if self._optim_cache_dir is not None:
            return os.path.join(self._optim_cache_dir, "ir_debug")
        return os.path.join(os.getcwd(), "fw_ir_debug")

    def set_optim_cache_dir(self, path) -> None:
        """Where `enable_save_optim_model` writes (and the default IR debug dump).

        Args:
            path (str|os.PathLike): a directory.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.set_optim_cache_dir("cache")
            >>> config.optim_model_path().replace("\\\\", "/")
            'cache/_optimized.fwmodel'
        """
        self._optim_cache_dir = os.fspath(path)

    def enable_save_optim_model(self, save_optimized_model: bool = False) -> None:
        """Save the optimised program as ``_optimized.fwmodel`` in the optim cache
        directory (default: the model's directory) when the predictor is created.

        Args:
            save_optimized_model (bool, optional): on or off. Default: False.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.enable_save_optim_model(True)
            >>> config.optim_model_path().endswith("_optimized.fwmodel")
            True
        """
        self._save_optim_model = bool(save_optimized_model)

    def optim_model_path(self) -> str:
        """The file `enable_save_optim_model` writes.

        Returns:
            str: the path.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config("model.fwmodel").optim_model_path().endswith("_optimized.fwmodel")
            True
        """
        d = self._optim_cache_dir if self._optim_cache_dir is not None else self.model_dir()
        return os.path.join(d, "_optimized" + MODEL_SUFFIX)

    def enable_memory_optim(self, x: bool = True) -> None:
        """Free each intermediate after its last use and let elementwise ops write into
        dead buffers (the executor's ``memory_optimize``; off by default).

        Args:
            x (bool, optional): on or off. Default: True.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.enable_memory_optim()
            >>> config.memory_optim_enabled()
            True
        """
        self._memory_optim = bool(x)

    def memory_optim_enabled(self) -> bool:
        """Whether `enable_memory_optim` is on.

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.memory_optim_enabled()
            False
        """
        return self._memory_optim

    # ------------------------------------------------------------ devices and threads
    def set_cpu_math_library_num_threads(self, n: int) -> None:
        """Threads of the CPU math libraries (oneDNN's OpenMP pool through
        ``fw.core._native`` when the native kernels are built, else NumPy's BLAS
        through threadpoolctl). Applied when a predictor is created; the pools are
        per process, so the last predictor created sets them for all.

        Args:
            n (int): the thread count, at least 1.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.set_cpu_math_library_num_threads(2)
            >>> config.cpu_math_library_num_threads()
            2
        """
        n = int(n)
        if n < 1:
            raise InvalidArgumentError(f"set_cpu_math_library_num_threads: n must be >= 1, "
                                       f"got {n}")
        self._threads = n
        self._threads_set = True

    def cpu_math_library_num_threads(self) -> int:
        """The thread count `set_cpu_math_library_num_threads` set (1 by default).

        Returns:
            int: the threads.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.cpu_math_library_num_threads()
            1
        """
        return self._threads

    def enable_mkldnn(self) -> None:
        """Run the ops on fw's CPU kernels (oneDNN where it has one; the default).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.disable_mkldnn()
            >>> config.enable_mkldnn()
            >>> config.mkldnn_enabled()
            True
        """
        self._mkldnn = True

    def mkldnn_enabled(self) -> bool:
        """Whether the ops run on fw's CPU kernels (oneDNN; the default) rather than the
        NumPy reference kernels (`disable_mkldnn`).

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.mkldnn_enabled()
            True
            >>> config.disable_mkldnn()
            >>> config.mkldnn_enabled()
            False
        """
        return self._mkldnn

    def set_mkldnn_cache_capacity(self, capacity: int = 0) -> None:
        """Bound oneDNN's primitive cache (entries; 0: no cache), applied when a
        predictor is created and the native kernels are present.

        Args:
            capacity (int, optional): the entries, >= 0. Default: 0.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.set_mkldnn_cache_capacity(10)
        """
        capacity = int(capacity)
        if capacity < 0:
            raise InvalidArgumentError(f"set_mkldnn_cache_capacity: capacity must be >= 0, "
                                       f"got {capacity}")
        self._mkldnn_cache_capacity = capacity

    def disable_mkldnn(self) -> None:
        """Run every op on its NumPy reference kernel instead of the CPU kernels
        (oneDNN): Paddle's meaning (its plain CPU kernels), e.g. to tell a oneDNN
        problem from a model problem. Much slower.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.disable_mkldnn()
            >>> config.mkldnn_enabled()
            False
        """
        self._mkldnn = False

    # ------------------------------------------------------------ bfloat16
    def enable_mkldnn_bfloat16(self) -> None:
        """Run the products with constant weights (matmul/linear/fc, convolutions, and the
        max pools between them) in bfloat16 with float32 accumulation, on CPUs that
        multiply bf16 natively (AVX512_BF16 or AMX; Paddle Inference's switch of the
        same name). Inserts the IR pass ``cpu_bfloat16`` into ``pass_builder()`` (before
        ``fuse_elementwise``): weights are converted to bf16 once per predictor and
        activations at the edges of the bf16 ops (see
        ``fw.core.ir.passes.cpu_bfloat16``). Inputs and outputs stay float32; results
        differ from float32 by bf16 rounding (8 significant bits).

        On a CPU without native bf16 (oneDNN's effective ISA, ``fw.core.kernels.cpu.bf16
        .cpu_isa()``, below ``avx512_core_bf16``) it warns (``RuntimeWarning``) and stays
        float32: oneDNN would emulate bf16 there, slower than float32. Off by default;
        `set_bfloat16_op` picks the ops. As in Paddle it needs the IR passes
        (``switch_ir_optim(True)``, the default); deleting ``cpu_bfloat16`` from the
        pass builder afterwards turns it off again.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.enable_mkldnn_bfloat16()  # doctest: +SKIP
            >>> config.mkldnn_bfloat16_enabled()  # doctest: +SKIP
            True
        """
        import warnings

        from fw.core.ir.passes.cpu_bfloat16 import cpu_isa, native_bf16

        if not native_bf16():
            warnings.warn(f"Config.enable_mkldnn_bfloat16: this CPU (oneDNN ISA "
                          f"{cpu_isa() or 'unknown: no native extension'!r}) has no native "
                          f"bfloat16 dot products (AVX512_BF16 or AMX); the predictor stays "
                          f"float32", RuntimeWarning, stacklevel=2)
            self._bf16 = False
            return
        self._bf16 = True
        passes = self._pass_builder.all_passes()
        if "cpu_bfloat16" not in passes:
            at = next((passes.index(p) for p in ("fuse_elementwise", "cse", "dce")
                       if p in passes), len(passes))
            self._pass_builder.insert_pass(at, "cpu_bfloat16")

    def enable_onednn_bfloat16(self) -> None:
        """`enable_mkldnn_bfloat16` by Paddle 3's oneDNN name.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.enable_onednn_bfloat16()  # doctest: +SKIP
        """
        self.enable_mkldnn_bfloat16()

    def mkldnn_bfloat16_enabled(self) -> bool:
        """Whether `enable_mkldnn_bfloat16` took effect (False by default, and on a CPU
        without native bf16). Paddle's C++ ``AnalysisConfig::mkldnn_bfloat16_enabled()``
        (Paddle 3.3.1's Python binding does not expose it).

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config("model.fwmodel").mkldnn_bfloat16_enabled()
            False
        """
        return self._bf16

    def set_bfloat16_op(self, op_list) -> None:
        """The ops `enable_mkldnn_bfloat16` runs in bf16 (Paddle's meaning: an empty set,
        the default, is every op the pass supports). Paddle's names (``matmul``,
        ``matmul_v2``, ``fc``, ``conv2d``, ``depthwise_conv2d``, ``fused_conv2d``,
        ``pool2d``) or fw's (``fused_matmul``, ``fused_conv``, ``conv``, ``max_pool``);
        a Paddle op that fw runs in float32 (``softmax``, ``layer_norm``, ...) selects
        nothing.

        Args:
            op_list (set[str] | list[str]): the op names.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.set_bfloat16_op({"conv2d"})
            >>> sorted(config.bfloat16_ops())
            ['conv', 'fused_conv']
        """
        from fw.core.ir.passes.cpu_bfloat16 import resolve_op_types

        try:
            resolve_op_types(op_list)
        except InvalidTypeError as e:
            raise InvalidTypeError(f"Config.set_bfloat16_op: {e}") from None
        self._bf16_ops = frozenset(op_list)

    def bfloat16_ops(self) -> frozenset:
        """The fw ops the bf16 pass converts (`set_bfloat16_op` resolved; fw's own).

        Returns:
            frozenset[str]: fw op names.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> sorted(Config("model.fwmodel").bfloat16_ops())
            ['conv', 'fused_conv', 'fused_matmul', 'max_pool']
        """
        from fw.core.ir.passes.cpu_bfloat16 import resolve_op_types

        return resolve_op_types(self._bf16_ops)

    def enable_use_gpu(self, memory_pool_init_size_mb: int = 100, device_id: int = 0,
                       precision_mode=None) -> None:
        """Run the predictor on GPU `device_id` (CuPy): its weights live there, inputs
        are copied there and outputs stay there (``copy_to_cpu`` brings them back).
        The inference passes are the CPU pipeline's graph rewrites; ops run on CuPy
        through their kernels (cuBLAS products). Raises UnsupportedError naming why
        when there is no GPU backend.

        Args:
            memory_pool_init_size_mb (int, optional): accepted for Paddle's API (CuPy's pool
                grows on demand). Default: 100.
            device_id (int, optional): the GPU. Default: 0.
            precision_mode (optional): None or float32. Default: None.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> try:
            ...     config.enable_use_gpu(100, 0)
            ... except fw.core.errors.UnsupportedError:
            ...     pass   # no CUDA device here
            >>> config.use_gpu() == fw.is_compiled_with_cuda()
            True
        """
        from fw.core import place

        if not place.is_compiled_with_cuda():
            raise UnsupportedError(
                "Config.enable_use_gpu: fw has no GPU backend here (it needs CuPy and a CUDA "
                "device: pip install fw-core[gpu]); remove enable_use_gpu() to run on the CPU")
        n = place.device_count("gpu")
        if not 0 <= int(device_id) < n:
            raise InvalidArgumentError(f"Config.enable_use_gpu: device_id={device_id} but "
                                       f"there are {n} GPU(s)")
        if precision_mode not in (None, "float32") and \
                getattr(precision_mode, "name", None) not in ("Float32",):
            raise UnsupportedError(f"Config.enable_use_gpu: precision_mode={precision_mode!r} "
                                   f"is not supported; GPU predictors run float32 programs")
        self._gpu = int(device_id)

    def use_gpu(self) -> bool:
        """Whether `enable_use_gpu` is in effect.

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.use_gpu()
            False
        """
        return getattr(self, "_gpu", None) is not None

    def disable_gpu(self) -> None:
        """Run on the CPU (the default).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.disable_gpu()
            >>> config.use_gpu()
            False
        """
        self._gpu = None

    def gpu_device_id(self) -> int:
        """The GPU the predictor runs on (-1 on the CPU).

        Returns:
            int: the device id.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config("model.fwmodel").gpu_device_id()
            -1
        """
        return self._gpu if self.use_gpu() else -1

    # ------------------------------------------------------------ logging
    def disable_glog_info(self) -> None:
        """Do not log the passes run while a predictor is created (logger
        ``fw.inference``, level INFO).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> config.disable_glog_info()
            >>> config.glog_info_disabled()
            True
        """
        self._glog_disabled = True

    def glog_info_disabled(self) -> bool:
        """Whether `disable_glog_info` was called.

        Returns:
            bool: the setting.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> Config("model.fwmodel").glog_info_disabled()
            False
        """
        return self._glog_disabled

    # ------------------------------------------------------------ summary
    def summary(self) -> str:
        """A table of the settings, for logs.

        Returns:
            str: the table.

        Examples:
            >>> import fw
            >>> from fw.inference import Config
            >>> config = Config("model.fwmodel")
            >>> table = config.summary()
            >>> "model_file" in table, "memory_optim" in table
            (True, True)
        """
        rows = [("model_file", self.prog_file() or "(none)"),
                ("params_file", self.params_file() or "(in the model file)"),
                ("model_dir", self.model_dir() or "(none)"), None,
                ("cpu_math_thread", str(self._threads)), ("enable_mkldnn", _b(self._mkldnn)),
                ("mkldnn_bfloat16", _b(self._bf16)),
                ("prepared_kernels", _b(self._prepared)),
                ("nonfinite_checks", "every op" if self._nonfinite_checks else "inputs"),
                ("mkldnn_cache_capacity", "default" if self._mkldnn_cache_capacity is None
                 else str(self._mkldnn_cache_capacity)), ("use_gpu", "false"), None,
                ("ir_optim", _b(self._ir_optim))]
        passes = self._pass_builder.all_passes() or ["(none)"]
        rows += [("ir_passes" if i == 0 else "", p) for i, p in enumerate(passes)]
        rows += [("strip_state_updates", _b(self._strip_updates))]
        if self._model_limits is not None:
            from fw.core.ir.serialize import DEFAULT_LIMITS

            rows += [(k, str(v)) for k, v in vars(self._model_limits).items()
                     if v != getattr(DEFAULT_LIMITS, k)]
        rows += [("ir_debug", _b(self._ir_debug)), ("memory_optim", _b(self._memory_optim)),
                ("save_optim_model", _b(self._save_optim_model)),
                ("enable_log", _b(not self._glog_disabled))]
        w1 = max(len(r[0]) for r in rows if r) + 2
        w2 = max(len(r[1]) for r in rows if r) + 2
        line = "+" + "-" * w1 + "+" + "-" * w2 + "+"
        out = [line, f"| {'Option':<{w1 - 1}}| {'Value':<{w2 - 1}}|", line]
        for r in rows:
            out.append(line if r is None else f"| {r[0]:<{w1 - 1}}| {r[1]:<{w2 - 1}}|")
        out.append(line)
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"Config(model={self.prog_file() or None!r}, ir_optim={self._ir_optim})"


def _b(v: bool) -> str:
    return "true" if v else "false"
