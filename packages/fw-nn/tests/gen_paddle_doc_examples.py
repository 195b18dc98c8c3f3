"""Extract the docstring examples of Paddle 3.3.1's paddle.distribution, paddle.signal,
NAdam/RAdam/Rprop/LBFGS and autograd.saved_tensors_hooks/Function into
fixtures/paddle_doc_examples.json (their source only); test_paddle_doc_examples.py runs
them on fw with ``paddle`` aliased to ``fw``. Run once with a Python that has Paddle
(CI never needs it):

    /path/to/paddle-venv/bin/python packages/fw-nn/tests/gen_paddle_doc_examples.py
"""

import doctest
import inspect
import json
import pathlib
import re
import warnings


def targets(paddle):
    return ([(paddle.distribution, n) for n in paddle.distribution.__all__]
            + [(paddle.signal, n) for n in ("stft", "istft")]
            + [(paddle.optimizer, n) for n in ("NAdam", "RAdam", "Rprop", "LBFGS")]
            + [(paddle.autograd, n) for n in ("saved_tensors_hooks", "Function")])


def main():
    warnings.simplefilter("ignore")
    import paddle

    parser = doctest.DocTestParser()
    out = []
    for mod, n in targets(paddle):
        obj = getattr(mod, n)
        objs = [(n, obj)]
        if inspect.isclass(obj):
            objs += [(f"{n}.{k}", v) for k, v in vars(obj).items()
                     if callable(v) or isinstance(v, property)]
        for name, o in objs:
            doc = o.fget.__doc__ if isinstance(o, property) and o.fget else o.__doc__
            if not doc:
                continue
            doc = re.sub(r"#\s*doctest:.*", "", doc)  # Paddle's SKIP/REQUIRES directives
            try:
                exs = parser.get_examples(inspect.cleandoc(doc))
            except ValueError:
                continue
            if exs:
                out.append({"name": f"{mod.__name__}.{name}",
                            "src": "".join(e.source for e in exs)})
    path = pathlib.Path(__file__).resolve().parent / "fixtures" / "paddle_doc_examples.json"
    path.write_text(json.dumps(out, indent=0) + "\n")
    print(f"wrote {len(out)} examples to {path}")


if __name__ == "__main__":
    main()
