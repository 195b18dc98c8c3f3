"""Reference docs of the elementwise ops (``fw/core/ops/elementwise.py``): their summaries are
the ops' ``doc`` fields; arguments, returns and examples are here (see ``docs/__init__.py``)."""

from dataclasses import replace

from fw.core.ops.docs import Doc

_X = "The input tensor."
_XF = ("The input tensor. Integer and bool inputs are computed in the default float dtype "
       "(``fw.get_default_dtype()``, float32 unless changed).")
_Y = "The second input; broadcast against x (a Python number is allowed)."
_BCAST = ("x and y are broadcast to a common shape (NumPy rules) and promoted to a common "
          "dtype by fw's promotion table; a Python number takes the tensor's dtype.")


def _unary(examples, *, x=_XF, returns="Tensor: the result, with x's shape.", details="",
           inplace=""):
    return Doc(args={"x": x}, returns=returns, examples=examples, details=details,
               inplace=inplace)


def _binary(examples, *, returns="Tensor: the result, with the broadcast shape of x and y.",
            details=_BCAST, x=_X, y=_Y, inplace=""):
    return Doc(args={"x": x, "y": y}, returns=returns, examples=examples, details=details,
               inplace=inplace)


def _compare(op, out):
    return _binary(f"""
>>> import fw
>>> x = fw.to_tensor([1, 2, 3])
>>> y = fw.to_tensor([3, 2, 1])
>>> print(fw.{op}(x, y).numpy())
{out}
""", returns="Tensor: a bool tensor with the broadcast shape of x and y.",
                   details="x and y are broadcast to a common shape; the comparison is done in "
                           f"their promoted dtype. The in-place variant (``x.{op}_(y)``) keeps "
                           "x's dtype in fw (True is stored as 1); Paddle 3.3's turns x into a "
                           "bool tensor.")


DOCS = {
    # ------------------------------------------------------------ arithmetic
    "add": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 3.0])
>>> y = fw.to_tensor([10.0, 20.0, 30.0])
>>> print(fw.add(x, y).numpy())
[11. 22. 33.]
>>> print((x + 1).numpy())
[2. 3. 4.]
>>> fw.add(fw.ones([2, 1]), fw.ones([3])).shape
[2, 3]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> _ = x.add_(fw.to_tensor([0.5, 0.5]))
>>> print(x.numpy())
[1.5 2.5]
"""),
    "subtract": _binary("""
>>> import fw
>>> x = fw.to_tensor([5, 6, 7])
>>> print(fw.subtract(x, fw.to_tensor([1, 2, 3])).numpy())
[4 4 4]
>>> print((x - 1).numpy())
[4 5 6]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([5.0, 6.0])
>>> _ = x.subtract_(fw.to_tensor(1.0))
>>> print(x.numpy())
[4. 5.]
"""),
    "multiply": _binary("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> print(fw.multiply(x, fw.to_tensor([10.0, 100.0])).numpy())
[[ 10. 200.]
 [ 30. 400.]]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> _ = x.multiply_(fw.to_tensor([3.0, 3.0]))
>>> print(x.numpy())
[3. 6.]
"""),
    "divide": _binary("""
>>> import fw
>>> x = fw.to_tensor([1, 2, 3])
>>> y = fw.to_tensor([2, 2, 2])
>>> out = fw.divide(x, y)
>>> print(out.numpy(), out.dtype)
[0.5 1.  1.5] fw.float32
""", details=_BCAST + " Integer inputs give a float result in the default float dtype "
                      "(true division, as NumPy's ``/``; use floor_divide for integer "
                      "division).", inplace="""
>>> import fw
>>> x = fw.to_tensor([1.0, 3.0])
>>> _ = x.divide_(fw.to_tensor(2.0))
>>> print(x.numpy())
[0.5 1.5]
"""),
    "floor_divide": _binary("""
>>> import fw
>>> x = fw.to_tensor([7, -7, 9])
>>> y = fw.to_tensor([2, 2, 4])
>>> print(fw.floor_divide(x, y).numpy())
[ 3 -4  2]
""", details=_BCAST + " The result is rounded toward negative infinity (Python's ``//``); "
                      "an integer division by zero raises an error."),
    "remainder": _binary("""
>>> import fw
>>> x = fw.to_tensor([7, -7, 7])
>>> y = fw.to_tensor([3, 3, -3])
>>> print(fw.remainder(x, y).numpy())
[ 1  2 -2]
>>> print((fw.to_tensor([5.5]) % 2).numpy())
[1.5]
""", details=_BCAST + " The result has the sign of y, as Python's ``%`` (PyTorch's "
                      "``remainder``; C's ``fmod`` keeps the sign of x)."),
    "pow": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 3.0])
>>> print(fw.pow(x, 2).numpy())
[1. 4. 9.]
>>> print(fw.pow(x, fw.to_tensor([3.0, 2.0, 1.0])).numpy())
[1. 4. 3.]
>>> print(fw.pow(fw.to_tensor([2, 3]), 2).numpy())
[4 9]
""", y="The exponent: a tensor broadcast against x, or a Python number.", details=_BCAST),
    "maximum": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 5.0, float("nan")])
>>> y = fw.to_tensor([3.0, 2.0, 1.0])
>>> print(fw.maximum(x, y).numpy())
[ 3.  5. nan]
""", details=_BCAST + " A NaN in either input gives NaN (use fmax to ignore NaN)."),
    "minimum": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 5.0, float("nan")])
>>> y = fw.to_tensor([3.0, 2.0, 1.0])
>>> print(fw.minimum(x, y).numpy())
[ 1.  2. nan]
""", details=_BCAST + " A NaN in either input gives NaN (use fmin to ignore NaN)."),
    "fmax": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 5.0, float("nan")])
>>> y = fw.to_tensor([3.0, 2.0, 1.0])
>>> print(fw.fmax(x, y).numpy())
[3. 5. 1.]
"""),
    "fmin": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 5.0, float("nan")])
