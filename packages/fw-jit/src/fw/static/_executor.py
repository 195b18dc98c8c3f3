"""`Executor`: runs static programs (Paddle's ``paddle.static.Executor``).

``exe.run(program, feed={name: array}, fetch_list=[var, ...])`` runs the program
cut down to what the fetched variables and the state updates need (`_prune`),
compiled once per (program version, fetch list) by fw-core's executor. Every
state update (an optimizer step from ``opt.minimize(loss)``, running statistics)
is applied after each run, whatever is fetched — as Paddle runs every op.
"""

from __future__ import annotations

import numpy as np

from fw.core.errors import InvalidArgumentError
from fw.core.ir.core import Program as _IRProgram
from fw.core.ir.core import Value
from fw.core.ir.executor import Compiled
from fw.core.tensor import Tensor, wrap
from fw.static._prune import prune

__all__ = ["Executor"]


def _feed_array(name, value, typ):
    if isinstance(value, Tensor):
        a = value._data
    else:
        a = np.asarray(value)
    want = typ.dtype.np
    if a.dtype != want:
        if a.dtype.kind != want.kind and not (a.dtype.kind in "iub" and want.kind in "iu"):
            raise InvalidArgumentError(f"feed {name!r}: the variable is {typ.dtype.name}, the "
                                       f"fed array is {a.dtype}")
        a = a.astype(want)
    if len(a.shape) != len(typ.shape) or any(d != -1 and d != s for d, s in
                                              zip(typ.shape, a.shape)):
        raise InvalidArgumentError(f"feed {name!r}: the variable has shape "
                                   f"{list(typ.shape)} (-1: any size), the fed array "
                                   f"{list(a.shape)}")
    return a


class Executor:
    """Runs static programs (Paddle's ``paddle.static.Executor``).

    Compiled programs are cached per program and feed signature, so repeated runs are
    cheap.

    Args:
        place (Place, optional): accepted for Paddle compatibility; fw runs on the device
            of the fed arrays. Default: None.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 3], "float32")
        ...     y = fw.nn.functional.relu(x) * 2
        >>> exe = fw.static.Executor(fw.CPUPlace())
        >>> out, = exe.run(prog, feed={"x": np.array([[-1.0, 0.0, 2.0]], "float32")},
        ...                fetch_list=[y])
        >>> out.tolist()
        [[0.0, 0.0, 4.0]]
    """

    def __init__(self, place=None):
        self.place = place
        self._cache: dict = {}

    def close(self):
        """Release what the executor cached (compiled schedules); it can still run
        programs afterwards (they are compiled again).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> exe = fw.static.Executor()
            >>> _ = exe.run(fw.static.default_startup_program())
            >>> exe.close()
        """
        self._cache.clear()

    def run(self, program=None, feed=None, fetch_list=None, feed_var_name="feed",
            fetch_var_name="fetch", scope=None, return_numpy=True, use_program_cache=False,
            use_prune=False):
        """Run `program` on `feed` and return the fetched values.

        Args:
            program (Program, optional): the program; None runs the default main program.
                Default: None.
            feed (dict, optional): ``{input name: array or Tensor}``. Default: None.
            fetch_list (list, optional): variables (or their names) to return. Default: None.
            feed_var_name (str, optional): accepted for Paddle compatibility. Default: "feed".
            fetch_var_name (str, optional): accepted for Paddle compatibility.
                Default: "fetch".
            scope (Scope, optional): accepted for Paddle compatibility. Default: None.
            return_numpy (bool, optional): NumPy arrays (True) or Tensors (False).
                Default: True.
            use_program_cache (bool, optional): accepted; fw always caches. Default: False.
            use_prune (bool, optional): accepted for Paddle compatibility. Default: False.

        Returns:
            list: one result per entry of `fetch_list`.

        Examples:
            >>> import fw
            >>> import numpy as np
            >>> prog = fw.static.Program()
            >>> with fw.static.program_guard(prog):
            ...     x = fw.static.data("x", [None, 3], "float32")
            ...     y = fw.nn.functional.relu(x) * 2
            >>> exe = fw.static.Executor()
            >>> res = exe.run(prog, feed={"x": np.ones((2, 3), "float32")}, fetch_list=[y],
            ...               return_numpy=False)
            >>> res[0].shape, res[0].numpy().tolist()
            ([2, 3], [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]])
        """
        from fw.static._program import default_main_program

        if program is None:
            program = default_main_program()
        if hasattr(program, "_program") and not isinstance(program, _IRProgram):
            program = program._program  # CompiledProgram-style wrappers
        if not isinstance(program, _IRProgram):
            raise TypeError(f"Executor.run: expected a Program, got {type(program).__name__}")
        feed = dict(feed or {})
        fetch_list = list(fetch_list or [])
        if isinstance(fetch_list, (Value, str)):
            fetch_list = [fetch_list]
        concrete = {i: f for i, f in enumerate(fetch_list) if isinstance(f, Tensor)}
        fetch_vals = [f for f in fetch_list if not isinstance(f, Tensor)]
        for f in program.__dict__.get("_fw_pre_run", ()):
            f()
        if not program.block.ops and not fetch_vals and not program.updates:
            results = []
        else:
            key = (id(program), program._version, tuple(id(f) if not isinstance(f, str) else f
                                                         for f in fetch_vals))
            entry = self._cache.get(key)
            if entry is None:
                pruned, _ = prune(program, fetch_vals)
                entry = (pruned, Compiled(pruned))
                self._cache[key] = entry
            pruned, comp = entry
            arrays = []
            for a in pruned.inputs():
                if a.label not in feed:
                    raise InvalidArgumentError(
                        f"Executor.run: the program needs the input {a.label!r} "
                        f"({a.type}); pass it in feed={{{a.label!r}: ...}}")
                arrays.append(_feed_array(a.label, feed[a.label], a.type))
            outs = comp(arrays)
            caps = {id(getattr(t, "_data", t)) for t in pruned.captured.values()}
            results = [np.array(o, copy=True) if id(o) in caps else o for o in outs]
        for f in program.__dict__.get("_fw_post_run", ()):
            f()
        full = []
        it = iter(results)
        for i in range(len(fetch_list)):
            if i in concrete:
                full.append(concrete[i]._data)
            else:
                full.append(next(it))
        if return_numpy:
            return [np.asarray(o) for o in full]
        return [wrap(np.asarray(o) if isinstance(o, np.generic) else o) for o in full]

