"""Control-flow ops: ``cond`` and ``while``. They hold nested blocks, so they are
built by `fw.core.ir.control` (not through `invoke`) and run by the executor,
which gives them their semantics:

- ``%r... = cond(%pred) { block then () {... yield a...}  block else () {... yield b...} }``
  runs one block; both yield values of the same types (dims that differ are -1).
- ``%r... = while(%v0, ...) { block cond (%v...) {... yield %flag}
  block body (%v...) {... yield %v'...} }`` carries values through the body while
  the cond block yields a true scalar. Its one attribute, ``records_iterations``,
  only labels the loops that fw-autograd's static backward emits to record each
  iteration's values (so it can refuse to differentiate those again); the
  executor runs every while alike.
"""

from __future__ import annotations

from fw.core.errors import UnsupportedError
from fw.core.ops._registry import defop


def _built_elsewhere(name):
    def fn(*_a, **_k):
        raise UnsupportedError(f"{name} holds nested blocks: build it with "
                               f"fw.core.ir.control.{'cond' if name == 'cond' else 'while_loop'} "
                               f"(fw.static.nn.{'cond' if name == 'cond' else 'while_loop'}); "
                               f"the executor runs it")
    return fn


defop("cond", ("pred",), outputs=(), infer=_built_elsewhere("cond"),
      reference=_built_elsewhere("cond"), promote=None, api=False, method=False,
      family="control", doc="Run one of two nested blocks on a boolean scalar.")
defop("while", ("loop_vars*",), {"records_iterations": False}, outputs=(),
      infer=_built_elsewhere("while"),
      reference=_built_elsewhere("while"), promote=None, api=False, method=False,
      family="control", doc="Carry values through a body block while a cond block is true.")
