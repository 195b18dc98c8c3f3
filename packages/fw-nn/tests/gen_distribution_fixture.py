"""Record real Paddle 3.3.1's results of `distribution_cases.cases` into
fixtures/distribution_paddle.json (values, shapes and dtypes). Run once with a Python
that has Paddle (CI never needs it):

    /path/to/paddle-venv/bin/python packages/fw-nn/tests/gen_distribution_fixture.py
"""

import json
import pathlib
import sys
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def main():
    import paddle

    sys.path.insert(0, str(HERE))
    from distribution_cases import cases

    warnings.simplefilter("ignore")
    out = {"paddle_version": paddle.__version__, "cases": {}}
    for name, fn in cases(paddle).items():
        try:
            r = fn()
        except Exception as e:  # recorded: fw must fail too, or differ knowingly
            out["cases"][name] = {"error": f"{type(e).__name__}: {e}"[:300]}
            continue
        a = r.numpy()
        rec = {"shape": list(a.shape), "dtype": str(a.dtype)}
        if a.dtype.kind == "c":
            rec["value"] = np.asarray(a.real, np.float64).ravel().tolist()
            rec["imag"] = np.asarray(a.imag, np.float64).ravel().tolist()
        else:
            rec["value"] = np.asarray(a, np.float64).ravel().tolist()
        out["cases"][name] = rec
    path = HERE / "fixtures" / "distribution_paddle.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