>>> y = fw.to_tensor([3.0, 2.0, 1.0])
>>> print(fw.fmin(x, y).numpy())
[1. 2. 1.]
"""),
    "atan2": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 1.0, -1.0])
>>> y = fw.to_tensor([1.0, -1.0, -1.0])
>>> print(fw.atan2(x, y).numpy())
[ 0.7853981  2.3561945 -2.3561945]
""", x="The numerator (the y coordinate of the point).",
                     y="The denominator (the x coordinate of the point), broadcast against x.",
                     returns="Tensor: angles in radians in [-pi, pi], with the broadcast shape."),
    "hypot": _binary("""
>>> import fw
>>> print(fw.hypot(fw.to_tensor([3.0, 5.0]), fw.to_tensor([4.0, 12.0])).numpy())
[ 5. 13.]
"""),
    "logaddexp": _binary("""
>>> import fw
>>> x = fw.to_tensor([0.0, 1000.0])
>>> print(fw.logaddexp(x, fw.to_tensor([0.0, 1000.0])).numpy())
[6.9314718e-01 1.0006932e+03]
"""),
    "copysign": _binary("""
>>> import fw
>>> print(fw.copysign(fw.to_tensor([1.0, -2.0, 3.0]), fw.to_tensor([-1.0, 1.0, -0.0])).numpy())
[-1.  2. -3.]
"""),
    "nextafter": _binary("""
>>> import fw
>>> x = fw.to_tensor([1.0, 1.0], dtype="float64")
>>> out = fw.nextafter(x, fw.to_tensor([2.0, 0.0], dtype="float64"))
>>> print((out - x).numpy())
[ 2.22044605e-16 -1.11022302e-16]
"""),
    "heaviside": _binary("""
>>> import fw
>>> x = fw.to_tensor([-1.5, 0.0, 2.0])
>>> print(fw.heaviside(x, fw.to_tensor([0.5])).numpy())
[0.  0.5 1. ]
""", y="The value taken where x == 0; broadcast against x."),
    "gcd": _binary("""
>>> import fw
>>> print(fw.gcd(fw.to_tensor([12, 18, -4]), fw.to_tensor([8, 0, 6])).numpy())
[ 4 18  2]
""", x="The first integer tensor.", y="The second integer tensor, broadcast against x."),
    "lcm": _binary("""
>>> import fw
>>> print(fw.lcm(fw.to_tensor([4, 6, -3]), fw.to_tensor([6, 0, 5])).numpy())
[12  0 15]
""", x="The first integer tensor.", y="The second integer tensor, broadcast against x."),
    "ldexp": _binary("""
>>> import fw
>>> print(fw.ldexp(fw.to_tensor([1.0, 3.0]), fw.to_tensor([2, 3])).numpy())
[ 4. 24.]
""", y="The integer exponents, broadcast against x."),
    "lerp": Doc(args={"x": "The start values.", "y": "The end values, broadcast against x.",
                      "weight": "The interpolation weight: a tensor broadcast against x and y, "
                                "or a Python float."},
                returns="Tensor: x + weight * (y - x), with the broadcast shape.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([0.0, 10.0])
>>> y = fw.to_tensor([10.0, 20.0])
>>> print(fw.lerp(x, y, 0.25).numpy())
[ 2.5 12.5]
"""),
    "clip": Doc(args={"x": "The input tensor.",
                      "min": ("float|Tensor, optional", "The lower bound; None for no lower "
                                                        "bound."),
                      "max": ("float|Tensor, optional", "The upper bound; None for no upper "
                                                        "bound.")},
                returns="Tensor: x with each element limited to [min, max], with x's shape.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([-2.0, 0.5, 3.0])
>>> print(fw.clip(x, min=-1.0, max=1.0).numpy())
[-1.   0.5  1. ]
>>> print(fw.clip(x, max=0.0).numpy())
[-2.  0.  0.]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([-2.0, 0.5, 3.0])
>>> _ = x.clip_(0.0, 1.0)
>>> print(x.numpy())
[0.  0.5 1. ]
"""),
    # ------------------------------------------------------------ unary arithmetic
    "neg": _unary("""
>>> import fw
>>> print(fw.neg(fw.to_tensor([1.0, -2.0, 0.0])).numpy())
[-1.  2. -0.]
""", x=_X),
    "positive": _unary("""
>>> import fw
>>> print(fw.positive(fw.to_tensor([1, -2])).numpy())
[ 1 -2]
""", x=_X),
    "abs": _unary("""
>>> import fw
>>> print(fw.abs(fw.to_tensor([-1.5, 0.0, 2.0])).numpy())
[1.5 0.  2. ]
>>> print(fw.abs(fw.to_tensor([3 + 4j])).numpy())
[5.]
""", x=_X, returns="Tensor: |x|, with x's shape; real (float32/float64) for complex x.",
        inplace="""
>>> import fw
>>> x = fw.to_tensor([-1.0, 2.0])
>>> _ = x.abs_()
>>> print(x.numpy())
[1. 2.]
"""),
    "sign": _unary("""
>>> import fw
>>> print(fw.sign(fw.to_tensor([-3.0, 0.0, 2.5])).numpy())
[-1.  0.  1.]
""", x=_X),
    "sgn": _unary("""
>>> import fw
>>> print(fw.sgn(fw.to_tensor([3 + 4j, 0j])).numpy())
[0.6+0.8j 0. +0.j ]
""", x=_X),
    "signbit": _unary("""
>>> import fw
>>> print(fw.signbit(fw.to_tensor([-1.0, -0.0, 0.0, 2.0])).numpy())
[ True  True False False]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "square": _unary("""
>>> import fw
>>> print(fw.square(fw.to_tensor([1.0, -2.0, 3.0])).numpy())
[1. 4. 9.]
""", x=_X),
    "exp": _unary("""
>>> import fw
>>> print(fw.exp(fw.to_tensor([0.0, 1.0, 2.0])).numpy())
[1.        2.718282  7.3890557]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0])
>>> _ = x.exp_()
>>> print(x.numpy())
[1.       2.718282]
"""),
    "expm1": _unary("""
