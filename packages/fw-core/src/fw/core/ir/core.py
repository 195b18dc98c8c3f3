"""The IR: Program > Block > Operation, with SSA `Value`\\ s.

- A `Value` has a static `TensorType`. It is either an operation result or a
  block argument. Block 0's arguments are the program's inputs (role ``input``),
  its parameters (role ``param``: named persistable values, trainable) and its
  captured constants (role ``const``: named persistable values, not trained).
- An `Operation` names an op of the op table, refers to operand Values (None for
  an absent optional input), holds attributes, and owns nested `Block`\\ s for
  control flow (``cond``: then/else; ``while``: cond/body). A nested block can
  use any value that dominates it (the regions of MLIR), and ends with ``yield``.
- A `Value` is also what user code holds while a function is traced: it has the
  Tensor API (``x.shape``, ``x + y``, ``x.sum()``), and every fw op called on it
  emits an operation into the block being built instead of computing.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from fw.core.ir.types import TensorType

__all__ = ["Value", "Operation", "Block", "Program", "StateUpdates", "current_builder",
           "value_hooks"]

_ids = itertools.count()


class Value:
    """An SSA value (symbolic tensor): what ``fw.static.data`` and the ops of a program
    being built return (``fw.static.Variable``). It has a static type (shape with -1
    for dynamic dimensions, dtype) but no values until an executor runs the program.

    Args:
        type_ (TensorType): the shape and dtype.
        owner (Operation|Block, optional): the op whose result it is, or the block
            whose argument it is. Default: None.
        index (int, optional): its position among the owner's results or arguments.
            Default: 0.
        role (str, optional): ``"result"``, ``"arg"``, ``"input"``, ``"param"`` or
            ``"const"``. Default: ``"result"``.
        label (str, optional): the input or parameter name. Default: None.

    Examples:
        >>> import fw
        >>> main = fw.static.Program()
        >>> with fw.static.program_guard(main):
        ...     x = fw.static.data("x", [None, 4], "float32")
        >>> isinstance(x, fw.static.Variable), x.shape
        (True, [-1, 4])
    """

    __slots__ = ("type", "owner", "index", "role", "label", "_sg", "_id", "__weakref__",
                 "__dict__")

    def __init__(self, type_: TensorType, owner=None, index: int = 0, role: str = "result",
                 label: str | None = None):
        self.type = type_
        self.owner = owner  # Operation (result) or Block (argument)
        self.index = index
        self.role = role  # result | arg | input | param | const
        self.label = label  # input name, or the parameter/constant name
        self._sg = role not in ("param",)
        self._id = next(_ids)

    # tensor-like metadata
    @property
    def shape(self) -> list:
        """The static shape (-1 for a dynamic dimension).

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.shape
            [-1, 4]
        """
        return list(self.type.shape)

    @property
    def dtype(self):
        """The element dtype.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.dtype
            fw.float32
        """
        return self.type.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.ndim
            2
        """
        return len(self.type.shape)

    def dim(self) -> int:
        """The number of dimensions (same as `ndim`).

        Returns:
            int: the rank.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.dim()
            2
        """
        return len(self.type.shape)

    @property
    def size(self) -> int:
        """The number of elements; -1 when a dimension is dynamic.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.size
            -1
        """
        return self.type.numel()

    @property
    def name(self) -> str:
        """The variable's name (the input or parameter name; ``%<id>`` for an
        intermediate result). Assignable.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.name
            'x'
        """
        return self.label if self.label is not None else f"%{self._id}"

    @name.setter
    def name(self, v):
        self.label = v

    @property
    def stop_gradient(self) -> bool:
        """Whether gradients stop at this value (True except for parameters). Assignable.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.stop_gradient, main.parameters()[0].stop_gradient
            (True, False)
        """
        return self._sg

    @stop_gradient.setter
    def stop_gradient(self, v):
        self._sg = bool(v)

    @property
    def persistable(self) -> bool:
        """Whether the value lives across runs (a parameter or captured constant).

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.persistable, main.parameters()[0].persistable
            (False, True)
        """
        return self.role in ("param", "const")

    @property
    def is_parameter(self) -> bool:
        """Whether the value is a trainable parameter of the program.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.is_parameter, main.parameters()[0].is_parameter
            (False, True)
        """
        return self.role == "param"

    @property
    def defining_op(self):
        """The operation whose result this is (None for an input or parameter).

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> x.defining_op, y.defining_op.name
            (None, 'add')
        """
        return self.owner if isinstance(self.owner, Operation) else None

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        what = self.role if self.label is None else f"{self.role} {self.label!r}"
        return f"Value({what}: {self.type})"

    def _concrete(self, how):
        """What ``value_hooks.concrete`` gives for a use of this Value that needs its
        value (`how`: "bool", "int", "float", "index", "item", "numpy", "str");
        NotImplemented when no hook takes it (the use then raises)."""
        hook = value_hooks.concrete
        return NotImplemented if hook is None else hook(self, how)

    def __bool__(self):
        from fw.core.errors import UnsupportedError

        r = self._concrete("bool")
        if r is not NotImplemented:
            return r
        raise UnsupportedError(
            f"the truth value of a symbolic tensor ({self.type}) is not known while a program "
            f"is being built; inside fw.jit.to_static, `if`/`while` on tensors are converted to "
            f"cond/while ops — elsewhere use fw.static.nn.cond / while_loop")

    def __len__(self) -> int:
        d = self.type.shape[0] if self.type.shape else None
        if d is None:
            raise TypeError("len() of a 0-D symbolic tensor")
        if d < 0:
            from fw.core.errors import UnsupportedError

            raise UnsupportedError(f"len() of a symbolic tensor whose first dimension is "
                                   f"dynamic ({self.type})")
        return d

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def backward(self, grad_tensor=None, retain_graph=False):
        """``loss.backward()`` inside a program being built: what it means is set by
        the package that traces training code (fw-jit: the gradients of the trainable
        captured parameters are emitted and kept on the builder for ``opt.step()``).
        Outside such tracing it raises UnsupportedError pointing to
        ``fw.static.append_backward``.

        Args:
            grad_tensor (Tensor, optional): the initial gradient. Default: None.
            retain_graph (bool, optional): accepted for dygraph compatibility. Default: False.

        Returns:
            None.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     loss = fw.static.nn.fc(x, 2).mean()
            ...     loss.backward()     # emits the gradient ops into `main`
            >>> len(list(main.walk())) > 3
            True
        """
        hook = value_hooks.backward
        if hook is None:
            from fw.core.errors import UnsupportedError

            raise UnsupportedError(
                "backward() on a symbolic tensor: inside fw.jit.to_static it computes the "
                "parameters' gradients (install fw-jit); in fw.static code use "
                "fw.static.append_backward(loss) or optimizer.minimize(loss)")
        return hook(self, grad_tensor, retain_graph)

    def numpy(self):
        """The value as a NumPy array: a symbolic tensor has none while the program is being
        built (UnsupportedError); fetch it with the executor instead.

        Returns:
            numpy.ndarray: the value, where a hook provides one.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> try:
            ...     x.numpy()
            ... except fw.core.errors.UnsupportedError:
            ...     print("no values yet")
            no values yet
        """
        return self._needs_value("numpy")

    def _needs_value(self, how):
        from fw.core.errors import UnsupportedError

        r = self._concrete(how)
        if r is not NotImplemented:
            return r
        raise UnsupportedError(f"a symbolic tensor ({self.type}) has no values while a program "
                               f"is being built; fetch it from the executor's results instead")

    def tolist(self):
        """The value as a nested list (see `numpy`: not available while building).

        Returns:
            list: the value.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> try:
            ...     x.tolist()
            ... except fw.core.errors.UnsupportedError:
            ...     print("no values yet")
            no values yet
        """
        return self._needs_value("numpy").tolist()

    def item(self, *args):
        """The value as a Python scalar (or element `args` of it); not available while
        building (see `numpy`).

        Args:
            *args (int): an element index, as NumPy's ``item``.

        Returns:
            int|float|bool: the scalar.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> try:
            ...     y.mean().item()
            ... except fw.core.errors.UnsupportedError:
            ...     print("no values yet")
            no values yet
        """
        if args:
            return self._needs_value("numpy")[args]  # (a NumPy array's item(i))
        return self._needs_value("item")

    def __index__(self):
        return self._needs_value("index")

    def __int__(self):
        return self._needs_value("int")

    def __float__(self):
        return self._needs_value("float")

    def __str__(self):
        r = self._concrete("str")
        return self.__repr__() if r is NotImplemented else r


