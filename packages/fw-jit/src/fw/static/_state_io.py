"""Paddle's static save/load family: `save`/`load`, `load_program_state`/
`set_program_state`, `serialize_program`/`deserialize_program`,
`serialize_persistables`/`deserialize_persistables`, `save_to_file`/`load_from_file`.

A program's state is its captured parameters and persistable tensors (optimizer
moments, moving statistics, EMA shadows), keyed by their labels (the tensor names).
fw writes state as a NumPy ``.npz`` archive read with ``allow_pickle=False`` (Paddle
writes a pickle; loading an fw file never runs code) and programs in fw's model
format (fw.core.ir.serialize: program text and weights in one safetensors file).
"""

from __future__ import annotations

import io
import os
import tempfile

import numpy as np

from fw.core.atomic_io import atomic_path
from fw.core.ir import serialize
from fw.static._program import as_static_program, default_main_program

__all__ = ["save", "load", "load_program_state", "set_program_state", "serialize_program",
           "deserialize_program", "serialize_persistables", "deserialize_persistables",
           "save_to_file", "load_from_file"]


def _check_program(fname, program):
    from fw.core.ir.core import Program as _P

    if not isinstance(program, _P):
        raise TypeError(f"{fname}: 'program' must be a Program, got {type(program).__name__}")


def _state(program) -> dict:
    """{label: tensor} of what `program` keeps across runs: params and persistables
    (not the anonymous constants a trace bakes in)."""
    roles = {a.label: a.role for a in program.block.args}
    out = {}
    for label, t in program.captured.items():
        if roles.get(label) == "param" or getattr(t, "persistable", False):
            out[label] = t
    return out


