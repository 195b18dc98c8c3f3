"""Program passes: the `Pass` API, the registry by name, and the `PassManager`.

A pass is a class with a ``name`` and ``run(program) -> bool`` (True when it
changed the program), registered with `register_pass`::

    from fw.core.ir.passes import Pass, register_pass
    from fw.core.ir.passes.rewrite import apply_patterns

    @register_pass
    class DropDoubleNeg(Pass):
        name = "drop_double_neg"

        def run(self, program):
            return apply_patterns(program, {"neg": _double_neg})

`PassManager(["algebraic_simplify", "constant_folding", "cse", "dce"])` runs
passes (by name, as instances, or a pipeline name from `PIPELINES`) in order,
verifies the program after every pass (`fw.core.ir.verify`; a pass that breaks
the program is named in the error), and can dump the program text after each
pass to a directory or a callback. Passes edit the program in place; the
`Rewriter` and `apply_patterns` in `fw.core.ir.passes.rewrite` do the
bookkeeping (use lists, insertion, erasure, new constants).

Built-in passes: ``dce``, ``cse``, ``constant_folding``, ``algebraic_simplify``.
Pipelines: ``default`` (all four, simplification first, DCE last) and
``cleanup`` (cse, dce).

``fold_qdq`` (inference, first: before constant folding turns a weight's
``dequantize_linear`` into a float constant) runs a quantize/dequantize program's
quantized convolutions and products on the int8 ops of ``fw.core.ops.int8``.

Fusion passes (they emit the ops of ``fw.core.ops.fused``): ``fold_batch_norm``
(inference only), ``fuse_conv_bias_act``, ``fuse_matmul_bias_act``,
``fuse_elementwise``. Pipeline ``inference``: constant folding and
simplification, then batch-norm folding, then the fusions (product ops first, so
their epilogues are not taken by the elementwise fusion), then
``fold_matmul_scale`` (a scalar multiply after a constant-weight product goes into
its weights), ``fold_linear_chain`` (two constant-weight products with nothing
nonlinear between them become one) and ``merge_parallel_matmul`` (products of one input with several
constant weights become one product and a split), ``fuse_attention`` (a
transformer layer's scaled dot-product attention chain becomes one ``fused_attention``
op over the heads), then ``layout_nhwc``
(convolutions and pooling channel-last, converting only at a region's edges),
``fold_flatten_transpose`` (a region's exit transpose before a flatten into a
classifier becomes a permutation of the classifier's weight rows), the elementwise
fusion, cse and dce.

``cpu_bfloat16`` (inference, opt-in, in no pipeline: ``fw.inference.Config.
enable_mkldnn_bfloat16`` inserts it before ``fuse_elementwise``) runs the constant-weight
products and convolutions in bfloat16 with float32 accumulation on CPUs with native bf16.
"""

from __future__ import annotations

import os
import time

from fw.core.errors import InvalidArgumentError

__all__ = ["Pass", "register_pass", "get_pass", "PASSES", "PIPELINES", "register_pipeline",
           "PassManager", "run_passes"]

PASSES: dict = {}  # name -> Pass subclass
PIPELINES: dict = {
    "default": ("algebraic_simplify", "constant_folding", "cse", "dce"),
    "cleanup": ("cse", "dce"),
    "inference": ("fold_qdq", "constant_folding", "algebraic_simplify", "fold_batch_norm",
                  "fuse_conv_bias_act", "fuse_matmul_bias_act", "fold_matmul_scale",
                  "fold_linear_chain", "merge_parallel_matmul", "fuse_attention",
                  "layout_nhwc", "fold_flatten_transpose", "fuse_elementwise", "cse", "dce"),
}


class Pass:
    """Base of program passes. Subclasses set ``name`` and implement `run`.
    Options are constructor keyword arguments (``get_pass("constant_folding",
    max_bytes=1 << 20)``)."""

    name: str = ""

    def run(self, program) -> bool:
        """Transform `program` in place; return True if it changed."""
        raise NotImplementedError(f"pass {type(self).__name__} does not implement run()")

    def __call__(self, program) -> bool:
        return self.run(program)

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


def register_pass(cls):
    """Class decorator: make a `Pass` subclass available by its ``name``."""
    if not (isinstance(cls, type) and issubclass(cls, Pass)) or not cls.name:
        raise TypeError("register_pass takes a Pass subclass with a non-empty `name`")
    if cls.name in PASSES and PASSES[cls.name] is not cls:
        raise ValueError(f"a pass named {cls.name!r} is already registered "
                         f"({PASSES[cls.name].__module__})")
    PASSES[cls.name] = cls
    return cls