class Operation:
    __slots__ = ("opdef", "operands", "attrs", "results", "blocks", "parent", "loc")

    def __init__(self, opdef, operands, attrs, result_types, blocks=(), loc=None):
        self.opdef = opdef
        self.operands = list(operands)
        self.attrs = dict(attrs)
        self.results = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.blocks = list(blocks)
        for b in self.blocks:
            b.parent = self
        self.parent = None  # the Block holding this operation
        self.loc = loc  # (filename, lineno) of the user code that emitted it

    @property
    def name(self) -> str:
        return self.opdef.name

    def __repr__(self) -> str:
        return f"<Operation {self.name} -> {[str(r.type) for r in self.results]}>"


class Block:
    __slots__ = ("args", "ops", "outputs", "parent", "program")

    def __init__(self, program=None):
        self.args: list = []
        self.ops: list = []
        self.outputs: list = []
        self.parent = None  # the Operation owning this block (None for block 0)
        self.program = program

    def add_arg(self, type_: TensorType, role: str = "arg", label=None) -> Value:
        v = Value(type_, self, len(self.args), role, label)
        self.args.append(v)
        return v

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        if self.program is not None:
            self.program._version += 1
        return op

    def walk(self):
        """Every operation in this block and its nested blocks, in order."""
        for op in self.ops:
            yield op
            for b in op.blocks:
                yield from b.walk()


