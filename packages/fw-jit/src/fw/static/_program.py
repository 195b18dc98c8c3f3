"""`Program` with Paddle's static API, the default programs, `program_guard`, `data`.

A `fw.static.Program` *is* an `fw.core.ir.Program` (a subclass adding Paddle's
methods: ``global_block()``, ``get_block(i)``, ``num_blocks``, ``clone()``,
``list_vars()``, ``all_parameters()``), so everything in fw that takes a program
takes it. The default startup program stays empty: fw initialises parameters
eagerly when they are created, and a program reads them when it runs.
"""

from __future__ import annotations

import contextlib

from fw.core import dtypes as _dt
from fw.core.errors import InvalidArgumentError
from fw.core.ir.core import Program as _IRProgram
from fw.core.ir.core import Value
from fw.core.ir.types import TensorType

__all__ = ["Program", "program_guard", "default_main_program", "default_startup_program",
           "data", "as_static_program", "Block", "Scope", "global_scope", "scope_guard"]


class Block:
    """Paddle's view of a block: ``ops``, ``vars`` (name -> Value), ``var(name)``,
    ``all_parameters()``; ``idx`` is its index in the program."""

    def __init__(self, program, block, idx):
        self.program = program
        self.block = block
        self.idx = idx

    @property
    def ops(self) -> list:
        return list(self.block.ops)

    @property
    def vars(self) -> dict:
        out = {}
        for v in _block_values(self.block):
            out[v.name] = v
        return out

    def var(self, name: str) -> Value:
        v = self.vars.get(name)
        if v is None:
            raise ValueError(f"block {self.idx} has no variable named {name!r}")
        return v

    def has_var(self, name: str) -> bool:
        return name in self.vars

    def all_parameters(self) -> list:
        return [a for a in self.block.args if a.role == "param"]

    def __repr__(self) -> str:
        return f"<Block {self.idx}: {len(self.block.ops)} ops>"


def _block_values(block):
    yield from block.args
    for op in block.ops:
        yield from op.results


class Program(_IRProgram):
    """A static program (Paddle's ``paddle.static.Program``): the ops and variables
    that ``fw.static`` code adds under `program_guard`, run by `Executor`.

    Examples:
        >>> import fw
        >>> p = fw.static.Program()
        >>> with fw.static.program_guard(p):
        ...     x = fw.static.data("x", [None, 4], "float32")
        >>> p.num_blocks, [v.name for v in p.list_vars()]
        (1, ['x'])
    """

    def __init__(self):
        super().__init__()
        self.random_seed = 0

    def global_block(self) -> Block:  # a method, as in Paddle
        """Block 0 of the program (a method, as in Paddle).

        Returns:
            Block: the global block.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> main.global_block().idx
            0
        """
        return Block(self, self.block, 0)

    def get_block(self, index: int) -> Block:
        """Block `index` (0: the global block; nested blocks of cond/while follow in
        print order). (``program.block`` itself is block 0 of the IR.)

        Args:
            index (int): the block index.

        Returns:
            Block: that block; IndexError when out of range.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> main.get_block(0).idx
            0
        """
        blocks = self.all_blocks()
        if not 0 <= index < len(blocks):
            raise IndexError(f"the program has {len(blocks)} blocks, asked for block {index}")
        return Block(self, blocks[index], index)

    def current_block(self) -> Block:
        """The block ops are being added to: the global block.

        Returns:
            Block: the current block.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> main.current_block().idx
            0
        """
        return self.global_block()

    @property
    def num_blocks(self) -> int:
        """The number of blocks (see `all_blocks`).

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> main.num_blocks
            1
        """
        return len(self.all_blocks())

    def list_vars(self):
        """Every variable (block arguments and op results) of every block.

        Returns:
            iterator of Variable: the variables.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> [v.shape for v in main.list_vars()][:3]
            [[-1, 4], [4, 2], [2]]
        """
        for b in self.all_blocks():
            yield from _block_values(b)

    def all_parameters(self) -> list:
        """The trainable parameters of the program.

        Returns:
            list[Variable]: the parameters.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> [p.shape for p in main.all_parameters()]
            [[4, 2], [2]]
        """
        return [a for a in self.block.args if a.role == "param"]

    def clone(self, for_test: bool = False) -> Program:
        """A copy (same parameters). With ``for_test`` the state updates (optimizer
        steps, running statistics) are dropped, as Paddle prunes the optimizer.

        Args:
            for_test (bool, optional): drop the state updates. Default: False.

        Returns:
            Program: the copy.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> test_prog = main.clone(for_test=True)
            >>> [v.name for v in test_prog.inputs()]
            ['x']
        """
        p = as_static_program(_IRProgram.clone(self))
        if for_test:
            p.updates.clear()
        return p

    def state_dict(self, mode="all", scope=None) -> dict:
        """The captured parameters/constants by label.

        Args:
            mode (str, optional): accepted for Paddle's API (all are returned). Default: "all".
            scope (Scope, optional): accepted for Paddle's API. Default: None.

        Returns:
            dict: name -> Tensor.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> sorted(v.shape for v in main.state_dict().values())
            [[2], [4, 2]]
        """
        return dict(self.captured)