>>> import fw
>>> print(fw.expm1(fw.to_tensor([0.0, 1e-10, 1.0], dtype="float64")).numpy())
[0.00000000e+00 1.00000000e-10 1.71828183e+00]
"""),
    "exp2": _unary("""
>>> import fw
>>> print(fw.exp2(fw.to_tensor([0.0, 1.0, 10.0])).numpy())
[1.000e+00 2.000e+00 1.024e+03]
"""),
    "log": _unary("""
>>> import fw
>>> print(fw.log(fw.to_tensor([1.0, 2.718281828, 10.0])).numpy())
[0.        1.        2.3025851]
""", details="Negative inputs give NaN and 0 gives -inf, as in NumPy (without a warning)."),
    "log2": _unary("""
>>> import fw
>>> print(fw.log2(fw.to_tensor([1.0, 2.0, 1024.0])).numpy())
[ 0.  1. 10.]
"""),
    "log10": _unary("""
>>> import fw
>>> print(fw.log10(fw.to_tensor([1.0, 10.0, 1000.0])).numpy())
[0.        1.        3.0000002]
"""),
    "log1p": _unary("""
>>> import fw
>>> print(fw.log1p(fw.to_tensor([0.0, 1e-10, 1.0], dtype="float64")).numpy())
[0.00000000e+00 1.00000000e-10 6.93147181e-01]
"""),
    "sqrt": _unary("""
>>> import fw
>>> print(fw.sqrt(fw.to_tensor([0.0, 4.0, 9.0])).numpy())
[0. 2. 3.]
""", details="Negative real inputs give NaN.", inplace="""
>>> import fw
>>> x = fw.to_tensor([4.0, 16.0])
>>> _ = x.sqrt_()
>>> print(x.numpy())
[2. 4.]
"""),
    "rsqrt": _unary("""
>>> import fw
>>> print(fw.rsqrt(fw.to_tensor([1.0, 4.0, 16.0])).numpy())
[1.   0.5  0.25]
"""),
    "reciprocal": _unary("""
>>> import fw
>>> print(fw.reciprocal(fw.to_tensor([1.0, 2.0, 4.0])).numpy())
[1.   0.5  0.25]
"""),
    "sin": _unary("""
>>> import fw
>>> print(fw.sin(fw.to_tensor([0.0, 0.5235988, 1.5707964])).numpy())
[0.  0.5 1. ]
"""),
    "cos": _unary("""
>>> import fw
>>> print(fw.cos(fw.to_tensor([0.0, 1.0471976, 3.1415927])).numpy())
[ 1.          0.49999997 -1.        ]
"""),
    "tan": _unary("""
>>> import fw
>>> print(fw.tan(fw.to_tensor([0.0, 0.7853982])).numpy())
[0. 1.]
"""),
    "asin": _unary("""
>>> import fw
>>> print(fw.asin(fw.to_tensor([-1.0, 0.0, 0.5])).numpy())
[-1.5707964  0.         0.5235988]
""", details="Inputs outside [-1, 1] give NaN."),
    "acos": _unary("""