def register_pipeline(name: str, passes) -> None:
    """Name a sequence of pass names (later packages add theirs, e.g. fusion)."""
    PIPELINES[name] = tuple(passes)


def get_pass(name: str, **options) -> Pass:
    """A new instance of the pass registered as `name`."""
    try:
        cls = PASSES[name]
    except KeyError:
        raise InvalidArgumentError(f"no pass named {name!r}; registered passes: "
                                   f"{sorted(PASSES)}, pipelines: {sorted(PIPELINES)}") from None
    return cls(**options)


def _expand(spec) -> list:
    if isinstance(spec, (str, Pass)):
        spec = [spec]
    out = []
    for s in spec:
        if isinstance(s, Pass):
            out.append(s)
        elif isinstance(s, str) and s in PIPELINES and s not in PASSES:
            out.extend(_expand(list(PIPELINES[s])))
        elif isinstance(s, str):
            out.append(get_pass(s))
        else:
            raise InvalidArgumentError(f"PassManager: a pass is a name or a Pass instance, got "
                                       f"{type(s).__name__}")
    return out


class PassManager:
    """Runs passes in order, verifying after each.

    Args:
        passes: a pipeline or pass name, a Pass, or a list of those.
        verify: check the program before the first pass and after every pass.
        dump: None; a directory (``00-input.fw``, ``01-<pass>.fw``, … are written
            there); or a callable ``dump(stage, text)`` called with the stage name
            (``"input"`` or the pass name) and the program text.
        fixpoint: repeat the whole sequence until no pass changes the program (at
            most `max_rounds` times).

    `run(program)` returns True if any pass changed it; ``log`` holds
    ``(pass name, changed, seconds)`` for every pass run.

    >>> import fw
    >>> from fw.core.ir import TensorType, trace
    >>> from fw.core.ir.passes import PassManager
    >>> p = trace(lambda x: (x * 1.0).tanh(), [TensorType([4], "float32")])
    >>> PassManager("default").run(p)
    True
    """

    def __init__(self, passes, verify: bool = True, dump=None, fixpoint: bool = False,
                 max_rounds: int = 10):
        self.passes = _expand(passes)
        self.verify = verify
        self.dump = dump
        self.fixpoint = fixpoint
        self.max_rounds = max_rounds
        self.log: list = []
        self._n = 0

    def _dump(self, stage, program) -> None:
        if self.dump is None:
            return
        text = str(program)
        if callable(self.dump):
            self.dump(stage, text)
        else:
            os.makedirs(self.dump, exist_ok=True)
            with open(os.path.join(self.dump, f"{self._n:02d}-{stage}.fw"), "w",
                      encoding="utf-8") as f:
                f.write(text)
        self._n += 1

    def _check(self, program, after) -> None:
        from fw.core.ir.verifier import VerificationError, problems

        found = problems(program)
        if found:
            body = "\n".join(f"  line {ln}: {m}" if ln else f"  {m}" for ln, m in found)
            what = "the input program is" if after is None else \
                f"pass {after!r} produced a program that is"
            raise VerificationError(f"{what} not valid ({len(found)} problem"
                                    f"{'s' if len(found) > 1 else ''}):\n{body}", found)

    def run(self, program) -> bool:
        self._n = 0
        self._dump("input", program)
        if self.verify:
            self._check(program, None)
        changed_any = False
        for _ in range(self.max_rounds if self.fixpoint else 1):
            changed = False
            for p in self.passes:
                t0 = time.perf_counter()
                c = bool(p.run(program))
                self.log.append((p.name, c, time.perf_counter() - t0))
                if c:
                    program.touch()
                self._dump(p.name, program)
                if self.verify:
                    self._check(program, p.name)
                changed = changed or c
            changed_any = changed_any or changed
            if not changed:
                break
        return changed_any


def run_passes(program, passes="default", **kw) -> bool:
    """``PassManager(passes, **kw).run(program)``."""
    return PassManager(passes, **kw).run(program)


# the built-in passes register themselves on import
from fw.core.ir.passes import (  # noqa: E402,F401  # noqa: E402,F401
    algebraic_simplify,
    constant_folding,
    cpu_bfloat16,
    cse,
    dce,
    fold_batch_norm,
    fold_flatten_transpose,
    fold_linear_chain,
    fold_matmul_scale,
    fold_qdq,
    fuse_attention,
    fuse_conv,
    fuse_elementwise,
    fuse_matmul,
    layout,
    merge_matmul,
)
