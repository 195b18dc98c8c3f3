"""Inference models of static programs: `save_inference_model`,
`load_inference_model`, `normalize_program`.

The file is fw's model format (fw.core.ir.save: one safetensors file holding the
program text and the weights): ``path_prefix + ".fwmodel"`` (Paddle writes
``.pdmodel`` + ``.pdiparams``; one file here). Loading reads data only.
"""

from __future__ import annotations

import os

from fw.core.ir import serialize
from fw.static._program import as_static_program
from fw.static._prune import prune

__all__ = ["save_inference_model", "load_inference_model", "normalize_program", "MODEL_SUFFIX",
           "model_path"]

MODEL_SUFFIX = ".fwmodel"


def model_path(path_prefix: str) -> str:
    """The model file of `path_prefix` (``path_prefix + ".fwmodel"``; a path that
    already ends with the suffix is used as it is)."""
    p = os.fspath(path_prefix)
    return p if p.endswith(MODEL_SUFFIX) else p + MODEL_SUFFIX


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def normalize_program(program, feed_vars, fetch_vars, **kwargs):
    """The inference form of `program`: inputs `feed_vars` (in that order), outputs
    `fetch_vars`, only the ops they need, and no state updates. `program` is unchanged.

    Args:
        program (Program): the program; None for the default main program.
        feed_vars (Variable|list[Variable]): the inputs.
        fetch_vars (Variable|list[Variable]): the outputs.
        **kwargs: accepted for Paddle compatibility.

    Returns:
        Program: the pruned program.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     out = fw.static.nn.fc(x, 2)
        ...     unused = x * 3
        >>> inf = fw.static.normalize_program(prog, [x], [out])
        >>> exe = fw.static.Executor()
        >>> len(inf.outputs)      # fetch the new program's own outputs
        1
        >>> exe.run(inf, feed={"x": np.ones((4, 3), "float32")},
        ...         fetch_list=list(inf.outputs))[0].shape
        (4, 2)
    """
    from fw.static._program import default_main_program

    program = program if program is not None else default_main_program()
    new, _ = prune(program, _as_list(fetch_vars), _as_list(feed_vars), keep_updates=False)
    return new


def save_inference_model(path_prefix, feed_vars, fetch_vars, executor=None, **kwargs):
    """Write the inference program of (`feed_vars` -> `fetch_vars`) and its
    weights to ``path_prefix + ".fwmodel"``, atomically.

    Args:
        path_prefix (str): the file path without the suffix; directories are created.
        feed_vars (Variable|list[Variable]): the model's inputs.
        fetch_vars (Variable|list[Variable]): the model's outputs.
        executor (Executor, optional): accepted for Paddle compatibility. Default: None.
        **kwargs: ``program=`` selects the program (default: the default main program).

    Returns:
        str: the path written (Paddle returns None).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     out = fw.static.nn.fc(x, 2)
        >>> path = fw.static.save_inference_model("model/fc", [x], [out], program=prog)
        >>> path
        'model/fc.fwmodel'
    """
    program = kwargs.get("program")
    prog = normalize_program(program, feed_vars, fetch_vars)
    path = model_path(path_prefix)
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    serialize.save(prog, path)
    return path


def load_inference_model(path_prefix, executor=None, **kwargs):
    """Read a model written by `save_inference_model` (or ``fw.jit.save``).

    Loading never executes code from the file.

    Args:
        path_prefix (str): the path given to `save_inference_model` (with or without
            ``.fwmodel``).
        executor (Executor, optional): accepted for Paddle compatibility. Default: None.
        **kwargs: accepted for Paddle compatibility.

    Returns:
        list: ``[program, feed_target_names, fetch_targets]``; run it with
        ``executor.run(program, feed={name: array}, fetch_list=fetch_targets)``.

    Raises:
        ModelFormatError: a malformed or damaged file, or a program that writes its own
            weights (naming the file).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     out = fw.static.nn.fc(x, 2)
        >>> _ = fw.static.save_inference_model("fc", [x], [out], program=prog)
        >>> exe = fw.static.Executor()
        >>> program, feed_names, fetches = fw.static.load_inference_model("fc", exe)
        >>> feed_names
        ['x']
        >>> exe.run(program, feed={"x": np.ones((2, 3), "float32")}, fetch_list=fetches)[0].shape
        (2, 2)
    """
    program, _params = serialize.load(model_path(path_prefix), for_inference=True)
    program = as_static_program(program)
    return [program, [a.label for a in program.inputs()], list(program.outputs)]