>>> import fw
>>> print(fw.acos(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[3.1415927 1.5707964 0.       ]
""", details="Inputs outside [-1, 1] give NaN."),
    "atan": _unary("""
>>> import fw
>>> print(fw.atan(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[-0.7853982  0.         0.7853982]
"""),
    "sinh": _unary("""
>>> import fw
>>> print(fw.sinh(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[-1.1752012  0.         1.1752012]
"""),
    "cosh": _unary("""
>>> import fw
>>> print(fw.cosh(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[1.5430807 1.        1.5430807]
"""),
    "tanh": _unary("""
>>> import fw
>>> print(fw.tanh(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[-0.7615942  0.         0.7615942]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([0.0, 100.0])
>>> _ = x.tanh_()
>>> print(x.numpy())
[0. 1.]
"""),
    "asinh": _unary("""
>>> import fw
>>> print(fw.asinh(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[-0.8813736  0.         0.8813736]
"""),
    "acosh": _unary("""
>>> import fw
>>> print(fw.acosh(fw.to_tensor([1.0, 2.0, 10.0])).numpy())
[0.       1.316958 2.993223]
""", details="Inputs below 1 give NaN."),
    "atanh": _unary("""
>>> import fw
>>> print(fw.atanh(fw.to_tensor([-0.5, 0.0, 0.5])).numpy())
[-0.54930615  0.          0.54930615]
""", details="Inputs outside [-1, 1] give NaN; +-1 give +-inf."),
    "deg2rad": _unary("""
>>> import fw
>>> print(fw.deg2rad(fw.to_tensor([0.0, 90.0, 180.0])).numpy())
[0.        1.5707964 3.1415927]
"""),
    "rad2deg": _unary("""
>>> import fw
>>> print(fw.rad2deg(fw.to_tensor([0.0, 1.5707964, 3.1415927])).numpy())
[  0.  90. 180.]
"""),
    "sigmoid": _unary("""
>>> import fw
>>> print(fw.sigmoid(fw.to_tensor([-2.0, 0.0, 2.0])).numpy())
[0.11920293 0.5        0.880797  ]
"""),
    "sinc": _unary("""
>>> import fw
>>> print(fw.sinc(fw.to_tensor([0.0, 0.5, 1.5])).numpy())
[ 1.          0.63661975 -0.21220659]
"""),
    "floor": _unary("""
>>> import fw
>>> print(fw.floor(fw.to_tensor([-1.5, -0.2, 0.7, 2.0])).numpy())
[-2. -1.  0.  2.]
""", x=_X, inplace="""
>>> import fw
>>> x = fw.to_tensor([1.7, -1.2])
>>> _ = x.floor_()
>>> print(x.numpy())
[ 1. -2.]
"""),
    "ceil": _unary("""
>>> import fw
>>> print(fw.ceil(fw.to_tensor([-1.5, -0.2, 0.7, 2.0])).numpy())
[-1. -0.  1.  2.]
""", x=_X),
    "trunc": _unary("""
>>> import fw
>>> print(fw.trunc(fw.to_tensor([-1.5, -0.2, 0.7, 2.0])).numpy())
[-1. -0.  0.  2.]
""", x=_X),
    "frac": _unary("""
>>> import fw
>>> print(fw.frac(fw.to_tensor([-1.5, 0.25, 2.0])).numpy())
[-0.5   0.25  0.  ]
""", x=_X),
    "round": Doc(args={"x": _X,
                       "decimals": "The number of decimal places to keep (negative rounds to "
                                   "tens, hundreds, ...)."},
                 returns="Tensor: the rounded values, with x's shape and dtype.",
                 details="fw rounds halves away from zero (C's round). Paddle 3.3.1's "
                         "paddle.round, like NumPy and PyTorch, rounds halves to even "
                         "(0.5 -> 0, 2.5 -> 2): the results differ only at exact halves.",
                 examples="""
>>> import fw
>>> print(fw.round(fw.to_tensor([-0.5, 0.5, 1.5, 2.5])).numpy())
[-1.  1.  2.  3.]
>>> print(fw.round(fw.to_tensor([3.14159]), decimals=2).numpy())
[3.14]
"""),
    "erf": _unary("""
>>> import fw
>>> print(fw.erf(fw.to_tensor([-1.0, 0.0, 1.0])).numpy())
[-0.8427008  0.         0.8427008]
"""),
    "erfinv": _unary("""
>>> import fw
>>> print(fw.erfinv(fw.to_tensor([0.0, 0.5, -0.5])).numpy())
[ 0.          0.47693628 -0.47693628]
"""),
    "digamma": _unary("""
>>> import fw
>>> print(fw.digamma(fw.to_tensor([1.0, 2.0, 0.5])).numpy())
[-0.5772157   0.42278433 -1.96351   ]
"""),
    "lgamma": _unary("""
>>> import fw
>>> print(fw.lgamma(fw.to_tensor([1.0, 3.0, 0.5])).numpy())
[0.        0.6931472 0.5723649]
"""),
    "i0": _unary("""
>>> import fw
>>> print(fw.i0(fw.to_tensor([0.0, 1.0, 2.0])).numpy())
[1.        1.2660658 2.2795854]
"""),
    "i0e": _unary("""
>>> import fw
>>> print(fw.i0e(fw.to_tensor([0.0, 1.0, 2.0])).numpy())
[1.         0.4657596  0.30850834]
"""),
    "i1": _unary("""
>>> import fw
>>> print(fw.i1(fw.to_tensor([0.0, 1.0, 2.0])).numpy())
[0.        0.5651591 1.5906368]
"""),
    "i1e": _unary("""
>>> import fw
>>> print(fw.i1e(fw.to_tensor([0.0, 1.0, 2.0])).numpy())
[0.         0.20791042 0.21526928]
"""),
    "polygamma": Doc(args={"x": _XF, "n": "The order of the derivative of digamma (>= 0)."},
                     returns="Tensor: the n-th polygamma function of x, with x's shape.",
                     examples="""
>>> import fw
>>> print(fw.polygamma(fw.to_tensor([1.0, 2.0]), 1).numpy())
[1.644934   0.64493406]
"""),
    # ------------------------------------------------------------ comparison
    "equal": _compare("equal", "[False  True False]"),
    "not_equal": _compare("not_equal", "[ True False  True]"),
    "greater_than": _compare("greater_than", "[False False  True]"),
    "greater_equal": _compare("greater_equal", "[False  True  True]"),
    "less_than": _compare("less_than", "[ True False False]"),
    "less_equal": _compare("less_equal", "[ True  True False]"),
    # ------------------------------------------------------------ logical and bitwise
    "logical_and": _binary("""
>>> import fw
>>> x = fw.to_tensor([True, True, False])
>>> print(fw.logical_and(x, fw.to_tensor([True, False, False])).numpy())
[ True False False]
>>> print(fw.logical_and(fw.to_tensor([2, 0]), fw.to_tensor([1, 1])).numpy())
[ True False]
""", returns="Tensor: a bool tensor with the broadcast shape.",
                           details="Nonzero values count as True; x and y are broadcast."),
    "logical_or": _binary("""
>>> import fw
>>> x = fw.to_tensor([True, True, False])
>>> print(fw.logical_or(x, fw.to_tensor([True, False, False])).numpy())
[ True  True False]
""", returns="Tensor: a bool tensor with the broadcast shape.",
                          details="Nonzero values count as True; x and y are broadcast."),
    "logical_xor": _binary("""
>>> import fw
>>> x = fw.to_tensor([True, True, False])
>>> print(fw.logical_xor(x, fw.to_tensor([True, False, False])).numpy())
[False  True False]
""", returns="Tensor: a bool tensor with the broadcast shape.",
                           details="Nonzero values count as True; x and y are broadcast."),
    "logical_not": _unary("""
>>> import fw
>>> print(fw.logical_not(fw.to_tensor([True, False])).numpy())
[False  True]
>>> print(fw.logical_not(fw.to_tensor([0.0, 2.5])).numpy())
[ True False]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "bitwise_and": _binary("""
>>> import fw
>>> print(fw.bitwise_and(fw.to_tensor([12, 10]), fw.to_tensor([10, 6])).numpy())
[8 2]
""", x="An integer or bool tensor.", y="An integer or bool tensor, broadcast against x."),
    "bitwise_or": _binary("""
>>> import fw
>>> print(fw.bitwise_or(fw.to_tensor([12, 10]), fw.to_tensor([10, 6])).numpy())
[14 14]
""", x="An integer or bool tensor.", y="An integer or bool tensor, broadcast against x."),
    "bitwise_xor": _binary("""
>>> import fw
>>> print(fw.bitwise_xor(fw.to_tensor([12, 10]), fw.to_tensor([10, 6])).numpy())
[ 6 12]
""", x="An integer or bool tensor.", y="An integer or bool tensor, broadcast against x."),
    "bitwise_not": _unary("""
>>> import fw
>>> print(fw.bitwise_not(fw.to_tensor([0, 5, -1])).numpy())
[-1 -6  0]
>>> print(fw.bitwise_not(fw.to_tensor([True, False])).numpy())
[False  True]
""", x="An integer or bool tensor."),
    "bitwise_left_shift": Doc(args={"x": "An integer tensor.",
                                    "y": "The shift counts, broadcast against x.",
                                    "is_arithmetic": "Arithmetic (True) or logical (False) "
                                                     "shift; the same for left shifts."},
                              returns="Tensor: x << y, with the broadcast shape.",
                              examples="""
>>> import fw
>>> print(fw.bitwise_left_shift(fw.to_tensor([1, 3]), fw.to_tensor([2, 1])).numpy())
[4 6]
"""),
    "bitwise_right_shift": Doc(args={"x": "An integer tensor.",
                                     "y": "The shift counts, broadcast against x.",
                                     "is_arithmetic": "True: the sign bit fills in (x >> y); "
                                                      "False: zeros fill in, as for the "
                                                      "unsigned bit pattern."},
                               returns="Tensor: x shifted right by y, with the broadcast shape.",
                               examples="""
>>> import fw
>>> x = fw.to_tensor([-8, 8], dtype="int8")
>>> print(fw.bitwise_right_shift(x, fw.to_tensor([1, 1], dtype="int8")).numpy())
[-4  4]
>>> print(fw.bitwise_right_shift(x, fw.to_tensor([1, 1], dtype="int8"),
...                              is_arithmetic=False).numpy())
[124   4]
"""),
    # ------------------------------------------------------------ tests of values
    "isnan": _unary("""
>>> import fw
>>> print(fw.isnan(fw.to_tensor([1.0, float("nan"), float("inf")])).numpy())
[False  True False]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "isinf": _unary("""
>>> import fw
>>> print(fw.isinf(fw.to_tensor([1.0, float("nan"), -float("inf")])).numpy())
[False False  True]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "isfinite": _unary("""
>>> import fw
>>> print(fw.isfinite(fw.to_tensor([1.0, float("nan"), float("inf")])).numpy())
[ True False False]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "isposinf": _unary("""
>>> import fw
>>> print(fw.isposinf(fw.to_tensor([1.0, float("inf"), -float("inf")])).numpy())
[False  True False]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "isneginf": _unary("""
>>> import fw
>>> print(fw.isneginf(fw.to_tensor([1.0, float("inf"), -float("inf")])).numpy())
[False False  True]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "isreal": _unary("""
>>> import fw
>>> print(fw.isreal(fw.to_tensor([1 + 0j, 1 + 2j])).numpy())
[ True False]
""", x=_X, returns="Tensor: a bool tensor with x's shape."),
    "isclose": Doc(args={"x": "The first tensor.", "y": "The second tensor, broadcast against x.",
                         "rtol": "The relative tolerance.", "atol": "The absolute tolerance.",
                         "equal_nan": "Whether two NaNs count as close."},
                   details="Elements are close when |x - y| <= atol + rtol * |y| (the test is "
                           "not symmetric in x and y, as in NumPy).",
                   returns="Tensor: a bool tensor with the broadcast shape.",
                   examples="""
>>> import fw
>>> x = fw.to_tensor([1.0, 1.0, float("nan")])
>>> y = fw.to_tensor([1.0 + 1e-6, 1.1, float("nan")])
>>> print(fw.isclose(x, y).numpy())
[ True False False]
>>> print(fw.isclose(x, y, equal_nan=True).numpy())
[ True False  True]
"""),
    "allclose": Doc(args={"x": "The first tensor.", "y": "The second tensor, broadcast against x.",
                          "rtol": "The relative tolerance.", "atol": "The absolute tolerance.",
                          "equal_nan": "Whether two NaNs count as close."},
                    returns="Tensor: a 0-D bool tensor: whether isclose holds everywhere.",
                    examples="""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> fw.allclose(x, x + 1e-9).item()
True
>>> fw.allclose(x, x + 0.1).item()
False
"""),
    "equal_all": _binary("""
>>> import fw
>>> x = fw.to_tensor([1, 2])
>>> fw.equal_all(x, fw.to_tensor([1, 2])).item()
True
>>> fw.equal_all(x, fw.to_tensor([1, 2, 3])).item()
False
""", returns="Tensor: a 0-D bool tensor.", details=""),
    # ------------------------------------------------------------ complex numbers
    "real": _unary("""
>>> import fw
>>> print(fw.real(fw.to_tensor([1 + 2j, 3 - 4j])).numpy())
[1. 3.]
""", x=_X, returns="Tensor: the real parts (float32 for complex64, float64 for complex128)."),
    "imag": _unary("""
>>> import fw
>>> print(fw.imag(fw.to_tensor([1 + 2j, 3 - 4j])).numpy())
[ 2. -4.]
""", x=_X, returns="Tensor: the imaginary parts (float32 for complex64, float64 for "
                   "complex128)."),
    "conj": _unary("""
>>> import fw
>>> print(fw.conj(fw.to_tensor([1 + 2j, 3 - 4j])).numpy())
[1.-2.j 3.+4.j]
""", x=_X),
    "angle": _unary("""
>>> import fw
>>> print(fw.angle(fw.to_tensor([1j, -1 + 0j, 1 + 0j])).numpy())
[1.5707964 3.1415927 0.       ]
>>> print(fw.angle(fw.to_tensor([-2.0, 3.0])).numpy())
[3.1415927 0.       ]
""", x=_X, returns="Tensor: the angles in radians (real), with x's shape."),
    # ------------------------------------------------------------ others
    "logit": Doc(args={"x": _XF, "eps": ("float, optional", "If given, x is clipped to [eps, 1 - "
                                                           "eps] first.")},
                 returns="Tensor: log(x / (1 - x)), with x's shape.",
                 examples="""
>>> import fw
>>> print(fw.logit(fw.to_tensor([0.25, 0.5, 0.75])).numpy())
[-1.0986123  0.         1.0986123]
>>> print(fw.logit(fw.to_tensor([0.0, 1.0]), eps=1e-6).numpy())
[-13.81551   13.802318]
"""),
    "nan_to_num": Doc(args={"x": _X, "nan": "The value replacing NaN.",
                            "posinf": ("float, optional", "The value replacing +inf; None: the "
                                                          "largest finite value of x's dtype."),
                            "neginf": ("float, optional", "The value replacing -inf; None: the "
                                                          "lowest finite value of x's dtype.")},
                      returns="Tensor: x with NaN and infinities replaced.",
                      examples="""
>>> import fw
>>> x = fw.to_tensor([float("nan"), float("inf"), -float("inf"), 1.0])
>>> print(fw.nan_to_num(x, posinf=9.0, neginf=-9.0).numpy())
[ 0.  9. -9.  1.]
>>> fw.nan_to_num(x)[1].item() == fw.finfo(fw.float32).max
True
"""),
    "scale": Doc(args={"x": _X, "scale": ("float|Tensor", "The factor."),
                       "bias": "The offset.",
                       "bias_after_scale": "True: scale * x + bias; False: (x + bias) * "
                                           "scale."},
                 returns="Tensor: the scaled tensor, with x's shape and dtype.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> print(fw.scale(x, scale=2.0, bias=1.0).numpy())
[3. 5.]
>>> print(fw.scale(x, scale=2.0, bias=1.0, bias_after_scale=False).numpy())
[4. 6.]
"""),
    "stanh": Doc(args={"x": _XF, "scale_a": "The factor inside tanh.",
                       "scale_b": "The factor outside tanh."},
                 returns="Tensor: scale_b * tanh(scale_a * x), with x's shape.",
                 examples="""
>>> import fw
>>> print(fw.stanh(fw.to_tensor([0.0, 1.0])).numpy())
[0.       1.003767]
"""),
    "frexp": _unary("""
>>> import fw
>>> mantissa, exponent = fw.frexp(fw.to_tensor([8.0, 0.75, -3.0]))
>>> print(mantissa.numpy(), exponent.numpy())
[ 0.5   0.75 -0.75] [4. 0. 2.]
""", returns="tuple(Tensor, Tensor): the mantissas (|m| in [0.5, 1), or 0) and the exponents, "
             "both with x's shape and dtype."),
    "gammainc": _binary("""
>>> import fw
>>> print(fw.gammainc(fw.to_tensor([1.0, 2.0]), fw.to_tensor([1.0, 1.0])).numpy())
[0.63212055 0.26424113]
""", x="The shape parameters a (>= 0).", y="The upper limits of integration (>= 0), "
                                           "broadcast against x."),
    "gammaincc": _binary("""
>>> import fw
>>> print(fw.gammaincc(fw.to_tensor([1.0, 2.0]), fw.to_tensor([1.0, 1.0])).numpy())
[0.36787945 0.7357589 ]
""", x="The shape parameters a (>= 0).", y="The lower limits of integration (>= 0), "
                                           "broadcast against x."),
}

# The in-place variants (x.sin_(), …): the function's first example, writing into x.
_INPLACE = {
    "pow": """
>>> import fw
>>> x = fw.to_tensor([2, 3])
>>> _ = x.pow_(2)
>>> print(x.numpy())
[4 9]
""",
    "hypot": """
>>> import fw
>>> x = fw.to_tensor([3.0, 5.0])
>>> _ = x.hypot_(fw.to_tensor([4.0, 12.0]))
>>> print(x.numpy())
[ 5. 13.]
""",
    "copysign": """
>>> import fw
>>> x = fw.to_tensor([1.0, -2.0, 3.0])
>>> _ = x.copysign_(fw.to_tensor([-1.0, 1.0, -0.0]))
>>> print(x.numpy())
[-1.  2. -3.]
""",
    "gcd": """
>>> import fw
>>> x = fw.to_tensor([12, 18, -4])
>>> _ = x.gcd_(fw.to_tensor([8, 0, 6]))
>>> print(x.numpy())
[ 4 18  2]
""",
    "lcm": """
>>> import fw
>>> x = fw.to_tensor([4, 6, -3])
>>> _ = x.lcm_(fw.to_tensor([6, 0, 5]))
>>> print(x.numpy())
[12  0 15]
""",
    "ldexp": """
>>> import fw
>>> x = fw.to_tensor([1.0, 3.0])
>>> _ = x.ldexp_(fw.to_tensor([2, 3]))
>>> print(x.numpy())
[ 4. 24.]
""",
    "neg": """
>>> import fw
>>> x = fw.to_tensor([1.0, -2.0, 0.0])
>>> _ = x.neg_()
>>> print(x.numpy())
[-1.  2. -0.]
""",
    "sign": """
>>> import fw
>>> x = fw.to_tensor([-3.0, 0.0, 2.5])
>>> _ = x.sign_()
>>> print(x.numpy())
[-1.  0.  1.]
""",
    "square": """
>>> import fw
>>> x = fw.to_tensor([1.0, -2.0, 3.0])
>>> _ = x.square_()
>>> print(x.numpy())
[1. 4. 9.]
""",
    "expm1": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1e-10, 1.0], dtype='float64')
>>> _ = x.expm1_()
>>> print(x.numpy())
[0.00000000e+00 1.00000000e-10 1.71828183e+00]
""",
    "exp2": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0, 10.0])
>>> _ = x.exp2_()
>>> print(x.numpy())
[1.000e+00 2.000e+00 1.024e+03]
""",
    "log": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.718281828, 10.0])
>>> _ = x.log_()
>>> print(x.numpy())
[0.        1.        2.3025851]
""",
    "log2": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 1024.0])
>>> _ = x.log2_()
>>> print(x.numpy())
[ 0.  1. 10.]
""",
    "log10": """
>>> import fw
>>> x = fw.to_tensor([1.0, 10.0, 1000.0])
>>> _ = x.log10_()
>>> print(x.numpy())
[0.        1.        3.0000002]
""",
    "log1p": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1e-10, 1.0], dtype='float64')
>>> _ = x.log1p_()
>>> print(x.numpy())
[0.00000000e+00 1.00000000e-10 6.93147181e-01]
""",
    "rsqrt": """
>>> import fw
>>> x = fw.to_tensor([1.0, 4.0, 16.0])
>>> _ = x.rsqrt_()
>>> print(x.numpy())
[1.   0.5  0.25]
""",
    "reciprocal": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 4.0])
>>> _ = x.reciprocal_()
>>> print(x.numpy())
[1.   0.5  0.25]
""",
    "sin": """
>>> import fw
>>> x = fw.to_tensor([0.0, 0.5235988, 1.5707964])
>>> _ = x.sin_()
>>> print(x.numpy())
[0.  0.5 1. ]
""",
    "cos": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0471976, 3.1415927])
>>> _ = x.cos_()
>>> print(x.numpy())
[ 1.          0.49999997 -1.        ]
""",
    "tan": """
>>> import fw
>>> x = fw.to_tensor([0.0, 0.7853982])
>>> _ = x.tan_()
>>> print(x.numpy())
[0. 1.]
""",
    "asin": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 0.5])
>>> _ = x.asin_()
>>> print(x.numpy())
[-1.5707964  0.         0.5235988]
""",
    "acos": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 1.0])
>>> _ = x.acos_()
>>> print(x.numpy())
[3.1415927 1.5707964 0.       ]
""",
    "atan": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 1.0])
>>> _ = x.atan_()
>>> print(x.numpy())
[-0.7853982  0.         0.7853982]
""",
    "sinh": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 1.0])
>>> _ = x.sinh_()
>>> print(x.numpy())
[-1.1752012  0.         1.1752012]
""",
    "cosh": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 1.0])
>>> _ = x.cosh_()
>>> print(x.numpy())
[1.5430807 1.        1.5430807]
""",
    "asinh": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 1.0])
