"""fw.jit — dynamic to static: `to_static`, `save`, `load` (Paddle's ``paddle.jit``).

``@fw.jit.to_static`` converts a function or a Layer's forward into programs of
fw's IR: its source is rewritten so that ``if``/``while``/``for``/``break``/
``return`` on tensors become ``cond``/``while`` ops (Python conditions are
evaluated while tracing), then it is traced with symbolic inputs; programs are
cached per input signature and run by fw-core's executor. Training code
(``loss.backward(); opt.step(); opt.clear_grad()``) becomes one program.
`save` writes a layer or function as a model file; `load` reads it back as a
`TranslatedLayer`. See this package's README for the design.
"""

from fw.jit import _training as _training
from fw.jit._convert_call import ignore_module, not_to_static
from fw.jit._function import ConversionReport, StaticFunction, enable_to_static, to_static
from fw.jit._logging import set_code_level, set_verbosity
from fw.jit._trace import ConcreteProgram
from fw.jit.errors import ConversionError
from fw.jit.input_spec import InputSpec
from fw.jit.save_load import TranslatedLayer, load, save

_training.install()

__all__ = ["to_static", "not_to_static", "ignore_module", "enable_to_static", "InputSpec",
           "StaticFunction", "ConcreteProgram", "ConversionReport", "ConversionError", "save",
           "load", "TranslatedLayer", "set_verbosity", "set_code_level"]
