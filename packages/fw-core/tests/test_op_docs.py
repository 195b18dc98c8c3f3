"""The reference docs of the op-table functions (fw/core/ops/docs/): every documented argument
is an argument of the function and every argument is documented, the rendered docstring is
what ``help(fw.<name>)`` and the Tensor method show, and every example runs as a doctest with
the docs contract's flags (ELLIPSIS | NORMALIZE_WHITESPACE, seeds set, a fresh namespace)."""

from __future__ import annotations

import doctest
import inspect

import numpy as np
import pytest

import fw
from fw.core.ops import OPS
from fw.core.ops import docs as D

DOCS = D.load()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_every_documented_op_exists_and_its_arguments_match():
    assert len(DOCS) > 100
    bad = [p for name, doc in DOCS.items() for p in
           ([f"{name}: no such op"] if name not in OPS else D.problems(OPS[name], doc))]
    assert bad == []


def test_problems_catches_a_wrong_argument_name_and_a_missing_one():
    op = OPS["round"]
    doc = D.Doc(args={"x": "input", "digits": "wrong name"}, returns="Tensor: r",
                examples=">>> import fw")
    found = D.problems(op, doc)
    assert any("'digits'" in p for p in found)
    assert any("'decimals' is not documented" in p for p in found)
    assert D.problems(op, D.Doc(args={"x": "a", "decimals": "b"}, returns="Tensor: r",
                                examples="fw.round(x)"))[0].endswith("'>>> import fw'")


def test_rendered_args_follow_the_signature_and_defaults():
    # the defaults shown are the real ones (inspect.signature of the generated function)
    for name in ("round", "sum", "argmax", "clip"):
        fn = getattr(fw, name)
        doc = inspect.getdoc(fn)
        args = doc[doc.index("Args:"):doc.index("Returns:")]
        for p in inspect.signature(fn).parameters.values():
            assert f"\n    {p.name} (" in args, (name, p.name)
            if p.default is not inspect.Parameter.empty and p.default is not None \
                    and p.name != "name":
                assert f"Default: {p.default!r}." in args.replace("\n", " ").replace(
                    "     ", " ") or isinstance(p.default, tuple), (name, p.name)
        assert "Examples:\n    >>> import fw" in doc


def test_no_rendered_doc_says_optional_twice_or_lacks_a_section():
    for name in DOCS:
        op = OPS[name]
        text = D.render(op, DOCS[name], name, None)
        assert ", optional, optional" not in text, name
        for section in ("\nArgs:\n", "\nReturns:\n", "\nExamples:\n    >>> import fw"):
            assert section in text, (name, section)


def test_method_and_function_share_the_text_and_say_x_is_self():
    assert fw.Tensor.sum.__doc__ == fw.sum.__doc__
    assert "As the method ``Tensor.sum``, x is the tensor itself." in fw.sum.__doc__
    assert "In-place version of ``fw.add``" in fw.Tensor.add_.__doc__
    assert fw.add.__doc__.splitlines()[0] == OPS["add"].doc.splitlines()[0]


def _examples(field):
    for name, doc in DOCS.items():
        if getattr(doc, field):
            yield pytest.param(name, field, id=f"{name}.{field}")


@pytest.mark.parametrize("name,field", [*_examples("examples"), *_examples("inplace")])
def test_example_runs(name, field, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fw.seed(0)
    np.random.seed(0)
    text = getattr(DOCS[name], field)
    test = doctest.DocTestParser().get_doctest(text, {}, f"{name}.{field}", None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