def as_static_program(p) -> Program:
    """`p` (an IR Program) as a `fw.static.Program` (the same object, re-classed)."""
    if not isinstance(p, Program):
        p.__class__ = Program
        if not hasattr(p, "random_seed"):
            p.random_seed = 0
    return p


_MAIN = [Program()]
_STARTUP = [Program()]


def default_main_program() -> Program:
    """The program that `data` and static ops build into.

    It is a fresh global program unless `program_guard` made another current.

    Returns:
        Program: the current main program.

    Examples:
        >>> import fw
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     same = fw.static.default_main_program() is prog
        >>> same
        True
    """
    return _MAIN[0]


def default_startup_program() -> Program:
    """The startup program (Paddle runs parameter initialisers in it).

    fw initialises parameters eagerly, so it holds no ops and running it does nothing;
    it exists so Paddle code that runs it works unchanged.

    Returns:
        Program: the current startup program.

    Examples:
        >>> import fw
        >>> exe = fw.static.Executor()
        >>> exe.run(fw.static.default_startup_program())
        []
    """
    return _STARTUP[0]


@contextlib.contextmanager
def program_guard(main_program, startup_program=None):
    """Make `main_program` (and `startup_program`) the default programs inside the
    ``with`` block; ops on its variables build it (also outside static mode).

    Args:
        main_program (Program): the program ops build into.
        startup_program (Program, optional): the startup program. Default: None (keep
            the current one).

    Returns:
        A context manager.

    Examples:
        >>> import fw
        >>> prog = fw.static.Program()
        >>> with fw.static.program_guard(prog):
        ...     x = fw.static.data("x", [None, 2], "float32")
        ...     y = x + 1
        >>> [v.name for v in prog.list_vars()][:1]
        ['x']
    """
    if not isinstance(main_program, _IRProgram):
        raise TypeError(f"program_guard: main_program must be a Program, got "
                        f"{type(main_program).__name__}")
    if startup_program is not None and not isinstance(startup_program, _IRProgram):
        raise TypeError(f"program_guard: startup_program must be a Program, got "
                        f"{type(startup_program).__name__}")
    from fw.core.internal import build_state
    from fw.static._mode import _implicit

    prev = (_MAIN[0], _STARTUP[0], build_state.implicit)
    _MAIN[0] = as_static_program(main_program)
    if startup_program is not None:
        _STARTUP[0] = as_static_program(startup_program)
    build_state.implicit = _implicit
    try:
        yield
    finally:
        _MAIN[0], _STARTUP[0], build_state.implicit = prev


