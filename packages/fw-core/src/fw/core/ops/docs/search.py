"""Reference docs of the sorting and searching ops (``fw/core/ops/search.py``)."""

from fw.core.ops.docs import Doc

_SORT_ARGS = {"x": "The input tensor.", "axis": "The axis to sort along.",
              "descending": "Sort largest first.",
              "stable": "Keep equal elements in their original order (fw's sort is always "
                        "stable; the argument is accepted for Paddle)."}

DOCS = {
    "sort": Doc(args=_SORT_ARGS, returns="Tensor: the sorted values, with x's shape.",
                examples="""
>>> import fw
>>> x = fw.to_tensor([[3, 1, 2], [0, 5, 4]])
>>> fw.sort(x).tolist()
[[1, 2, 3], [0, 4, 5]]
>>> fw.sort(x, axis=0, descending=True).tolist()
[[3, 5, 4], [0, 1, 2]]
"""),
    "argsort": Doc(args=_SORT_ARGS, returns="Tensor: int64 indices that sort x along axis.",
                   examples="""
>>> import fw
>>> x = fw.to_tensor([[3, 1, 2], [0, 5, 4]])
>>> fw.argsort(x).tolist()
[[1, 2, 0], [0, 2, 1]]
>>> fw.argsort(x, descending=True).tolist()
[[0, 2, 1], [1, 2, 0]]
"""),
    "topk": Doc(args={"x": "The input tensor.", "k": ("int|Tensor", "How many elements."),
                      "axis": ("int, optional", "The axis to search; None means the last."),
                      "largest": "Take the largest (True) or the smallest (False) elements.",
                      "sorted": "Return them in order (largest first for largest=True)."},
                returns="tuple(Tensor, Tensor): the values and their int64 indices, with "
                        "axis of size k.",
                examples="""
>>> import fw
>>> values, indices = fw.topk(fw.to_tensor([1, 4, 5, 2, 3]), k=2)
>>> values.tolist(), indices.tolist()
([5, 4], [2, 1])
>>> fw.topk(fw.to_tensor([[1, 4], [3, 2]]), k=1, largest=False)[0].tolist()
[[1], [2]]
"""),
    "kthvalue": Doc(args={"x": "The input tensor.", "k": "Which smallest element (1 is the "
                                                         "smallest).",
                          "axis": ("int, optional", "The axis to search; None means the "
                                                    "last."),
                          "keepdim": "Whether axis stays as a dimension of size 1."},
                    returns="tuple(Tensor, Tensor): the k-th smallest values and their int64 "
                            "indices.",
                    examples="""
>>> import fw
>>> values, indices = fw.kthvalue(fw.to_tensor([[5, 1, 4], [2, 9, 3]]), k=2)
>>> values.tolist(), indices.tolist()
([4, 3], [2, 2])
"""),
    "mode": Doc(args={"x": "The input tensor.", "axis": "The axis to search.",
                      "keepdim": "Whether axis stays as a dimension of size 1."},
                returns="tuple(Tensor, Tensor): the most frequent values and the int64 index of "
                        "their last occurrence.",
                examples="""
>>> import fw
>>> values, indices = fw.mode(fw.to_tensor([[1, 2, 2, 3], [4, 4, 5, 5]]))
>>> values.tolist(), indices.tolist()
([2, 4], [2, 1])
"""),
    "searchsorted": Doc(args={"sorted_sequence": "A tensor sorted ascending along its last "
                                                 "axis.",
                              "values": "The values to place (a tensor, or a number).",
                              "out_int32": "Give int32 indices instead of int64.",
                              "right": "For equal values: False gives the first suitable "
                                       "position, True the last."},
                        returns="Tensor: the insertion positions, with values' shape.",
                        examples="""
>>> import fw
>>> seq = fw.to_tensor([1, 3, 5, 7])
>>> fw.searchsorted(seq, fw.to_tensor([3, 6, 9])).tolist()
[1, 3, 4]
>>> fw.searchsorted(seq, fw.to_tensor([3]), right=True).tolist()
[2]
"""),
}
