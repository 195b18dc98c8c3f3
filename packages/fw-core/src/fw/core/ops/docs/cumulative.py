"""Reference docs of the cumulative ops (``fw/core/ops/cumulative.py``)."""

from fw.core.ops.docs import Doc

_AX = ("int, optional", "The axis to accumulate along; None flattens x first.")
_DT = ("str|fw.dtype, optional", "Cast x to this dtype before accumulating.")
_INT = ("str|fw.dtype, optional", "The dtype of the indices: 'int64' or 'int32'.")

DOCS = {
    "cumsum": Doc(args={"x": "The input tensor.", "axis": _AX, "dtype": _DT},
                  returns="Tensor: the running sums, with x's shape (1-D when axis is None).",
                  examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
>>> fw.cumsum(x).tolist()
[1, 3, 6, 10, 15, 21]
>>> fw.cumsum(x, axis=1).tolist()
[[1, 3, 6], [4, 9, 15]]
>>> fw.cumsum(x, axis=0, dtype="float64").dtype
fw.float64
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 3.0])
>>> _ = x.cumsum_(0)
>>> x.tolist()
[1.0, 3.0, 6.0]
"""),
    "cumprod": Doc(args={"x": "The input tensor.",
                         "dim": ("int, optional", "The axis to accumulate along; None flattens "
                                                  "x first."),
                         "dtype": _DT},
                   returns="Tensor: the running products.",
                   examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
>>> fw.cumprod(x, dim=1).tolist()
[[1, 2, 6], [4, 20, 120]]
""", inplace="""
>>> import fw
>>> x = fw.to_tensor([1.0, 2.0, 3.0])
>>> _ = x.cumprod_(0)
>>> x.tolist()
[1.0, 2.0, 6.0]
"""),
    "logcumsumexp": Doc(args={"x": "The input tensor (float).", "axis": _AX, "dtype": _DT},
                        returns="Tensor: log(cumsum(exp(x))), computed without overflow.",
                        examples="""
>>> import fw
>>> x = fw.to_tensor([0.0, 0.0, 1000.0])
>>> print(fw.logcumsumexp(x).numpy())
[0.000000e+00 6.931472e-01 1.000000e+03]
"""),
    "cummax": Doc(args={"x": "The input tensor.", "axis": _AX, "dtype": _INT},
                  returns="tuple(Tensor, Tensor): the running maxima (x's dtype) and the index "
                          "where each was reached.",
                  examples="""
>>> import fw
>>> values, indices = fw.cummax(fw.to_tensor([1, 3, 2, 5, 4]))
>>> values.tolist(), indices.tolist()
([1, 3, 3, 5, 5], [0, 1, 1, 3, 3])
"""),
    "cummin": Doc(args={"x": "The input tensor.", "axis": _AX, "dtype": _INT},
                  returns="tuple(Tensor, Tensor): the running minima (x's dtype) and the index "
                          "where each was reached.",
                  examples="""
>>> import fw
>>> values, indices = fw.cummin(fw.to_tensor([5, 3, 4, 1, 2]))
>>> values.tolist(), indices.tolist()
([5, 3, 3, 1, 1], [0, 1, 1, 3, 3])
"""),
    "trapezoid": Doc(args={"y": "The sampled function values.",
                           "x": ("Tensor, optional", "The sample points along axis (broadcast "
                                                     "against y); give x or dx."),
                           "dx": ("float, optional", "The spacing of the samples when x is not "
                                                     "given; None means 1."),
                           "axis": "The axis to integrate along."},
                     returns="Tensor: the integrals, with axis removed.",
                     examples="""
>>> import fw
>>> y = fw.to_tensor([1.0, 2.0, 3.0])
>>> fw.trapezoid(y).item()
4.0
>>> fw.trapezoid(y, dx=0.5).item()
2.0
>>> fw.trapezoid(y, x=fw.to_tensor([0.0, 1.0, 3.0])).item()
6.5
"""),
    "cumulative_trapezoid": Doc(args={"y": "The sampled function values.",
                                      "x": ("Tensor, optional", "The sample points along axis; "
                                                                "give x or dx."),
                                      "dx": ("float, optional", "The spacing of the samples "
                                                                "when x is not given; None "
                                                                "means 1."),
                                      "axis": "The axis to integrate along."},
                                returns="Tensor: the running integrals; axis is one shorter.",
                                examples="""
>>> import fw
>>> fw.cumulative_trapezoid(fw.to_tensor([1.0, 2.0, 3.0])).tolist()
[1.5, 4.0]
"""),
}
