"""Reference docs of the shape ops (``fw/core/ops/shape.py``) whose public function is
generated; ``reshape``, ``concat``, ``split``, ``squeeze``, … are hand-written
(``fw/core/api/shape.py``) and keep their docstrings there."""

from fw.core.ops.docs import Doc

DOCS = {
    "transpose": Doc(args={"x": "The input tensor.",
                           "perm": ("list|tuple, optional", "The new order of the axes: axis i "
                                                            "of the result is axis perm[i] of x. "
                                                            "None reverses the axes.")},
                     returns="Tensor: x with its axes permuted.",
                     examples="""
>>> import fw
>>> x = fw.zeros([2, 3, 4])
>>> fw.transpose(x, perm=[1, 0, 2]).shape
[3, 2, 4]
>>> fw.to_tensor([[1, 2, 3], [4, 5, 6]]).transpose([1, 0]).tolist()
[[1, 4], [2, 5], [3, 6]]
"""),
    "unflatten": Doc(args={"x": "The input tensor.", "axis": "The axis to split.",
                           "shape": ("list|tuple", "The sizes that replace that axis (their "
                                                   "product is its size; one may be -1).")},
                     returns="Tensor: x with axis replaced by the dimensions in shape.",
                     examples="""
>>> import fw
>>> fw.unflatten(fw.zeros([2, 6]), axis=1, shape=[2, 3]).shape
[2, 2, 3]
>>> fw.unflatten(fw.zeros([12]), 0, [-1, 4]).shape
[3, 4]
"""),
    "expand_as": Doc(args={"x": "The tensor to broadcast.",
                           "y": "A tensor of the target shape (its values are not used)."},
                     returns="Tensor: x broadcast to y's shape.",
                     examples="""
>>> import fw
>>> x = fw.to_tensor([1, 2, 3])
>>> fw.expand_as(x, fw.zeros([2, 3])).tolist()
[[1, 2, 3], [1, 2, 3]]
"""),
    "flip": Doc(args={"x": "The input tensor.",
                      "axis": ("int|list|tuple", "The axis or axes to reverse.")},
                returns="Tensor: x with the order of its elements reversed along axis.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> fw.flip(x, axis=0).tolist()
[[3, 4], [1, 2]]
>>> fw.flip(x, axis=[0, 1]).tolist()
[[4, 3], [2, 1]]
"""),
    "rot90": Doc(args={"x": "A tensor with at least 2 dimensions.",
                       "k": "The number of quarter turns (negative turns the other way).",
                       "axes": ("list|tuple", "The two axes of the plane of rotation; the "
                                              "rotation goes from the first toward the "
                                              "second.")},
                 returns="Tensor: the rotated tensor.",
                 examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> fw.rot90(x).tolist()
[[2, 4], [1, 3]]
>>> fw.rot90(x, k=2).tolist()
[[4, 3], [2, 1]]
"""),
    "roll": Doc(args={"x": "The input tensor.",
                      "shifts": ("int|list|tuple", "How far to shift (positive toward higher "
                                                   "indices), one per axis."),
                      "axis": ("int|list|tuple, optional", "The axes to shift; None shifts the "
                                                           "flattened tensor and restores the "
                                                           "shape.")},
                returns="Tensor: x with its elements shifted circularly.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
>>> fw.roll(x, 1).tolist()
[[6, 1, 2], [3, 4, 5]]
>>> fw.roll(x, shifts=1, axis=1).tolist()
[[3, 1, 2], [6, 4, 5]]
"""),
    "kron": Doc(args={"x": "The first tensor.", "y": "The second tensor."},
                returns="Tensor: the Kronecker product; each dimension is the product of x's "
                        "and y's.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> fw.kron(x, fw.ones([2, 2], dtype="int64")).tolist()
[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
"""),
    "as_strided": Doc(args={"x": "The input tensor (read in row-major order).",
                            "shape": ("list|tuple", "The shape of the result."),
                            "stride": ("list|tuple", "The step, in elements, of each dimension "
                                                     "of the result."),
                            "offset": "The index of the first element read, counted in "
                                      "elements (as PyTorch's storage offset); Paddle 3.3.1's "
                                      "offset counts bytes of x's memory, so a Paddle offset "
                                      "is fw's times the element size."},
                      returns="Tensor: a new tensor (fw copies; Paddle returns a view).",
                      examples="""
>>> import fw
>>> x = fw.arange(6)
>>> fw.as_strided(x, shape=[2, 2], stride=[2, 1]).tolist()
[[0, 1], [2, 3]]
>>> fw.as_strided(x, [3], [2], offset=1).tolist()
[1, 3, 5]
"""),
}
