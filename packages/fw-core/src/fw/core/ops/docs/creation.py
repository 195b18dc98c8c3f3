"""Reference docs of the creation ops (``fw/core/ops/creation.py``) whose public function is
generated; ``zeros``, ``ones``, ``full``, ``arange``, ``to_tensor``, … are hand-written
(``fw/core/api/creation.py``) and keep their docstrings there."""

from fw.core.ops.docs import Doc

_DT = ("str|fw.dtype, optional", "The dtype of the result; None: the default float dtype "
                                 "(``fw.get_default_dtype()``).")

DOCS = {
    "cast": Doc(args={"x": "The input tensor.",
                      "dtype": ("str|fw.dtype|np.dtype", "The target dtype, e.g. 'float32', "
                                                         "fw.int64.")},
                returns="Tensor: a new tensor with x's values in dtype (x itself is unchanged).",
                details="Float to integer truncates toward zero; complex to real keeps the real "
                        "part; anything to bool is ``x != 0``.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([1.7, -2.5, 0.0])
>>> y = fw.cast(x, "int32")
>>> print(y.numpy(), y.dtype)
[ 1 -2  0] fw.int32
>>> x.astype("bool").tolist()
[True, True, False]
"""),
    "complex": Doc(args={"real": "The real parts (float32 or float64).",
                         "imag": "The imaginary parts, broadcast against real."},
                   returns="Tensor: complex64 for float32 parts, complex128 for float64.",
                   examples="""
>>> import fw
>>> z = fw.complex(fw.to_tensor([1.0, 2.0]), fw.to_tensor([0.5, -1.0]))
>>> print(z.numpy(), z.dtype)
[1.+0.5j 2.-1.j ] fw.complex64
"""),
    "diag": Doc(args={"x": "A 1-D or 2-D tensor.",
                      "offset": "Which diagonal: 0 the main one, > 0 above it, < 0 below it.",
                      "padding_value": ("int|float, optional", "The value off the diagonal "
                                                               "when x is 1-D.")},
                returns="Tensor: a 2-D tensor for 1-D x, a 1-D tensor for 2-D x.",
                examples="""
>>> import fw
>>> print(fw.diag(fw.to_tensor([1, 2])).numpy())
[[1 0]
 [0 2]]
>>> print(fw.diag(fw.to_tensor([[1, 2], [3, 4]])).numpy())
[1 4]
>>> print(fw.diag(fw.to_tensor([[1, 2], [3, 4]]), offset=1).numpy())
[2]
"""),
    "diag_embed": Doc(args={"input": "The values; its last axis becomes the diagonals.",
                            "offset": "Which diagonal of the new planes (0 the main one).",
                            "dim1": "The result axis for the rows of the planes.",
                            "dim2": "The result axis for the columns of the planes."},
                      returns="Tensor: one more dimension than input.",
                      examples="""
>>> import fw
>>> out = fw.diag_embed(fw.to_tensor([[1, 2], [3, 4]]))
>>> out.shape
[2, 2, 2]
>>> print(out[1].numpy())
[[3 0]
 [0 4]]
"""),
    "diagflat": Doc(args={"x": "The input tensor (flattened first).",
                          "offset": "Which diagonal: 0 the main one, > 0 above, < 0 below."},
                    returns="Tensor: a square 2-D tensor.",
                    examples="""
>>> import fw
>>> print(fw.diagflat(fw.to_tensor([[1, 2], [3, 4]])).numpy())
[[1 0 0 0]
 [0 2 0 0]
 [0 0 3 0]
 [0 0 0 4]]
"""),
    "eye": Doc(args={"num_rows": "The number of rows.",
                     "num_columns": ("int, optional", "The number of columns; None means "
                                                      "num_rows."),
                     "dtype": _DT},
               returns="Tensor: a [num_rows, num_columns] tensor with ones on the diagonal.",
               examples="""
>>> import fw
>>> print(fw.eye(3).numpy())
[[1. 0. 0.]
 [0. 1. 0.]
 [0. 0. 1.]]
>>> fw.eye(2, 3, dtype="int64").tolist()
[[1, 0, 0], [0, 1, 0]]
"""),
    "full_like": Doc(args={"x": "The tensor whose shape (and by default dtype) the result has.",
                           "fill_value": ("bool|int|float", "The value of every element."),
                           "dtype": ("str|fw.dtype, optional", "The dtype of the result; None "
                                                               "keeps x's dtype.")},
                     returns="Tensor: a new tensor of x's shape filled with fill_value.",
                     examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
>>> fw.full_like(x, 7).tolist()
[[7, 7, 7], [7, 7, 7]]
>>> fw.full_like(x, 0.5, dtype="float32").dtype
fw.float32
"""),
    "is_empty": Doc(args={"x": "The input tensor."},
                    returns="Tensor: a 0-D bool tensor, True when x has no elements.",
                    examples="""
>>> import fw
>>> fw.is_empty(fw.zeros([2, 0])).item()
True
>>> fw.is_empty(fw.zeros([2])).item()
False
"""),
    "linspace": Doc(args={"start": ("int|float|Tensor", "The first value."),
                          "stop": ("int|float|Tensor", "The last value (included)."),
                          "num": ("int|Tensor", "The number of values."),
                          "dtype": _DT},
                    returns="Tensor: a 1-D tensor of num values.",
                    examples="""
>>> import fw
>>> print(fw.linspace(0, 1, 5).numpy())
[0.   0.25 0.5  0.75 1.  ]
>>> fw.linspace(0, 10, 3, dtype="int64").tolist()
[0, 5, 10]
"""),
    "logspace": Doc(args={"start": ("int|float|Tensor", "The first exponent."),
                          "stop": ("int|float|Tensor", "The last exponent (included)."),
                          "num": ("int|Tensor", "The number of values."),
                          "base": "The base of the powers.",
                          "dtype": _DT},
                    returns="Tensor: a 1-D tensor: base ** linspace(start, stop, num).",
                    examples="""
>>> import fw
>>> print(fw.logspace(0, 3, 4).numpy())
[   1.   10.  100. 1000.]
>>> print(fw.logspace(0, 3, 4, base=2.0).numpy())
[1. 2. 4. 8.]
"""),
    "numel": Doc(args={"x": "The input tensor."},
                 returns="Tensor: a 0-D int64 tensor holding the number of elements.",
                 examples="""
>>> import fw
>>> fw.numel(fw.zeros([2, 3, 4])).item()
24
"""),
    "shape": Doc(args={"input": "The input tensor."},
                 returns="Tensor: a 1-D int64 tensor of the sizes (``x.shape`` is the Python "
                         "list).",
                 examples="""
>>> import fw
>>> print(fw.shape(fw.zeros([2, 3])).numpy())
[2 3]
"""),
    "tril": Doc(args={"x": "A tensor with at least 2 dimensions (the last two are the "
                           "matrices).",
                      "diagonal": "The last diagonal kept: 0 the main one, > 0 above it, < 0 "
                                  "below it."},
                returns="Tensor: x with the elements above that diagonal set to 0.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
>>> print(fw.tril(x).numpy())
[[1 0 0]
 [4 5 0]
 [7 8 9]]
>>> print(fw.tril(x, diagonal=-1).numpy())
[[0 0 0]
 [4 0 0]
 [7 8 0]]
""", inplace="""
>>> import fw
>>> x = fw.ones([2, 2])
>>> _ = x.tril_()
>>> print(x.numpy())
[[1. 0.]
 [1. 1.]]
"""),
    "triu": Doc(args={"x": "A tensor with at least 2 dimensions (the last two are the "
                           "matrices).",
                      "diagonal": "The first diagonal kept: 0 the main one, > 0 above it, < 0 "
                                  "below it."},
                returns="Tensor: x with the elements below that diagonal set to 0.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
>>> print(fw.triu(x).numpy())
[[1 2 3]
 [0 5 6]
 [0 0 9]]
>>> print(fw.triu(x, diagonal=1).numpy())
[[0 2 3]
 [0 0 6]
 [0 0 0]]
""", inplace="""
>>> import fw
>>> x = fw.ones([2, 2])
>>> _ = x.triu_()
>>> print(x.numpy())
[[1. 1.]
 [0. 1.]]
"""),
    "tril_indices": Doc(args={"row": "The number of rows of the matrix.",
                              "col": ("int, optional", "The number of columns; None means "
                                                       "row."),
                              "offset": "The last diagonal included (0 the main one).",
                              "dtype": "The dtype of the indices."},
                        returns="Tensor: a [2, N] tensor: the row indices, then the column "
                                "indices.",
                        examples="""
>>> import fw
>>> fw.tril_indices(3, 3).tolist()
[[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
"""),
    "triu_indices": Doc(args={"row": "The number of rows of the matrix.",
                              "col": ("int, optional", "The number of columns; None means "
                                                       "row."),
                              "offset": "The first diagonal included (0 the main one).",
                              "dtype": "The dtype of the indices."},
                        returns="Tensor: a [2, N] tensor: the row indices, then the column "
                                "indices.",
                        examples="""
>>> import fw
>>> fw.triu_indices(3, 3, 1).tolist()
[[0, 0, 1], [1, 2, 2]]
"""),
}
