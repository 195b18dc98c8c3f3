"""Reference docs of the indexing ops (``fw/core/ops/indexing.py``) whose public function is
generated; hand-written ones (``index_select``, ``masked_fill``, ``put_along_axis``, …) keep
their docstrings in ``fw/core/api/indexing.py``."""

from dataclasses import replace

from fw.core.ops.docs import Doc

_PLANE = "The {} axis of the planes the diagonal is taken from."

DOCS = {
    "gather": Doc(args={"x": "The input tensor.",
                        "index": "A 1-D (or 0-D) integer tensor of positions along axis.",
                        "axis": ("int|Tensor, optional", "The axis to gather along; None means "
                                                         "0.")},
                  returns="Tensor: x's slices at index, stacked along axis.",
                  examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4], [5, 6]])
>>> fw.gather(x, fw.to_tensor([2, 0])).tolist()
[[5, 6], [1, 2]]
>>> fw.gather(x, fw.to_tensor([1]), axis=1).tolist()
[[2], [4], [6]]
"""),
    "gather_nd": Doc(args={"x": "The input tensor.",
                           "index": "An integer tensor whose last axis holds (partial) "
                                    "coordinates into x."},
                     returns="Tensor: shape index.shape[:-1] + x.shape[index.shape[-1]:].",
                     examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> fw.gather_nd(x, fw.to_tensor([[0, 1], [1, 0]])).tolist()
[2, 3]
>>> fw.gather_nd(x, fw.to_tensor([[1]])).tolist()
[[3, 4]]
"""),
    "take_along_axis": Doc(args={"arr": "The input tensor.",
                                 "indices": "Integer indices along axis, with arr's number of "
                                            "dimensions.",
                                 "axis": "The axis to index.",
                                 "broadcast": "Whether indices and arr broadcast against each "
                                              "other (except along axis)."},
                           returns="Tensor: arr's elements at indices, with indices' shape.",
                           examples="""
>>> import fw
>>> x = fw.to_tensor([[10, 30, 20], [60, 40, 50]])
>>> idx = fw.argsort(x, axis=1)
>>> fw.take_along_axis(x, idx, axis=1).tolist()
[[10, 20, 30], [40, 50, 60]]
"""),
    "take": Doc(args={"x": "The input tensor (indexed as if flattened).",
                      "index": "Integer positions into the flattened x.",
                      "mode": "'raise' (out-of-range indices are an error; negative ones count "
                              "from the end), 'wrap' (modulo the size) or 'clip' (limited to "
                              "the valid range)."},
                returns="Tensor: the elements, with index's shape.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
>>> fw.take(x, fw.to_tensor([0, 5, -1])).tolist()
[1, 6, 6]
>>> fw.take(x, fw.to_tensor([7]), mode="wrap").tolist()
[2]
"""),
    "masked_select": Doc(args={"x": "The input tensor.",
                               "mask": "A bool tensor broadcast against x."},
                         returns="Tensor: a 1-D tensor of the elements of x where mask is True.",
                         examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2], [3, 4]])
>>> fw.masked_select(x, x > 1).tolist()
[2, 3, 4]
"""),
    "masked_scatter": Doc(args={"x": "The input tensor.",
                                "mask": "A bool tensor broadcast against x.",
                                "value": "A tensor with at least as many elements as mask has "
                                         "True entries."},
                          returns="Tensor: x with the masked positions filled, in row-major "
                                  "order, from the leading elements of value.",
                          examples="""
>>> import fw
>>> x = fw.zeros([2, 2])
>>> mask = fw.to_tensor([[True, False], [False, True]])
>>> fw.masked_scatter(x, mask, fw.to_tensor([5.0, 6.0, 7.0])).tolist()
[[5.0, 0.0], [0.0, 6.0]]
"""),
    "scatter": Doc(args={"x": "The input tensor.",
                         "index": "A 1-D integer tensor: the rows (axis 0) of x to update.",
                         "updates": "The new rows: updates[i] goes to row index[i].",
                         "overwrite": "True: a repeated index keeps one of its updates; False: "
                                      "the rows that are indexed are zeroed and then every "
                                      "update is added."},
                   returns="Tensor: a copy of x with the rows updated.",
                   examples="""
>>> import fw
>>> x = fw.ones([3, 2])
>>> index = fw.to_tensor([2, 0, 2])
>>> updates = fw.to_tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
>>> fw.scatter(x, index, updates, overwrite=False).tolist()
[[2.0, 2.0], [1.0, 1.0], [4.0, 4.0]]
>>> fw.scatter(x, fw.to_tensor([1]), fw.to_tensor([[9.0, 9.0]])).tolist()
[[1.0, 1.0], [9.0, 9.0], [1.0, 1.0]]
""", inplace="""
>>> import fw
>>> x = fw.zeros([2, 2])
>>> _ = x.scatter_(fw.to_tensor([1]), fw.to_tensor([[5.0, 6.0]]))
>>> x.tolist()
[[0.0, 0.0], [5.0, 6.0]]
"""),
    "scatter_nd_add": Doc(args={"x": "The input tensor.",
                                "index": "An integer tensor whose last axis holds (partial) "
                                         "coordinates into x.",
                                "updates": "The values to add, of shape index.shape[:-1] + "
                                           "x.shape[index.shape[-1]:]."},
                          returns="Tensor: a copy of x with updates added at index (repeated "
                                  "indices accumulate).",
                          examples="""
>>> import fw
>>> x = fw.zeros([3])
>>> index = fw.to_tensor([[1], [1], [2]])
>>> fw.scatter_nd_add(x, index, fw.to_tensor([1.0, 2.0, 5.0])).tolist()
[0.0, 3.0, 5.0]
"""),
    "diagonal": Doc(args={"x": "A tensor with at least 2 dimensions.",
                          "offset": "Which diagonal: 0 the main one, > 0 above it, < 0 below "
                                    "it.",
                          "axis1": _PLANE.format("first"), "axis2": _PLANE.format("second")},
                    returns="Tensor: the diagonals, as the last axis of the result (axis1 and "
                            "axis2 removed).",
                    examples="""
>>> import fw
>>> x = fw.to_tensor([[1, 2, 3], [4, 5, 6]])
>>> fw.diagonal(x).tolist()
[1, 5]
>>> fw.diagonal(x, offset=1).tolist()
[2, 6]
"""),
    "diagonal_scatter": Doc(args={"x": "A tensor with at least 2 dimensions.",
                                  "y": "The new diagonal values, shaped like "
                                       "fw.diagonal(x, offset, axis1, axis2).",
                                  "offset": "Which diagonal: 0 the main one, > 0 above it, < 0 "
                                            "below it.",
                                  "axis1": _PLANE.format("first"),
                                  "axis2": _PLANE.format("second")},
                            returns="Tensor: a copy of x with that diagonal replaced by y.",
                            examples="""
>>> import fw
>>> fw.diagonal_scatter(fw.zeros([2, 2]), fw.to_tensor([1.0, 2.0])).tolist()
[[1.0, 0.0], [0.0, 2.0]]
"""),
    "strided_slice": Doc(args={"x": "The input tensor.",
                               "axes": ("list|tuple", "The axes to slice."),
                               "starts": ("list|tuple|Tensor", "The start index per axis."),
                               "ends": ("list|tuple|Tensor", "The end index (excluded) per "
                                                             "axis."),
                               "strides": ("list|tuple|Tensor", "The step per axis (negative "
                                                                "steps go backward).")},
                         returns="Tensor: x[starts:ends:strides] along axes.",
                         examples="""
>>> import fw
>>> x = fw.arange(10).reshape([2, 5])
>>> fw.strided_slice(x, axes=[1], starts=[0], ends=[5], strides=[2]).tolist()
[[0, 2, 4], [5, 7, 9]]
"""),
    "shard_index": Doc(args={"input": "An int32/int64 tensor of indices in [0, index_num), "
                                      "last dimension 1.",
                             "index_num": "The size of the whole index range.",
                             "nshards": "The number of equal shards the range is split into.",
                             "shard_id": "The shard this result is relative to.",
                             "ignore_value": "The value of indices outside the shard."},
                       returns="Tensor: input - shard_id * shard_size inside the shard, "
                               "ignore_value elsewhere.",
                       examples="""
>>> import fw
>>> label = fw.to_tensor([[1], [6], [12], [19]])
>>> fw.shard_index(label, index_num=20, nshards=2, shard_id=0).tolist()
[[1], [6], [-1], [-1]]
"""),
}

DOCS["masked_scatter"] = replace(DOCS["masked_scatter"], inplace="""
>>> import fw
>>> x = fw.zeros([3])
>>> _ = x.masked_scatter_(fw.to_tensor([True, False, True]), fw.to_tensor([1.0, 2.0]))
>>> x.tolist()
[1.0, 0.0, 2.0]
""")
