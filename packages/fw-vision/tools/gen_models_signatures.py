"""Record the signatures of paddle.vision.models' constructors (argument names, kinds
and defaults) with real Paddle into tests/fixtures/models_signatures.json (run once,
by hand; CI never needs Paddle):

    /path/to/python-with-paddle packages/fw-vision/tools/gen_models_signatures.py

tests/test_models_api.py checks that fw.vision.models' constructors have the same.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def signature_of(obj) -> list[list]:
    """[[name, kind, repr(default) or None], ...] (classes: their __init__ without self)."""
    sig = inspect.signature(obj)
    return [[p.name, p.kind.name, None if p.default is inspect.Parameter.empty
             else repr(p.default)] for p in sig.parameters.values()]


def main() -> int:
    import paddle.vision.models as m

    out = {name: signature_of(getattr(m, name)) for name in sorted(m.__all__)}
    path = HERE.parent / "tests" / "fixtures" / "models_signatures.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