class StateUpdates:
    """The state updates of a program: after each run, the captured param/const
    labelled ``labels[i]`` is overwritten (in place) with the value ``outputs[i]``
    of block 0. Ordered; one entry per label (setting a label again replaces its
    value). ``outputs`` is a list of Values like a block's, so rewriters treat an
    entry as a use of its value (``(updates, i)`` in `Rewriter.users`)."""

    __slots__ = ("labels", "outputs")

    def __init__(self):
        self.labels: list = []
        self.outputs: list = []

    def set(self, label: str, value) -> None:
        for i, lab in enumerate(self.labels):
            if lab == label:
                self.outputs[i] = value
                return
        self.labels.append(label)
        self.outputs.append(value)

    def get(self, label: str):
        for lab, v in zip(self.labels, self.outputs):
            if lab == label:
                return v
        return None

    def remove(self, label: str) -> None:
        for i, lab in enumerate(self.labels):
            if lab == label:
                del self.labels[i]
                del self.outputs[i]
                return

    def clear(self) -> None:
        self.labels.clear()
        self.outputs.clear()

    def __iter__(self):
        return iter(list(zip(self.labels, self.outputs)))

    def __len__(self) -> int:
        return len(self.labels)

    def __bool__(self) -> bool:
        return bool(self.labels)

    def __repr__(self) -> str:
        return f"StateUpdates({self.labels})"


class Program:
    """A whole program: block 0 plus the values captured for its params/consts.

    ``updates`` (a `StateUpdates`) lists the params/consts the program writes:
    after each run the executor stores each update value into the captured
    tensor, in place (training steps, running statistics)."""

    def __init__(self):
        self.block = Block(self)
        self.captured: dict = {}  # label -> Tensor holding the param/const's value
        self.updates = StateUpdates()
        self._version = 0
        self._compiled = None  # executor cache: (version, schedule)
        self.meta: dict = {}

    # block 0
    @property
    def global_block(self) -> Block:
        return self.block

    def inputs(self) -> list:
        """The program's feed inputs (block arguments of role ``input``).

        Returns:
            list[Value]: the inputs.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> [v.name for v in main.inputs()]
            ['x']
        """
        return [a for a in self.block.args if a.role == "input"]

    def params(self) -> list:
        """The captured parameters and constants.

        Returns:
            list[Value]: the values.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> [v.shape for v in main.params()]
            [[4, 2], [2]]
        """
        return [a for a in self.block.args if a.role in ("param", "const")]

    def parameters(self) -> list:
        """The captured trainable parameters.

        Returns:
            list[Value]: the parameters.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> [v.shape for v in main.parameters()]
            [[4, 2], [2]]
        """
        return [a for a in self.block.args if a.role == "param"]

    @property
    def outputs(self) -> list:
        """The values the program returns (set when a function is traced; empty for a
        program built with ``fw.static``).

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> main.outputs
            []
        """
        return self.block.outputs

    def walk(self):
        """Every operation of the program, nested blocks included, in order.

        Returns:
            iterator of Operation: the ops.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> [op.name for op in main.walk()][-2:]
            ['matmul', 'add']
        """
        return self.block.walk()

    def all_blocks(self):
        """Block 0 followed by the nested blocks of control-flow ops.

        Returns:
            list[Block]: the blocks.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> len(main.all_blocks())
            1
        """
        out = [self.block]
        for op in self.block.walk():
            out.extend(op.blocks)
        return out

    def touch(self) -> None:
        """Mark the program changed (invalidates compiled schedules).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> main = fw.static.Program()
            >>> with fw.static.program_guard(main, fw.static.Program()):
            ...     x = fw.static.data("x", [None, 4], "float32")
            ...     y = fw.static.nn.fc(x, 2)
            >>> main.touch()
        """
        self._version += 1

    def __str__(self) -> str:
        from fw.core.ir.printer import print_program

        return print_program(self)

    def __repr__(self) -> str:
        return (f"<Program: {len(self.inputs())} inputs, {len(self.params())} params, "
                f"{sum(1 for _ in self.walk())} ops>")

    def __eq__(self, other) -> bool:
        return isinstance(other, Program) and str(self) == str(other)

    __hash__ = object.__hash__

    def clone(self) -> Program:
        """An independent copy: new blocks, operations and values with the same
        types, labels, attributes, stop_gradient flags and source locations, sharing
        the captured tensors. Passes may rewrite the copy without touching this
        program; ``str(p.clone()) == str(p)``."""
        p = Program()
        vmap: dict = {}
        _copy_block(self.block, p.block, vmap)
        for label, v in self.updates:
            p.updates.set(label, vmap.get(v, v))
        p.captured = dict(self.captured)
        p.meta = dict(self.meta)
        return p


