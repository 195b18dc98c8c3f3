"""``full_graph=False``: run what cannot be converted eagerly, region by region.

When a function cannot be converted or traced as a whole, it is converted again
in *region form*: each top-level statement of its body becomes a nested function
(sharing the function's variables through ``nonlocal``, like the branches of a
converted ``if``), and the body becomes one call of `fw.jit._runtime.run_regions`, which hands it
to the innermost `RegionRunner`. The regions
are the top-level statements:

- consecutive statements that trace are traced together into one program
  (cached per signature of the variables at their entry: tensors by shape and
  dtype, Python values by value); a group ends after a statement that may
  ``return`` (the return flag is then checked on concrete values);
- a statement is *eager* when it is known to need concrete values without
  running it (it calls ``.numpy()``, ``.item()`` or ``.tolist()``) or when tracing
  it failed (any error: an unconvertible construct, a library that needs arrays);
  it then runs as Python on concrete tensors, with autograd recording as usual,
  and the next statements start a new program. (An error that also happens
  eagerly is the user's and is raised.)

A function whose source is not available (``python -c``, stdin, ``exec``, a
notebook cell whose source was lost) has no statements to split: it is captured
by tracing with graph breaks instead (`fw.jit._segments`). `WholeEager` is left
for a callable without a code object; the report lists it with that cause and
never claims a conversion.

Every eager statement is listed once in ``static_fn.conversion_report`` with its
file, line, text and the reason, and logged once on the ``fw.jit`` logger.
Gradients flow through the whole call: traced groups are autograd nodes
(`fw.jit._program_op`), eager statements record the usual tape.
"""

from __future__ import annotations

import logging

from fw.jit._context import UndefinedVar
from fw.jit._convert_call import CONVERTED_CODE_NAMESPACE, _instantiate
from fw.jit._runtime import _RUNNERS, _truth
from fw.jit._signature import _flatten
from fw.jit._trace import trace_program
from fw.jit._transform import convert_source

__all__ = ["RegionRunner", "WholeEager"]

_log = logging.getLogger("fw.jit")
_REGION_CODE: dict = {}


def _first_line(e: BaseException) -> str:
    text = str(e).strip().split("\n")[0]
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class WholeEager:
    """Runs a `StaticFunction` that cannot be split into regions eagerly, as a
    whole: its source is not available (see the module docstring), or fw.jit runs
    it as written (a lambda, a wrapped or not_to_static function). The fallback
    is in its conversion report."""

    def __init__(self, sf, why, error=None):
        self.sf = sf
        self.first_error = error
        code = sf._function.__code__
        cause = getattr(error, "traced_failure", None) or \
            (_first_line(error) if error is not None else "")
        where = f" at line {error.lineno}" if getattr(error, "lineno", None) else ""
        reason = f"the whole function runs eagerly: {why}" + (
            f"; tracing it as written stopped{where}: {cause}" if cause else "")
        if sf.conversion_report.add_fallback(code.co_filename, code.co_firstlineno,
                                             f"def {code.co_name}(...)", reason):
            _log.warning("fw.jit.to_static(%s, full_graph=False): %s", sf.__qualname__,
                         reason)

    def __call__(self, args, kwargs):
        return self.sf._eager(*args, **kwargs)


class RegionRunner:
    """Runs a `StaticFunction` in region form (see the module docstring)."""

    def __init__(self, sf, error=None):
        self.sf = sf
        fn = sf._function
        entry = _REGION_CODE.get(fn.__code__)
        if entry is None:
            conv = convert_source(fn, CONVERTED_CODE_NAMESPACE, regions=True)
            entry = (conv.fn.__code__, conv.code)
            _REGION_CODE[fn.__code__] = entry
        self.fn = _instantiate(fn, entry[0], CONVERTED_CODE_NAMESPACE)
        self.code = entry[1]
        self.first_error = error
        self.eager = None
        self.cache: dict = {}
        self.at = None

    def __call__(self, args, kwargs):
        _RUNNERS.append(self)
        try:
            if self.sf._instance is not None:
                return self.fn(self.sf._instance, *args, **kwargs)
            return self.fn(*args, **kwargs)
        finally:
            _RUNNERS.pop()

    def _fallback(self, lines, texts, k, reason) -> None:
        fn = self.sf._function.__code__.co_filename
        if self.sf.conversion_report.add_fallback(fn, lines[k], texts[k], reason):
            _log.warning("fw.jit.to_static(%s, full_graph=False): %s:%s runs eagerly (%s): %s",
                         self.sf.__qualname__, fn, lines[k], reason, texts[k])

    def run(self, stmts, get, set_, names, lines, texts, eager, rets):
        n = len(stmts)
        if self.eager is None:
            self.eager = [r is not None for r in eager]
            for k, r in enumerate(eager):
                if r is not None:
                    self._fallback(lines, texts, k, r)
        ret_i = names.index("__fw_ret")
        val_i = names.index("__fw_retval")
        i = 0
        while i < n:
            vals = tuple(get())
            if _truth(vals[ret_i]):
                break
            if self.eager[i]:
                stmts[i]()
                i += 1
                continue
            j = i
            while j < n and not self.eager[j]:
                j += 1
                if rets[j - 1]:
                    break
            leaves: list = []
            parts = [_flatten(v, None, leaves, f"variable {nm!r}", nm, arrays=False)
                     for v, nm in zip(vals, names)]
            tmpl = (tuple, [p[0] for p in parts])
            key = tuple(p[1] for p in parts)
            full_key = (i, j, key)
            cp = self.cache.get(full_key)
            if cp is None or not all(g() for g in cp.guards):
                self.at = i

                def invoke(sargs, skw, i=i, j=j):
                    set_(tuple(sargs[0]))
                    for k in range(i, j):
                        self.at = k
                        stmts[k]()
                    return tuple(get())

                try:
                    cp = trace_program(self.sf, f"{self.sf.__qualname__} (statements "
                                                f"{lines[i]}-{lines[j - 1]})", full_key,
                                       ([tmpl], []), leaves, invoke, strict=False,
                                       graph_breaks=True)
                except Exception as e:  # noqa: BLE001 - any trace failure: run it eagerly
                    k = self.at if self.at is not None else i
                    set_(vals)
                    self.eager[k] = True
                    self._fallback(lines, texts, k, _first_line(e))
                    continue
                self.cache[full_key] = cp
            outs = cp.run([t for t, _, _ in leaves])
            set_(tuple(outs))
            i = j
        out = get()[val_i]
        return None if isinstance(out, UndefinedVar) else out  # fell off the end
