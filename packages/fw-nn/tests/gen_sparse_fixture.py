"""Record real Paddle 3.3.1's results of `sparse_cases.cases` into
fixtures/sparse_paddle.npz (indices/crows/cols/values/shape of each result). Run once
with a Python that has Paddle (CI never needs it):

    /path/to/paddle-venv/bin/python packages/fw-nn/tests/gen_sparse_fixture.py

Paddle 3.3's CPU build has no kernels for sparse matmul/mv/addmm/masked_matmul (they
raise "Not support CPU kernel"), so those are tested against SciPy instead; the error
each case raised is recorded too.
"""

import json
import pathlib
import sys
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def dump(t) -> dict:
    """A result as plain arrays (shared with the test)."""
    if isinstance(t, bool):
        return {"kind": "bool", "value": np.asarray(t)}
    if t.is_sparse_coo():
        return {"kind": "coo", "indices": t.indices().numpy(), "values": t.values().numpy(),
                "shape": np.asarray(list(t.shape))}
    if t.is_sparse_csr():
        return {"kind": "csr", "crows": t.crows().numpy(), "cols": t.cols().numpy(),
                "values": t.values().numpy(), "shape": np.asarray(list(t.shape))}
    return {"kind": "dense", "values": t.numpy()}


def signatures(paddle) -> dict:
    """Parameter names and plain defaults of every public paddle.sparse callable."""
    import inspect

    mods = {"sparse": paddle.sparse, "sparse.nn": paddle.sparse.nn,
            "sparse.nn.functional": paddle.sparse.nn.functional}
    out = {}
    for key, mod in mods.items():
        for name in sorted(getattr(mod, "__all__", [])):
            obj = getattr(mod, name)
            if not callable(obj):
                continue
            fn = obj.__init__ if inspect.isclass(obj) else obj
            params = []
            for p in inspect.signature(fn).parameters.values():
                if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    continue
                d = p.default
                plain = d is p.empty or isinstance(d, (int, float, str, bool, type(None)))
                params.append([p.name, None if d is p.empty else (d if plain else repr(d)),
                               d is p.empty])
            out[f"{key}.{name}"] = params
    return out


def main():
    import paddle

    sys.path.insert(0, str(HERE))
    from sparse_cases import cases

    warnings.simplefilter("ignore")
    arrays, meta = {}, {"paddle_version": paddle.__version__, "kinds": {}, "errors": {}}
    for name, fn in cases(paddle).items():
        try:
            rec = dump(fn())
        except Exception as e:  # recorded: the test lists what Paddle's CPU build lacks
            meta["errors"][name] = f"{type(e).__name__}: {e}"[:300]
            continue
        meta["kinds"][name] = rec.pop("kind")
        for k, v in rec.items():
            arrays[f"{name}/{k}"] = np.asarray(v)
    meta["signatures"] = signatures(paddle)
    arrays["__meta__"] = np.asarray(json.dumps(meta, sort_keys=True))
    path = HERE / "fixtures" / "sparse_paddle.npz"
    np.savez_compressed(path, **arrays)
    print(f"wrote {path}: {len(meta['kinds'])} cases, {len(meta['errors'])} errors")
    for k, v in meta["errors"].items():
        print(" ", k, v[:120])


if __name__ == "__main__":
    main()