# ---------------------------------------------------------------- hooks
def _copy_attr(v):
    # attributes are plain data (numbers, strings, dtypes, lists, arrays): copy the
    # containers so that a pass editing the copy's attributes leaves the original
    if isinstance(v, list):
        return [_copy_attr(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy_attr(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return v.copy()
    return v


def _copy_block(src: Block, dst: Block, vmap: dict) -> None:
    """Copy `src`'s arguments, operations (with their nested blocks) and outputs
    into the empty block `dst`, extending `vmap` (original value -> copy)."""
    for a in src.args:
        na = dst.add_arg(a.type, a.role, a.label)
        na._sg = a._sg
        vmap[a] = na
    for op in src.ops:
        blocks = []
        for b in op.blocks:
            nb = Block(dst.program)
            _copy_block(b, nb, vmap)
            blocks.append(nb)
        operands = [None if v is None else vmap.get(v, v) for v in op.operands]
        new = Operation(op.opdef, operands, {k: _copy_attr(v) for k, v in op.attrs.items()},
                        [r.type for r in op.results], blocks, op.loc)
        for r, nr in zip(op.results, new.results):
            nr._sg = r._sg
            vmap[r] = nr
        dst.append(new)
    dst.outputs = [vmap.get(v, v) for v in src.outputs]


class _ValueHooks:
    """Filled in by the packages above fw-core (fw-jit sets them):

    - ``backward(value, grad, retain_graph)`` runs for ``Value.backward()``;
    - ``minimize(optimizer, loss, startup_program, parameters, no_grad_set)`` is
      what ``optimizer.minimize(loss)`` means on a symbolic loss (fw.static):
      optimizers call it when `loss` is a Value;
    - ``optimizer_call(optimizer, method_name, args, kwargs)`` is what an optimizer
      method (``step``, ``clear_grad``, ``minimize``) means while a program is being
      built (`current_builder()` is not None): optimizers call it first and return
      its result unless it returns ``NotImplemented`` (fw.jit.to_static emits the
      update into the program instead of running it).
    - ``concrete(value, how)`` is what a use needing the Value's value means
      (``bool()``, ``int()``, ``float()``, ``__index__``, ``.item()``, ``.numpy()``,
      ``str()``): fw.jit's capture of functions without source computes it and
      makes it a guard; ``NotImplemented`` (or no hook) raises as before.
    """

    __slots__ = ("backward", "minimize", "optimizer_call", "concrete")

    def __init__(self):
        self.backward = None
        self.minimize = None
        self.optimizer_call = None
        self.concrete = None


value_hooks = _ValueHooks()


# ---------------------------------------------------------------- building state
class _BuildState:
    """``builder``: the Builder ops emit into (None: eager). ``implicit``: when set
    (fw.static's static mode), an op called eagerly on a symbolic Value calls
    ``implicit(op, args, attrs)`` to emit it into that Value's program instead of
    raising (see fw.core.dispatch.invoke)."""

    __slots__ = ("builder", "implicit")

    def __init__(self):
        self.builder = None
        self.implicit = None


_state = _BuildState()


def current_builder():
    return _state.builder


_FW_DIRS: tuple = ()


def user_location():
    """(filename, lineno) of the innermost frame outside fw's own packages."""
    global _FW_DIRS
    if not _FW_DIRS:
        # the directories of the `fw` namespace (every installed fw package), read from
        # sys.modules so fw.core never imports the facade
        _FW_DIRS = tuple(list(sys.modules["fw"].__path__))
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_FW_DIRS) and not fn.startswith("<fw"):
            return (fn, f.f_lineno)
        f = f.f_back
    return None
