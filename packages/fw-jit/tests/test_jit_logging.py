"""fw.jit.set_verbosity / set_code_level: what to_static tells about its conversion."""

import logging

import numpy as np
import pytest

import fw
from fw.jit import _logging


@pytest.fixture(autouse=True)
def _reset():
    saved = dict(_logging._state)
    yield
    _logging._state.update(saved)


def _branchy(x):
    if fw.sum(x) > 0:
        y = x * 2
    else:
        y = x - 1
    return y


def test_code_level_shows_the_converted_code(capsys):
    fw.jit.set_code_level(100, also_to_stdout=True)
    f = fw.jit.to_static(_branchy, full_graph=True)
    x = fw.to_tensor(np.array([1.0, -3.0], "float32"))
    np.testing.assert_allclose(f(x).numpy(), _branchy(x).numpy())
    out = capsys.readouterr().out
    assert "converted code of _branchy:" in out
    assert "def _branchy(x):" in out
    assert "if fw.sum(x) > 0:" not in out  # the tensor `if` became a converted call


def test_levels_off_print_nothing(capsys):
    fw.jit.set_code_level(-1, also_to_stdout=True)
    fw.jit.set_verbosity(0, also_to_stdout=True)
    f = fw.jit.to_static(_branchy, full_graph=True)
    f(fw.to_tensor(np.array([1.0], "float32")))
    assert capsys.readouterr().out == ""


def test_verbosity_logs_conversion_and_eager_fallbacks(capsys, caplog):
    fw.jit.set_verbosity(1, also_to_stdout=True)

    def g(x):
        y = x + 1
        print(y.numpy())  # a graph break in the default mode
        return y * 2

    f = fw.jit.to_static(g)
    with caplog.at_level(logging.INFO, logger="fw.jit"):
        r = f(fw.to_tensor(np.array([1.0], "float32")))
    np.testing.assert_allclose(r.numpy(), [4.0])
    out = capsys.readouterr().out
    assert "converting " in out and ".g (" in out
    assert "runs eagerly:" in out
    assert any("converting" in rec.getMessage() for rec in caplog.records)


@pytest.mark.parametrize("call", [lambda: fw.jit.set_verbosity("1"),
                                  lambda: fw.jit.set_code_level(1.5),
                                  lambda: fw.jit.set_verbosity(1, also_to_stdout=1)])
def test_bad_arguments_name_the_function(call):
    with pytest.raises(TypeError, match=r"fw\.jit\.set_(verbosity|code_level)"):
        call()
