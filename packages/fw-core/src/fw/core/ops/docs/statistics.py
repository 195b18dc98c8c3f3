"""Reference docs of the order statistics and counting ops (``fw/core/ops/statistics.py``)."""

from fw.core.ops.docs import Doc


def _quantile(nan):
    ex = "fw.nanquantile(fw.to_tensor([1.0, float('nan'), 3.0]), 0.5).item()" if nan else \
        "fw.quantile(x, [0.25, 0.75], axis=1).tolist()"
    return Doc(args={"x": "A real tensor; integer input gives the default float dtype.",
                     "q": ("float|list|tuple|Tensor", "The quantile(s), in [0, 1]; a list adds "
                                                      "a leading dimension of its length."),
                     "axis": ("int|list|tuple, optional", "The axes to reduce; None: all "
                                                          "elements."),
                     "keepdim": "Whether the reduced axes stay as dimensions of size 1.",
                     "interpolation": "Between two data points: 'linear', 'lower', 'higher', "
                                      "'midpoint' or 'nearest'."},
               returns="Tensor: the quantiles. " + ("All-NaN slices give NaN." if nan else
                                                    "A slice containing NaN gives NaN."),
               examples=f"""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 10.0, 20.0, 30.0]])
>>> fw.quantile(x, 0.5).item()
3.5
>>> {ex}
{"2.0" if nan else "[[1.75, 7.5], [3.25, 22.5]]"}
""")


DOCS = {
    "quantile": _quantile(False),
    "nanquantile": _quantile(True),
    "bincount": Doc(args={"x": "A 1-D tensor of non-negative integers.",
                          "weights": ("Tensor, optional", "A weight per element of x, summed "
                                                          "instead of counting 1."),
                          "minlength": "The minimum length of the result."},
                    returns="Tensor: counts (int64), or the weights' sums, of length "
                            "max(max(x) + 1, minlength).",
                    examples="""
>>> import fw
>>> x = fw.to_tensor([0, 1, 1, 3])
>>> fw.bincount(x).tolist()
[1, 2, 0, 1]
>>> fw.bincount(x, weights=fw.to_tensor([0.5, 1.0, 1.0, 2.0]), minlength=5).tolist()
[0.5, 2.0, 0.0, 2.0, 0.0]
"""),
    "histogram_bin_edges": Doc(args={"input": "The values.",
                                     "bins": "The number of equal bins.",
                                     "min": "The lower end of the range.",
                                     "max": "The upper end; min = max = 0 uses the input's "
                                            "min and max."},
                               returns="Tensor: the bins + 1 edges.",
                               examples="""
>>> import fw
>>> fw.histogram_bin_edges(fw.to_tensor([1.0, 2.0, 5.0]), bins=4).tolist()
[1.0, 2.0, 3.0, 4.0, 5.0]
"""),
}