>>> _ = x.asinh_()
>>> print(x.numpy())
[-0.8813736  0.         0.8813736]
""",
    "acosh": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 10.0])
>>> _ = x.acosh_()
>>> print(x.numpy())
[0.       1.316958 2.993223]
""",
    "atanh": """
>>> import fw
>>> x = fw.to_tensor([-0.5, 0.0, 0.5])
>>> _ = x.atanh_()
>>> print(x.numpy())
[-0.54930615  0.          0.54930615]
""",
    "sigmoid": """
>>> import fw
>>> x = fw.to_tensor([-2.0, 0.0, 2.0])
>>> _ = x.sigmoid_()
>>> print(x.numpy())
[0.11920293 0.5        0.880797  ]
""",
    "sinc": """
>>> import fw
>>> x = fw.to_tensor([0.0, 0.5, 1.5])
>>> _ = x.sinc_()
>>> print(x.numpy())
[ 1.          0.63661975 -0.21220659]
""",
    "ceil": """
>>> import fw
>>> x = fw.to_tensor([-1.5, -0.2, 0.7, 2.0])
>>> _ = x.ceil_()
>>> print(x.numpy())
[-1. -0.  1.  2.]
""",
    "trunc": """
>>> import fw
>>> x = fw.to_tensor([-1.5, -0.2, 0.7, 2.0])
>>> _ = x.trunc_()
>>> print(x.numpy())
[-1. -0.  0.  2.]
""",
    "frac": """
>>> import fw
>>> x = fw.to_tensor([-1.5, 0.25, 2.0])
>>> _ = x.frac_()
>>> print(x.numpy())
[-0.5   0.25  0.  ]
""",
    "round": """
>>> import fw
>>> x = fw.to_tensor([-0.5, 0.5, 1.5, 2.5])
>>> _ = x.round_()
>>> print(x.numpy())
[-1.  1.  2.  3.]
""",
    "erf": """
>>> import fw
>>> x = fw.to_tensor([-1.0, 0.0, 1.0])
>>> _ = x.erf_()
>>> print(x.numpy())
[-0.8427008  0.         0.8427008]
""",
    "erfinv": """
>>> import fw
>>> x = fw.to_tensor([0.0, 0.5, -0.5])
>>> _ = x.erfinv_()
>>> print(x.numpy())
[ 0.          0.47693628 -0.47693628]
""",
    "digamma": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 0.5])
