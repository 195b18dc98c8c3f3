"""fw.core.ir — programs, their text form, passes, the executor and the model file.

Public entry points (later packages and tests rely on these names):
`TensorType(shape, dtype)`, `trace(fn, input_types) -> Program`, `str(program)`,
`parse(text) -> Program`, `run(program, *inputs) -> outputs`,
`save(program, path, params=None)` / `load(path)`, `verify(program)`.
"""

from fw.core.ir.builder import Builder, building, clone_block, clone_ops, no_building, trace
from fw.core.ir.core import Block, Operation, Program, Value, current_builder
from fw.core.ir.printer import print_program
from fw.core.ir.types import DYN, TensorType

__all__ = ["TensorType", "DYN", "Program", "Block", "Operation", "Value", "Builder", "trace",
           "building", "no_building", "clone_ops", "clone_block", "current_builder",
           "print_program"]

try:  # filled in as the parser/executor/serializer land
    from fw.core.ir.parser import parse  # noqa: F401

    __all__.append("parse")
except ImportError:  # pragma: no cover
    pass
try:
    from fw.core.ir.verifier import verify  # noqa: F401

    __all__.append("verify")
except ImportError:  # pragma: no cover
    pass
try:
    from fw.core.ir.executor import run  # noqa: F401

    __all__.append("run")
except ImportError:  # pragma: no cover
    pass
try:
    from fw.core.ir.serialize import load, save  # noqa: F401

    __all__ += ["save", "load"]
except ImportError:  # pragma: no cover
    pass
