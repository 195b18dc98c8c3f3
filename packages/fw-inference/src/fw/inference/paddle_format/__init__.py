"""Models exported by Paddle (``paddle.jit.save``), loaded as fw programs.

Two program formats, each with a ``.pdiparams`` weights file beside it:

- Paddle 3 (PIR): ``prefix.json`` (`pir_json`);
- Paddle 2.x: ``prefix.pdmodel``, a ProgramDesc protobuf (`pdmodel`).

Both are read as data (JSON, a hand-written protobuf wire reader, a tensor
stream reader: `pdiparams`) into a `PaddleGraph`, then turned into an fw-core
`Program` by the per-op entries of `ops.OPS` (`convert`). Nothing in the files is
executed; sizes are held to the config's `LoadLimits`; anything malformed raises
``ModelFormatError`` naming the file, and ops without an entry raise
`UnknownPaddleOpError` listing all of them.

`resolve` recognises Paddle Inference's ways of naming a model (Paddle 3.3):
``Config(prefix + ".json", prefix + ".pdiparams")``,
``Config(prog_file, params_file)`` with a ``.pdmodel``, ``Config(model_dir,
prefix)``, and fw's ``Config(prefix)``.
"""

from __future__ import annotations

import os

from fw.inference.paddle_format.convert import UnknownPaddleOpError, to_program

__all__ = ["resolve", "load_paddle_model", "UnknownPaddleOpError", "PROGRAM_SUFFIXES"]

PROGRAM_SUFFIXES = (".json", ".pdmodel")
PARAMS_SUFFIX = ".pdiparams"


def resolve(model_path, params_path):
    """``(program file, params file)`` when the paths name a Paddle model, else None
    (an fw model, or nothing there yet)."""
    if model_path is None:
        return None
    m, p = os.fspath(model_path), None if params_path is None else os.fspath(params_path)
    if os.path.isdir(m) and p is not None and not os.path.isfile(p):
        # Config(model_dir, prefix)
        for suffix in PROGRAM_SUFFIXES:
            prog = os.path.join(m, p + suffix)
            if os.path.isfile(prog):
                return prog, os.path.join(m, p + PARAMS_SUFFIX)
        return None
    if os.path.isfile(m):
        if m.endswith(PROGRAM_SUFFIXES):
            return m, p if p is not None else os.path.splitext(m)[0] + PARAMS_SUFFIX
        return None
    if not os.path.exists(m + ".fwmodel"):  # Config(prefix)
        for suffix in PROGRAM_SUFFIXES:
            if os.path.isfile(m + suffix):
                return m + suffix, p if p is not None else m + PARAMS_SUFFIX
    return None


def load_paddle_model(config):
    """``(program, program file)`` for a config naming a Paddle model, else None."""
    found = resolve(config._model_path, config._params_path)
    if found is None:
        return None
    prog, params = found
    return read(prog, params, config.model_limits()), prog


def read(prog, params, limits):
    """The fw `Program` of Paddle program file `prog` with the weights of `params`."""
    from fw.core.ir.serialize import ModelFormatError, ModelLimitError
    from fw.inference.paddle_format.pdiparams import read_pdiparams

    def failer(path):
        def fail(msg):
            return ModelFormatError(f"{path}: {msg}")

        def over(what, n, limit, name):
            return ModelLimitError(
                f"{path}: {what} ({n}) exceeds the limit {name}={limit}; if the file is "
                f"trusted, raise it: config.set_model_limits({name}=...)", name)

        return fail, over

    if not os.path.isfile(prog):
        raise FileNotFoundError(f"no Paddle program file at {prog!r}")
    if not os.path.isfile(params):
        raise FileNotFoundError(f"no Paddle params file at {params!r} (the weights "
                                f"paddle.jit.save writes beside {os.path.basename(prog)!r})")
    with open(prog, "rb") as f:
        head = f.read(1)
    if prog.endswith(".json") or head == b"{":
        from fw.inference.paddle_format.pir_json import read_pir_json

        graph = read_pir_json(prog, limits, *failer(prog))
    else:
        from fw.inference.paddle_format.pdmodel import read_pdmodel

        graph = read_pdmodel(prog, limits, *failer(prog))
    weights = read_pdiparams(params, [n for n, _, _ in graph.params], limits, *failer(params))
    fail = failer(params)[0]
    for name, _, spec in graph.params:
        w = weights[name]
        if spec is not None and (w.dtype.name != spec.dtype or list(w.shape) != list(
                spec.shape)):
            raise fail(f"tensor {name!r} is {w.dtype.name}{list(w.shape)}, the program "
                       f"{os.path.basename(prog)!r} declares {spec.dtype}{list(spec.shape)}")
    return to_program(graph, weights)