>>> _ = x.digamma_()
>>> print(x.numpy())
[-0.5772157   0.42278433 -1.96351   ]
""",
    "lgamma": """
>>> import fw
>>> x = fw.to_tensor([1.0, 3.0, 0.5])
>>> _ = x.lgamma_()
>>> print(x.numpy())
[0.        0.6931472 0.5723649]
""",
    "i0": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0, 2.0])
>>> _ = x.i0_()
>>> print(x.numpy())
[1.        1.2660658 2.2795854]
""",
    "i0e": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0, 2.0])
>>> _ = x.i0e_()
>>> print(x.numpy())
[1.         0.4657596  0.30850834]
""",
    "i1": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0, 2.0])
>>> _ = x.i1_()
>>> print(x.numpy())
[0.        0.5651591 1.5906368]
""",
    "i1e": """
>>> import fw
>>> x = fw.to_tensor([0.0, 1.0, 2.0])
>>> _ = x.i1e_()
>>> print(x.numpy())
[0.         0.20791042 0.21526928]
""",
    "polygamma": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> _ = x.polygamma_(1)
>>> print(x.numpy())
[1.644934   0.64493406]
""",
    "logical_and": """
>>> import fw
>>> x = fw.to_tensor([2, 0])
>>> _ = x.logical_and_(fw.to_tensor([1, 1]))
>>> print(x.numpy())
[1 0]
""",
    "logical_not": """
