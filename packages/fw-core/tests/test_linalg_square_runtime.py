"""Square-matrix ops check squareness where the shapes are first known. Eagerly that is
`infer`; in a program traced with dynamic dims (`-1`) infer cannot know, so the kernel
must refuse a non-square input at run time, naming the op and the shape, rather than
return a wrong answer or NumPy's error."""

import numpy as np
import pytest

import fw
from fw.core.dispatch import invoke
from fw.core.errors import InvalidArgumentError
from fw.core.ir import TensorType, trace
from fw.core.ops import OPS

SQUARE = {  # op -> extra args after x (attrs are the op's defaults)
    "det": (), "slogdet": (), "inv": (), "cholesky": (), "eig": (), "eigh": (),
    "matrix_power": (), "matrix_exp": (),
}
ATTRS = {"matrix_power": {"n": 2}}


@pytest.mark.parametrize("name", sorted(SQUARE))
@pytest.mark.parametrize("shape", [(2, 3), (4, 3, 2)])
def test_non_square_input_is_refused_at_run_time(name, shape):
    op = OPS[name]
    attrs = dict(op.attrs)
    attrs.update(ATTRS.get(name, {}))
    prog = trace(lambda x: invoke(op, [x], dict(attrs)),
                 [TensorType([-1] * len(shape), fw.float64)])
    x = fw.to_tensor(np.ones(shape))
    shown = ", ".join(map(str, shape))
    with pytest.raises(InvalidArgumentError,
                       match=rf"^{name}: .*'x' must hold square matrices, got shape \[{shown}\]"):
        fw.core.ir.run(prog, x)


@pytest.mark.parametrize("name", sorted(SQUARE))
def test_the_reference_itself_refuses_non_square_input(name):
    op = OPS[name]
    attrs = dict(op.attrs)
    attrs.update(ATTRS.get(name, {}))
    if op.canon is not None:
        attrs = op.canon(attrs)
    with pytest.raises(InvalidArgumentError, match=r"square matrices, got shape \[2, 3\]"):
        op.reference(np.ones((2, 3)), **attrs)
