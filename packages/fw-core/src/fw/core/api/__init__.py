"""Hand-written Paddle-signature functions, one module per op family.

Most public functions are generated from the op table (`fw.core.ops`); a family
whose Paddle signature is not "inputs then attributes" (lists of tensors,
optional tensor-or-number arguments, several ops behind one name, ...) keeps
its wrappers in ``api/<family>.py``, named like the table module
``ops/<family>.py`` it calls. They register themselves with
`fw.core.ops._api.public`; `fw.core.ops` imports every module listed here after
the table is loaded and before the functions are generated.
"""

from __future__ import annotations

FAMILIES = ("creation", "elementwise", "cumulative", "statistics", "shape", "indexing", "search",
            "linalg", "decomp", "fft", "random", "composite", "tensor_methods",
            "fp8")