>>> import fw
>>> x = fw.to_tensor([True, False])
>>> _ = x.logical_not_()
>>> print(x.numpy())
[False  True]
""",
    "bitwise_and": """
>>> import fw
>>> x = fw.to_tensor([12, 10])
>>> _ = x.bitwise_and_(fw.to_tensor([10, 6]))
>>> print(x.numpy())
[8 2]
""",
    "bitwise_or": """
>>> import fw
>>> x = fw.to_tensor([12, 10])
>>> _ = x.bitwise_or_(fw.to_tensor([10, 6]))
>>> print(x.numpy())
[14 14]
""",
    "bitwise_xor": """
>>> import fw
>>> x = fw.to_tensor([12, 10])
>>> _ = x.bitwise_xor_(fw.to_tensor([10, 6]))
>>> print(x.numpy())
[ 6 12]
""",
    "bitwise_not": """
>>> import fw
>>> x = fw.to_tensor([0, 5, -1])
>>> _ = x.bitwise_not_()
>>> print(x.numpy())
[-1 -6  0]
""",
    "bitwise_left_shift": """
>>> import fw
>>> x = fw.to_tensor([1, 3])
>>> _ = x.bitwise_left_shift_(fw.to_tensor([2, 1]))
>>> print(x.numpy())
[4 6]
""",
    "logit": """