def data(name, shape, dtype=None, lod_level=0):
    """Declare an input variable of the default main program.

    ``None`` or ``-1`` dimensions take any size at run time; the executor's `feed` gives
    the value under `name`.

    Args:
        name (str): the input's name (the key of ``Executor.run``'s `feed`).
        shape (list|tuple): the shape; None or -1 for a dimension of any size.
        dtype (str|fw.dtype, optional): the element type. Default: None (the default
            dtype, float32).
        lod_level (int, optional): must be 0 (LoD tensors are not supported). Default: 0.

    Returns:
        Variable: the symbolic input.

    Examples:
        >>> import fw
        >>> with fw.static.program_guard(fw.static.Program()):
        ...     x = fw.static.data("x", [None, 3])
        >>> x.shape, x.dtype
        ([-1, 3], fw.float32)
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"data: 'name' must be a non-empty str, got {name!r}")
    if lod_level:
        raise InvalidArgumentError("data: lod_level > 0 (LoD tensors) is not supported by fw")
    dims = []
    for d in shape:
        if d is None:
            dims.append(-1)
        else:
            dims.append(int(d))
    d = _dt.get_default_dtype() if dtype is None else _dt.convert_dtype(dtype)
    prog = default_main_program()
    # declaring a name again adds another input (as Paddle does); a run feeds every
    # input of that name the array given for it
    v = prog.block.add_arg(TensorType(dims, d), "input", name)
    v._sg = True
    prog.touch()
    return v


class _Var:
    """A scope variable: ``get_tensor()`` gives the tensor (or a holder that `set`
    fills, for a variable the scope created)."""

    def __init__(self, t):
        self._t = t

    def get_tensor(self):
        return self._t if self._t is not None else _Holder(self)


class _Holder:
    """Paddle's LoDTensor-style holder of a scope variable: ``set(array, place)``
    stores the value, ``np.array(holder)`` reads it."""

    def __init__(self, var):
        self._var = var

    def set(self, value, place=None):
        import numpy as np

        from fw.core.tensor import wrap

        self._var._t = wrap(np.array(value))

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        if self._var._t is None:
            raise ValueError("the scope variable holds no value yet (call set first)")
        return np.asarray(self._var._t.numpy(), dtype=dtype)


class Scope:
    """A name-to-tensor table for Paddle code that reads parameters by name.

    ``find_var(name).get_tensor()`` finds a parameter or a constant captured by the
    default main program (by its label or tensor name); ``var(name)`` finds it or creates
    a scope variable that ``get_tensor().set(array, place)`` fills.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> scope = fw.static.Scope()
        >>> scope.var("w").get_tensor().set(np.ones(2, "float32"), fw.CPUPlace())
        >>> np.array(scope.find_var("w").get_tensor()).tolist()
        [1.0, 1.0]
    """

    def __init__(self):
        self._own: dict = {}

    def find_var(self, name):
        """The variable `name`: one created in this scope, else a parameter or constant
        of the default main or startup program.

        Args:
            name (str): the variable name.

        Returns:
            the variable (``.get_tensor()`` gives its value), or None.

        Examples:
            >>> import fw
            >>> fw.static.global_scope().find_var("no_such_variable") is None
            True
        """
        own = self._own.get(name)
        if own is not None:
            return own
        for prog in (default_main_program(), default_startup_program()):
            t = prog.captured.get(name)
            if t is None:
                for x in prog.captured.values():
                    if getattr(x, "name", None) == name:
                        t = x
            if t is not None:
                return _Var(t)
        return None

    def var(self, name):
        """The variable `name` (see `find_var`), created empty in this scope when it does
        not exist.

        Args:
            name (str): the variable name.

        Returns:
            the variable.

        Examples:
            >>> import fw
            >>> scope = fw.static.Scope()
            >>> v = scope.var("counter")
            >>> scope.find_var("counter") is v
            True
        """
        v = self.find_var(name)
        if v is None:
            v = self._own[name] = _Var(None)
        return v


_SCOPE = [Scope()]


def global_scope() -> Scope:
    """The current scope: the global one, or the one `scope_guard` made current.

    Returns:
        Scope: the current scope.

    Examples:
        >>> import fw
        >>> isinstance(fw.static.global_scope(), fw.static.Scope)
        True
    """
    return _SCOPE[0]


@contextlib.contextmanager
def scope_guard(scope):
    """Make `scope` the one `global_scope` returns inside the ``with`` block.

    Args:
        scope (Scope): the scope.

    Returns:
        A context manager.

    Examples:
        >>> import fw
        >>> scope = fw.static.Scope()
        >>> with fw.static.scope_guard(scope):
        ...     inside = fw.static.global_scope() is scope
        >>> inside, fw.static.global_scope() is scope
        (True, False)
    """
    if not isinstance(scope, Scope):
        raise TypeError(f"scope_guard: scope must be a Scope, got {type(scope).__name__}")
    prev = _SCOPE[0]
    _SCOPE[0] = scope
    try:
        yield
    finally:
        _SCOPE[0] = prev
