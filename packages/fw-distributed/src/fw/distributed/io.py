"""``paddle.distributed.io``: the persistable-variable save/load of static programs
(`is_persistable`, `save_persistables`, `load_persistables`) and
`load_inference_model_distributed`.

A program's persistables are its parameters and the captured tensors marked
``persistable`` (optimizer moments, moving statistics), keyed by label — the same
set ``fw.static.save`` writes. Files are NumPy arrays (``.npy`` per variable, or one
``.npz`` with `filename`) read with ``allow_pickle=False``: loading never executes
code (Paddle writes its own tensor stream). Programs come from ``fw.static``
(fw-jit), which fw-distributed does not depend on: with ``main_program=None`` the
default main program is taken from an already imported ``fw.static``.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from fw.core.atomic_io import atomic_path
from fw.core.tensor import Tensor

__all__ = ["is_persistable", "save_persistables", "load_persistables",
           "load_inference_model_distributed"]


def is_persistable(var):
    """Whether `var` outlives a run of its program (a parameter or a tensor marked
    ``persistable``).

    Args:
        var (Tensor): the variable.

    Returns:
        bool: True for a persistable variable.

    Examples:
        >>> import fw
        >>> from fw.distributed.io import is_persistable
        >>> is_persistable(fw.nn.Linear(2, 2).weight), is_persistable(fw.ones([2]))
        (True, False)
    """
    if getattr(var, "persistable", False):
        return True
    from fw.nn.parameter import Parameter

    return isinstance(var, Parameter)


def _program(main_program, fn):
    if main_program is None:
        static = sys.modules.get("fw.static")
        if static is None:
            raise ValueError(f"fw.distributed.io.{fn}: main_program is None and fw.static is "
                             f"not in use; pass the Program")
        main_program = static.default_main_program()
    if not hasattr(main_program, "captured") or not hasattr(main_program, "block"):
        raise TypeError(f"fw.distributed.io.{fn}: main_program must be a static Program, got "
                        f"{type(main_program).__name__}")
    return main_program


def _persistables(program) -> dict:
    roles = {a.label: a.role for a in program.block.args}
    return {label: t for label, t in program.captured.items()
            if roles.get(label) == "param" or is_persistable(t)}


def _file_of(dirname, label, fn):
    if not label or os.sep in label or label in (".", "..") or "\0" in label:
        raise ValueError(f"fw.distributed.io.{fn}: variable name {label!r} cannot be a file name")
    return os.path.join(dirname, label + ".npy")


def save_persistables(executor, dirname, main_program=None, filename=None):
    """Save the persistable variables of `main_program` under `dirname`: one file per
    variable (``<name>.npy``), or all in ``dirname/filename`` (an ``.npz`` archive).

    Args:
        executor (Executor): accepted for Paddle compatibility (fw's values live in
            the program's tensors).
        dirname (str): the directory (created if needed).
        main_program (Program, optional): the program; None for fw.static's default
            main program. Default: None.
        filename (str, optional): one file for everything; None for a file per
            variable. Default: None.

    Returns:
        list[str]: the names saved (sorted).

    Examples:
        >>> import fw
        >>> import fw.distributed.io as dio
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 2])
        ...     y = fw.static.nn.fc(x, 3, name="io_fc")
        >>> dio.save_persistables(None, "persist", prog)
        ['io_fc.b_0', 'io_fc.w_0']
    """
    fn = "save_persistables"
    program = _program(main_program, fn)
    state = {k: np.ascontiguousarray(t.numpy()) for k, t in _persistables(program).items()}
    dirname = os.fspath(dirname)
    os.makedirs(dirname, exist_ok=True)
    if filename is not None:
        path = os.path.join(dirname, os.fspath(filename))
        with atomic_path(path, make_parents=True) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **state)
    else:
        for label, a in state.items():
            with atomic_path(_file_of(dirname, label, fn)) as tmp:
                with open(tmp, "wb") as f:
                    np.save(f, a, allow_pickle=False)
    return sorted(state)


def load_persistables(executor, dirname, main_program=None, filename=None):
    """Load the persistable variables of `main_program` from what `save_persistables`
    wrote, in place. A variable without its file, or of another shape, raises an
    error naming it.

    Args:
        executor (Executor): accepted for Paddle compatibility.
        dirname (str): the directory.
        main_program (Program, optional): the program; None for fw.static's default
            main program. Default: None.
        filename (str, optional): the single archive, if one was written. Default: None.

    Returns:
        list[str]: the names loaded (sorted).

    Examples:
        >>> import fw
        >>> import fw.distributed.io as dio
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 2])
        ...     y = fw.static.nn.fc(x, 3, name="io_fc2")
        >>> _ = dio.save_persistables(None, "persist", prog, filename="all.npz")
        >>> dio.load_persistables(None, "persist", prog, filename="all.npz")
        ['io_fc2.b_0', 'io_fc2.w_0']
    """
    fn = "load_persistables"
    program = _program(main_program, fn)
    dirname = os.fspath(dirname)
    targets = _persistables(program)
    arrays = {}
    if filename is not None:
        path = os.path.join(dirname, os.fspath(filename))
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except FileNotFoundError:
            raise FileNotFoundError(f"fw.distributed.io.{fn}: {path} does not exist") from None
        except (ValueError, OSError, EOFError) as e:
            raise ValueError(f"fw.distributed.io.{fn}: {path} is not an .npz archive: {e}") \
                from e
    for label, t in targets.items():
        if filename is None:
            p = _file_of(dirname, label, fn)
            try:
                a = np.load(p, allow_pickle=False)
            except FileNotFoundError:
                raise FileNotFoundError(f"fw.distributed.io.{fn}: no file for variable "
                                        f"{label!r} ({p})") from None
        else:
            if label not in arrays:
                raise KeyError(f"fw.distributed.io.{fn}: variable {label!r} is not in "
                               f"{os.path.join(dirname, filename)}")
            a = arrays[label]
        if list(a.shape) != list(t.shape):
            raise ValueError(f"fw.distributed.io.{fn}: {label!r} is {list(t.shape)} in the "
                             f"program but {list(a.shape)} in the file")
        if isinstance(t, Tensor):
            t.set_value(a.astype(t.numpy().dtype, copy=False))
    return sorted(targets)


def load_inference_model_distributed(dirname, executor, model_filename=None,
                                     params_filename=None):
    """Load an inference model saved with ``fw.static.save_inference_model`` (or
    ``fw.jit.save``) from `dirname`. Loading never executes code from the file.

    Args:
        dirname (str): the directory holding the model, or the model's path prefix.
        executor (Executor): accepted for Paddle compatibility.
        model_filename (str, optional): the model file in `dirname`; None for the one
            ``*.fwmodel`` file there. Default: None.
        params_filename (str, optional): accepted for Paddle compatibility (fw's model
            file holds the weights). Default: None.

    Returns:
        list: ``[program, feed_target_names, fetch_targets]``.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> import fw.distributed.io as dio
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     out = fw.static.nn.fc(x, 2)
        >>> _ = fw.static.save_inference_model("dist_inf/model", [x], [out], program=prog)
        >>> program, feeds, fetches = dio.load_inference_model_distributed("dist_inf", None)
        >>> feeds
        ['x']
    """
    fn = "load_inference_model_distributed"
    from fw.core.ir import serialize

    d = os.fspath(dirname)
    if model_filename is not None:
        path = os.path.join(d, os.fspath(model_filename))
    elif os.path.isdir(d):
        found = sorted(f for f in os.listdir(d) if f.endswith(".fwmodel"))
        if len(found) != 1:
            raise FileNotFoundError(f"fw.distributed.io.{fn}: {d} must hold exactly one "
                                    f"*.fwmodel file (found {found}); give model_filename")
        path = os.path.join(d, found[0])
    else:
        path = d if d.endswith(".fwmodel") else d + ".fwmodel"
    program, _ = serialize.load(path, for_inference=True)
    static = sys.modules.get("fw.static._program")   # a static Program where fw.static is used
    if static is not None:
        program = static.as_static_program(program)
    return [program, [a.label for a in program.inputs()], list(program.outputs)]