def _npz_bytes(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _read_npz(fname, src) -> dict:
    try:
        with np.load(src, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{fname}: not an fw state archive (.npz): {e}") from e


def _assign(fname, program, state: dict, only=None) -> None:
    cur = _state(program)
    for label, arr in state.items():
        if only is not None and label not in only:
            continue
        t = cur.get(label)
        if t is None:
            continue  # Paddle also ignores names the program does not have
        if list(arr.shape) != list(t.shape):
            raise ValueError(f"{fname}: {label!r} is {list(t.shape)} in the program but "
                             f"{list(arr.shape)} in the state")
        t.set_value(arr.astype(t.numpy().dtype, copy=False))


def save(program, model_path, protocol=4, **configs):
    """Save a static program's parameters and persistable variables, and the program.

    The state goes to ``model_path + ".pdparams"`` (an ``.npz`` archive, which loading
    cannot execute; Paddle's is a pickle) and the program to ``model_path + ".pdmodel"``
    (fw's model format).

    Args:
        program (Program): the program.
        model_path (str): the path prefix.
        protocol (int, optional): accepted for Paddle compatibility (its pickle protocol,
            2 to 4). Default: 4.
        **configs: accepted for Paddle compatibility.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [None, 2])
        ...     y = fw.static.nn.fc(x, 1, name="sv")
        >>> fw.static.save(main, "m")
        >>> import os
        >>> sorted(f for f in os.listdir(".") if f.startswith("m."))
        ['m.pdmodel', 'm.pdparams']
    """
    _check_program("static.save", program)
    if not isinstance(protocol, int) or not 2 <= protocol <= 4:
        raise ValueError(f"static.save: protocol must be 2, 3 or 4, got {protocol!r}")
    if os.path.basename(os.fspath(model_path)) == "":
        raise ValueError(f"static.save: model_path {model_path!r} must name a file prefix")
    arrays = {k: np.asarray(t.numpy()) for k, t in _state(program).items()}
    with atomic_path(os.fspath(model_path) + ".pdparams", make_parents=True) as tmp:
        with open(tmp, "wb") as f:
            f.write(_npz_bytes(arrays))
    if program.block.ops:
        serialize.save(program, os.fspath(model_path) + ".pdmodel")


def load_program_state(model_path, var_list=None):
    """Read the state that `save` wrote, as a dict of arrays.

    Args:
        model_path (str): the prefix given to `save`, or the ``.pdparams`` file.
        var_list (list, optional): only these variables (or names). Default: None (all).

    Returns:
        dict[str, numpy.ndarray]: name -> value.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [None, 2])
        ...     y = fw.static.nn.fc(x, 1, name="sv")
        >>> fw.static.save(main, "m")
        >>> state = fw.static.load_program_state("m")
        >>> sorted(state), state["sv.w_0"].shape
        (['sv.b_0', 'sv.w_0'], (2, 1))
    """
    p = os.fspath(model_path)
    if not p.endswith(".pdparams"):
        p += ".pdparams"
    if not os.path.isfile(p):
        raise FileNotFoundError(f"static.load_program_state: no state file {p!r}")
    state = _read_npz("static.load_program_state", p)
    if var_list is not None:
        names = {v if isinstance(v, str) else getattr(v, "name", None) or
                 getattr(v, "label", None) for v in var_list}
        state = {k: v for k, v in state.items() if k in names}
    return state


def set_program_state(program, state_dict):
    """Write a state dict (name -> array) into `program`'s parameters and
    persistables (Paddle's ``static.set_program_state``).

    Names the program lacks are ignored; a shape mismatch raises an error naming the
    variable.

    Args:
        program (Program): the program.
        state_dict (dict[str, numpy.ndarray]): the values, e.g. from
            `load_program_state`.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [1, 2])
        ...     y = fw.static.nn.fc(x, 1, name="sz", bias_attr=False)
        >>> fw.static.set_program_state(main, {"sz.w_0": np.full([2, 1], 3.0, "float32")})
        >>> main.captured["sz.w_0"].numpy().ravel().tolist()
        [3.0, 3.0]
    """
    _check_program("static.set_program_state", program)
    if not isinstance(state_dict, dict):
        raise TypeError(f"static.set_program_state: state_dict must be a dict, got "
                        f"{type(state_dict).__name__}")
    _assign("static.set_program_state", program, {k: np.asarray(v) for k, v in
                                                  state_dict.items()})


def load(program, model_path, executor=None, var_list=None):
    """Load what `save` wrote into `program`'s parameters and persistables.

    Args:
        program (Program): the program whose parameters are filled.
        model_path (str): the prefix given to `save`.
        executor (Executor, optional): accepted for Paddle compatibility. Default: None.
        var_list (list, optional): only these variables. Default: None (all).

    Returns:
        None.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [None, 2])
        ...     y = fw.static.nn.fc(x, 1, name="sv")
        >>> fw.static.save(main, "m")
        >>> saved = main.captured["sv.w_0"].numpy().copy()
        >>> fw.static.set_program_state(main, {"sv.w_0": np.zeros([2, 1], "float32")})
        >>> fw.static.load(main, "m")
        >>> bool((main.captured["sv.w_0"].numpy() == saved).all())
        True
    """
    _check_program("static.load", program)
    state = load_program_state(model_path)
    only = None
    if var_list is not None:
        only = {v if isinstance(v, str) else getattr(v, "name", None) or
                getattr(v, "label", None) for v in var_list}
    _assign("static.load", program, state, only)


def _program_arg(kwargs):
    return kwargs.get("program") or default_main_program()


def serialize_program(feed_vars, fetch_vars, **kwargs):
    """The inference program of (`feed_vars` -> `fetch_vars`) as bytes (fw's model
    format, which holds the program's weights too; Paddle's holds the program only).

    Args:
        feed_vars, fetch_vars (Variable|list). program (kwarg, optional): default
            the default main program.

    Returns:
        bytes.

    Examples:
        >>> import fw, numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [2])
        ...     y = x * 3.0
        >>> data = fw.static.serialize_program([x], [y], program=main)
        >>> prog = fw.static.deserialize_program(data)
        >>> fw.static.Executor().run(prog, feed={"x": np.ones(2, "float32")},
        ...                          fetch_list=list(prog.outputs))[0].tolist()
        [3.0, 3.0]
    """
    from fw.static.io import normalize_program

    prog = normalize_program(_program_arg(kwargs), feed_vars, fetch_vars)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "program.fwmodel")
        serialize.save(prog, path)
        with open(path, "rb") as f:
            return f.read()


def deserialize_program(data):
    """Rebuild a Program from the bytes of `serialize_program`; reading runs no code.

    Args:
        data (bytes): the serialized program.

    Returns:
        Program: the inference program (with its weights).

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [2])
        ...     y = x * 3.0
        >>> data = fw.static.serialize_program([x], [y], program=main)
        >>> prog = fw.static.deserialize_program(data)
        >>> fw.static.Executor().run(prog, feed={"x": np.ones(2, "float32")},
        ...                          fetch_list=list(prog.outputs))[0].tolist()
        [3.0, 3.0]
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"deserialize_program: data must be bytes, got {type(data).__name__}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "program.fwmodel")
        with open(path, "wb") as f:
            f.write(data)
        program, _ = serialize.load(path)
    return as_static_program(program)


def serialize_persistables(feed_vars, fetch_vars, executor, **kwargs):
    """The parameters and persistables of the program as bytes (an ``.npz``
    archive), for `deserialize_persistables`.

    Args:
        feed_vars, fetch_vars: accepted (the whole program's state is written).
        executor: accepted. program (kwarg, optional).

    Returns:
        bytes.

    Examples:
        >>> import fw, numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [1, 2])
        ...     y = fw.static.nn.fc(x, 1, name="sz", bias_attr=False)
        >>> blob = fw.static.serialize_persistables([x], [y], None, program=main)
        >>> _ = main.captured["sz.w_0"].set_value(np.zeros([2, 1], "float32"))
        >>> _ = fw.static.deserialize_persistables(main, blob, None)
        >>> bool((main.captured["sz.w_0"].numpy() != 0).any())
        True
    """
    prog = _program_arg(kwargs)
    _check_program("serialize_persistables", prog)
    return _npz_bytes({k: np.asarray(t.numpy()) for k, t in _state(prog).items()})


def deserialize_persistables(program, data, executor):
    """Write the state in `data` (from `serialize_persistables`) into `program`'s
    parameters and persistables.

    Args:
        program (Program): the program to fill.
        data (bytes): the serialized state (an ``.npz`` archive; loading runs no code).
        executor (Executor): accepted for Paddle compatibility.

    Returns:
        Program: `program`.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [1, 2])
        ...     y = fw.static.nn.fc(x, 1, name="sz", bias_attr=False)
        >>> blob = fw.static.serialize_persistables([x], [y], None, program=main)
        >>> before = main.captured["sz.w_0"].numpy().copy()
        >>> _ = main.captured["sz.w_0"].set_value(np.zeros([2, 1], "float32"))
        >>> _ = fw.static.deserialize_persistables(main, blob, None)
        >>> bool((main.captured["sz.w_0"].numpy() == before).all())
        True
    """
    _check_program("deserialize_persistables", program)
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"deserialize_persistables: data must be bytes, got "
                        f"{type(data).__name__}")
    _assign("deserialize_persistables", program,
            _read_npz("deserialize_persistables", io.BytesIO(bytes(data))))
    return program


def save_to_file(path, content):
    """Write bytes `content` to `path`, atomically (a crash leaves the old file or
    the new one, never a part).

    Args:
        path (str): the file.
        content (bytes): the data.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fw.static.save_to_file("blob", b"abc")
        >>> fw.static.load_from_file("blob")
        b'abc'
    """
    if not isinstance(content, (bytes, bytearray)):
        raise TypeError(f"save_to_file: content must be bytes, got {type(content).__name__}")
    with atomic_path(os.fspath(path), make_parents=True) as tmp:
        with open(tmp, "wb") as f:
            f.write(content)


def load_from_file(path):
    """Read the bytes of file `path` (the counterpart of `save_to_file`).

    Args:
        path (str): the file.

    Returns:
        bytes: its content.

    Examples:
        >>> import fw
        >>> fw.static.save_to_file("blob", b"abc")
        >>> fw.static.load_from_file("blob")
        b'abc'
    """
    with open(os.fspath(path), "rb") as f:
        return f.read()
