"""Reference docs of the reductions (``fw/core/ops/reduce.py``): summaries are the ops' ``doc``
fields; arguments, returns and examples are here (see ``docs/__init__.py``)."""

from fw.core.ops.docs import Doc

_AXIS = ("int|list|tuple, optional",
         "The axis or axes to reduce (negative counts from the end); None reduces every "
         "axis.")
_KEEP = "Whether the reduced axes stay in the result as dimensions of size 1."
_DTYPE = ("str|fw.dtype, optional",
          "The dtype of the result; x is cast to it before reducing. None: bool and integer "
          "inputs give int64, other inputs keep their dtype.")


def _reduction(examples, *, returns, x="The input tensor.", details="", dtype=None, **extra):
    args = {"x": x, "axis": _AXIS, "keepdim": _KEEP, **extra}
    if dtype is not None:
        args["dtype"] = dtype
    return Doc(args=args, returns=returns, examples=examples, details=details)


_SHAPE = "with the reduced axes removed (or of size 1 with keepdim=True)"

DOCS = {
    "sum": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> fw.sum(x).item()
10
>>> print(fw.sum(x, axis=0).numpy())
[4 6]
>>> fw.sum(x, axis=1, keepdim=True).shape
[2, 1]
>>> fw.sum(x, dtype="float32").dtype
fw.float32
""", returns=f"Tensor: the sums, {_SHAPE}.", dtype=_DTYPE),
    "nansum": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, float("nan")], [3.0, 4.0]])
>>> print(fw.nansum(x, axis=1).numpy())
[1. 7.]
""", returns=f"Tensor: the sums with NaN counted as 0, {_SHAPE}.", dtype=_DTYPE),
    "prod": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> print(fw.prod(x, axis=1).numpy())
[ 2. 12.]
>>> fw.prod(x).item()
24.0
""", returns=f"Tensor: the products, {_SHAPE}.",
        dtype=("str|fw.dtype, optional", "The dtype to cast x to before multiplying "
                                          "(None keeps x's dtype; bool gives int64).")),
    "mean": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0], [3.0, 4.0]])
>>> fw.mean(x).item()
2.5
>>> print(fw.mean(x, axis=0).numpy())
[2. 3.]
>>> print(fw.mean(x, axis=[0, 1], keepdim=True).numpy())
[[2.5]]
""", returns=f"Tensor: the means, {_SHAPE}; float for integer input."),
    "nanmean": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, float("nan")], [3.0, 5.0]])
>>> print(fw.nanmean(x, axis=1).numpy())
[1. 4.]
""", returns=f"Tensor: the means of the non-NaN elements, {_SHAPE}."),
    "max": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 5.0], [7.0, 2.0]])
>>> fw.max(x).item()
7.0
>>> print(fw.max(x, axis=1).numpy())
[5. 7.]
""", returns=f"Tensor: the maxima, with x's dtype, {_SHAPE}."),
    "min": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 5.0], [7.0, 2.0]])
>>> fw.min(x).item()
1.0
>>> print(fw.min(x, axis=1).numpy())
[1. 2.]
""", returns=f"Tensor: the minima, with x's dtype, {_SHAPE}."),
    "amax": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 5.0], [7.0, 7.0]])
>>> print(fw.amax(x, axis=1).numpy())
[5. 7.]
""", returns=f"Tensor: the maxima, with x's dtype, {_SHAPE}."),
    "amin": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 5.0], [2.0, 2.0]])
>>> print(fw.amin(x, axis=1).numpy())
[1. 2.]
""", returns=f"Tensor: the minima, with x's dtype, {_SHAPE}."),
    "argmax": Doc(args={"x": "The input tensor.",
                        "axis": ("int, optional", "The axis to search; None searches the "
                                                  "flattened tensor."),
                        "keepdim": "Whether the searched axis stays as a dimension of size 1.",
                        "dtype": "The index dtype: 'int64' or 'int32'."},
                  returns="Tensor: the indices (int64 unless dtype says otherwise), with the "
                          "searched axis removed.",
                  examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 9.0, 3.0], [7.0, 2.0, 7.0]])
>>> fw.argmax(x).item()
1
>>> print(fw.argmax(x, axis=1).numpy())
[1 0]
"""),
    "argmin": Doc(args={"x": "The input tensor.",
                        "axis": ("int, optional", "The axis to search; None searches the "
                                                  "flattened tensor."),
                        "keepdim": "Whether the searched axis stays as a dimension of size 1.",
                        "dtype": "The index dtype: 'int64' or 'int32'."},
                  returns="Tensor: the indices (int64 unless dtype says otherwise), with the "
                          "searched axis removed.",
                  examples="""
>>> import fw
>>> x = fw.to_tensor([[1.0, 9.0, 3.0], [7.0, 2.0, 2.0]])
>>> fw.argmin(x).item()
0
>>> print(fw.argmin(x, axis=1).numpy())
[0 1]
"""),
    "all": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[True, False], [True, True]])
>>> fw.all(x).item()
False
>>> print(fw.all(x, axis=1).numpy())
[False  True]
""", returns=f"Tensor: a bool tensor, {_SHAPE}."),
    "any": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[True, False], [False, False]])
>>> fw.any(x).item()
True
>>> print(fw.any(x, axis=1).numpy())
[ True False]
""", returns=f"Tensor: a bool tensor, {_SHAPE}."),
    "count_nonzero": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
>>> print(fw.count_nonzero(x, axis=1).numpy())
[2 1]
>>> fw.count_nonzero(x).item()
3
""", returns=f"Tensor: int64 counts, {_SHAPE}."),
    "var": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]])
>>> print(fw.var(x, axis=1).numpy())
[1. 4.]
>>> print(fw.var(x, axis=1, unbiased=False).numpy())
[0.6666667 2.6666667]
""", returns=f"Tensor: the variances, {_SHAPE}.",
        unbiased="Divide by N - 1 (True) or by N (False), N being the number of elements "
                 "reduced."),
    "std": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]])
>>> print(fw.std(x, axis=1).numpy())
[1. 2.]
""", returns=f"Tensor: the standard deviations, {_SHAPE}.",
        unbiased="Divide by N - 1 (True) or by N (False), N being the number of elements "
                 "reduced."),
    "logsumexp": _reduction("""
>>> import fw
>>> x = fw.to_tensor([[0.0, 0.0], [1000.0, 1000.0]])
>>> print(fw.logsumexp(x, axis=1).numpy())
[6.9314718e-01 1.0006932e+03]
""", returns=f"Tensor: log(sum(exp(x))) over axis, {_SHAPE}."),
    "reduce_as": Doc(args={"x": "The tensor to reduce.",
                           "target": "A tensor whose shape x is summed down to (x's shape must "
                                     "be target's shape broadcast)."},
                     returns="Tensor: x summed over the broadcast axes, with target's shape.",
                     examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> print(fw.reduce_as(x, fw.to_tensor([0, 0])).numpy())
[4 6]
"""),
}
