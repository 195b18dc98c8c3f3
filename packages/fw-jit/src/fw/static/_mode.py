"""Static mode (``fw.enable_static()``) and the builders of static programs.

fw never switches its dispatch to "build everything" globally. In static mode an
op whose arguments include a symbolic Value (from `fw.static.data`, or computed
from one) is emitted into that Value's program; ops on concrete tensors keep
running eagerly (their results are captured as constants when a program uses
them). This is what Paddle static code needs — every op of interest reads a
`data` variable or a parameter — and it keeps eager code around it working
(``fw.enable_static()`` does not break the next eager line).
"""

from __future__ import annotations

from fw.core.errors import InvalidArgumentError
from fw.core.internal import build_state
from fw.core.ir.builder import Builder
from fw.core.ir.core import Operation, Value

__all__ = ["enable_static", "disable_static", "in_dynamic_mode", "in_static_mode",
           "builder_for", "program_of"]

_STATIC = [False]


def program_of(v: Value):
    """The Program that Value `v` belongs to."""
    o = v.owner
    blk = o.parent if isinstance(o, Operation) else o
    while blk is not None and blk.program is None and blk.parent is not None:
        blk = blk.parent.parent
    if blk is None or blk.program is None:
        raise InvalidArgumentError(f"{v!r} does not belong to a program")
    return blk.program


def _builder(program) -> Builder:
    b = program.__dict__.get("_fw_static_builder")
    if b is None:
        b = Builder(program)
        program.__dict__["_fw_static_builder"] = b
    return b


class builder_for:
    """Context manager: emit into the program of Value `v` (its cached builder)."""

    def __init__(self, v):
        self.program = v if not isinstance(v, Value) else program_of(v)

    def __enter__(self):
        self.builder = _builder(self.program)
        return self.builder.__enter__()

    def __exit__(self, *exc):
        return self.builder.__exit__(*exc)


def _implicit(op, args, attrs):
    """fw-core's hook: an op met a Value while no builder was active."""
    v = _first_value(args)
    with builder_for(v) as b:
        return b.emit(op, args, attrs)


def _first_value(args):
    for a in args:
        if type(a) is Value:
            return a
        if isinstance(a, (list, tuple)):
            v = _first_value(a)
            if v is not None:
                return v
    raise InvalidArgumentError("static mode: no symbolic value among the arguments")


def enable_static() -> None:
    """Enter static mode (Paddle's ``paddle.enable_static``).

    In static mode `fw.static.data` and the ops on its variables build the default main
    program instead of running; `disable_static` leaves it.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fw.enable_static()
        >>> fw.in_dynamic_mode()
        False
        >>> fw.disable_static()
    """
    _STATIC[0] = True
    build_state.implicit = _implicit


def disable_static(place=None) -> None:
    """Leave static mode: ops run eagerly again.

    Args:
        place (Place, optional): accepted for Paddle compatibility. Default: None.

    Returns:
        None.

    Examples:
        >>> import fw
        >>> fw.enable_static()
        >>> fw.disable_static()
        >>> fw.in_dynamic_mode()
        True
    """
    _STATIC[0] = False
    build_state.implicit = None


def in_dynamic_mode() -> bool:
    """Whether ops run eagerly (True unless `enable_static` is in effect).

    Returns:
        bool: True in dynamic (eager) mode.

    Examples:
        >>> import fw
        >>> fw.in_dynamic_mode()
        True
    """
    return not _STATIC[0]


def in_static_mode() -> bool:
    """Whether `enable_static` is in effect (the opposite of `in_dynamic_mode`).

    Returns:
        bool: True in static mode.

    Examples:
        >>> import fw
        >>> fw.static.in_static_mode()
        False
    """
    return _STATIC[0]