>>> import fw
>>> x = fw.to_tensor([0.25, 0.5, 0.75])
>>> _ = x.logit_()
>>> print(x.numpy())
[-1.0986123  0.         1.0986123]
""",
    "gammainc": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> _ = x.gammainc_(fw.to_tensor([1.0, 1.0]))
>>> print(x.numpy())
[0.63212055 0.26424113]
""",
    "gammaincc": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> _ = x.gammaincc_(fw.to_tensor([1.0, 1.0]))
>>> print(x.numpy())
[0.36787945 0.7357589 ]
""",
}

for _name, _example in _INPLACE.items():
    DOCS[_name] = replace(DOCS[_name], inplace=_example)

_INPLACE_MORE = {
    "equal": """
>>> import fw
>>> x = fw.to_tensor([1, 2, 3])
>>> _ = x.equal_(fw.to_tensor([1, 0, 3]))
>>> x.tolist()
[1, 0, 1]
""",
    "not_equal": """
>>> import fw
>>> x = fw.to_tensor([1, 2, 3])
>>> _ = x.not_equal_(fw.to_tensor([1, 0, 3]))
>>> x.tolist()
[0, 1, 0]
""",
    "less_than": """
>>> import fw
>>> x = fw.to_tensor([1.0, 5.0])
>>> _ = x.less_than_(fw.to_tensor([2.0, 2.0]))
>>> x.tolist()
[1.0, 0.0]
""",
    "less_equal": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 5.0])
>>> _ = x.less_equal_(fw.to_tensor(2.0))
>>> x.tolist()
[1.0, 1.0, 0.0]
""",
    "greater_than": """
>>> import fw
>>> x = fw.to_tensor([1.0, 5.0])
>>> _ = x.greater_than_(fw.to_tensor([2.0, 2.0]))
>>> x.tolist()
[0.0, 1.0]
""",
    "greater_equal": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 5.0])
>>> _ = x.greater_equal_(fw.to_tensor(2.0))
>>> x.tolist()
[0.0, 1.0, 1.0]
""",
    "floor_divide": """
>>> import fw
>>> x = fw.to_tensor([7, -7])
>>> _ = x.floor_divide_(fw.to_tensor([2, 2]))
>>> x.tolist()
[3, -4]
""",
    "remainder": """
>>> import fw
>>> x = fw.to_tensor([7, -7])
>>> _ = x.remainder_(fw.to_tensor([3, 3]))
>>> x.tolist()
[1, 2]
""",
    "lerp": """
>>> import fw
>>> x = fw.to_tensor([0.0, 10.0])
>>> _ = x.lerp_(fw.to_tensor([10.0, 20.0]), 0.5)
>>> x.tolist()
[5.0, 15.0]
""",
    "logical_or": """
>>> import fw
>>> x = fw.to_tensor([True, False, False])
>>> _ = x.logical_or_(fw.to_tensor([False, False, True]))
>>> x.tolist()
[True, False, True]
""",
    "logical_xor": """
>>> import fw
>>> x = fw.to_tensor([True, False, True])
>>> _ = x.logical_xor_(fw.to_tensor([True, True, False]))
>>> x.tolist()
[False, True, True]
""",
    "bitwise_right_shift": """
>>> import fw
>>> x = fw.to_tensor([8, -8])
>>> _ = x.bitwise_right_shift_(fw.to_tensor([2, 2]))
>>> x.tolist()
[2, -2]
""",
    "nan_to_num": """
>>> import fw
>>> x = fw.to_tensor([float("nan"), 1.0])
>>> _ = x.nan_to_num_()
>>> x.tolist()
[0.0, 1.0]
""",
    "scale": """
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0])
>>> _ = x.scale_(scale=2.0, bias=1.0)
>>> x.tolist()
[3.0, 5.0]
""",
}

for _name, _example in _INPLACE_MORE.items():
    DOCS[_name] = replace(DOCS[_name], inplace=_example)
