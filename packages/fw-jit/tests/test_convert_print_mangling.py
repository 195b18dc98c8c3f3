"""print() of tensors under to_static: in the program's top level it prints the values
every run; inside an if/while whose condition is a tensor it prints once, at trace
time, the tensor's type, and the conversion report says so (even one level deep).
And a converted method mangles private attribute names as Python does."""

import numpy as np

import fw


def _top(x):
    y = x * 2
    print("y is", y)
    return y


def _in_branch(x):
    y = x * 2
    if y.sum() > 0:
        print("branch y", y)
        y = y + 1
    return y


def test_print_at_the_top_level_prints_values_each_run(capsys):
    sf = fw.jit.to_static(_top, full_graph=True)
    for v in (1.0, 3.0):
        sf(fw.to_tensor([v]))
        out = capsys.readouterr().out
        assert "y is" in out and f"[{int(2 * v)}.]" in out and "symbolic" not in out
    assert not sf.conversion_report.notes


def test_print_in_a_tensor_branch_prints_its_type_once_and_is_noted(capsys):
    sf = fw.jit.to_static(_in_branch, full_graph=True)
    np.testing.assert_allclose(sf(fw.to_tensor([1.0])).numpy(), [3.0])
    out = capsys.readouterr().out
    assert "branch y Tensor(shape=[1], dtype=float32, symbolic)" in out
    sf(fw.to_tensor([2.0]))
    assert "branch y" not in capsys.readouterr().out  # traced once: no print per run
    notes = sf.conversion_report.notes
    assert len(notes) == 1 and "prints at trace time only" in notes[0][2]


class _Scaled(fw.nn.Layer):
    """A module-level layer (qualname ``_Scaled.forward``) with a private attribute:
    the converted forward must mangle ``self.__scale`` as Python does."""

    def __init__(self):
        super().__init__()
        self.__scale = 3.0

    def forward(self, x):
        if x.sum() > 0:
            return x * self.__scale
        return x - self.__scale


def test_private_attributes_of_a_module_level_class_are_mangled():
    m = _Scaled()
    sm = fw.jit.to_static(m, full_graph=True)
    np.testing.assert_allclose(sm(fw.to_tensor([2.0])).numpy(), [6.0])
    np.testing.assert_allclose(sm(fw.to_tensor([-2.0])).numpy(), [-5.0])


class _Holder:
    pass


_HOLDER = _Holder()
setattr(_HOLDER, "__scale", 3.0)  # a name no class body mangles


def _make_private_reader():
    def read(x):  # qualname `_make_private_reader.<locals>.read`: not a method
        if x.sum() > 0:
            return x * _HOLDER.__scale
        return x - _HOLDER.__scale

    return read


def test_a_nested_function_outside_a_class_mangles_nothing():
    """Python mangles private names only inside a class body; a function nested in
    a function (``<locals>`` in its qualname) reads ``obj.__scale`` as written."""
    read = _make_private_reader()
    np.testing.assert_allclose(read(fw.to_tensor([2.0])).numpy(), [6.0])
    sf = fw.jit.to_static(read, full_graph=True)
    np.testing.assert_allclose(sf(fw.to_tensor([2.0])).numpy(), [6.0])
    np.testing.assert_allclose(sf(fw.to_tensor([-2.0])).numpy(), [-5.0])


def _python_print(x):
    print("tracing", 7)
    return x * 2


def test_print_of_python_values_only_prints_once_at_trace_time(capsys):
    """No tensor among the arguments: an ordinary print while the program is traced
    (a Python side effect, like Paddle's), not an op printing at every run."""
    sf = fw.jit.to_static(_python_print, full_graph=True)
    for v in (1.0, 2.0, 3.0):
        np.testing.assert_allclose(sf(fw.to_tensor([v])).numpy(), [2 * v])
    assert capsys.readouterr().out == "tracing 7\n"
