"""Reference docs of the random ops (``fw/core/ops/random.py``). Samples come from fw's global
generator (``fw.seed``); the examples show shapes, dtypes and properties rather than values."""

from fw.core.ops.docs import Doc

_SHAPE = ("list|tuple|Tensor", "The shape of the result.")
_FDT = ("str|fw.dtype, optional", "A float dtype; None: the default float dtype.")
_SEED = ("int", "0 draws from the global generator (``fw.seed``); another value gives the same "
                "numbers on every call.")

DOCS = {
    "uniform": Doc(args={"shape": _SHAPE, "dtype": _FDT,
                         "min": "The lower bound (included).", "max": "The upper bound "
                                                                      "(excluded).",
                         "seed": _SEED},
                   returns="Tensor: samples uniform on [min, max).",
                   examples="""
>>> import fw
>>> x = fw.uniform([2, 3], min=0.0, max=10.0)
>>> x.shape, x.dtype
([2, 3], fw.float32)
>>> bool(((x >= 0) & (x < 10)).all())
True
>>> fw.equal_all(fw.uniform([3], seed=7), fw.uniform([3], seed=7)).item()
True
"""),
    "gaussian": Doc(args={"shape": _SHAPE, "mean": "The mean.", "std": "The standard deviation.",
                          "seed": _SEED, "dtype": _FDT},
                    returns="Tensor: samples of the normal distribution N(mean, std**2).",
                    examples="""
>>> import fw
>>> x = fw.gaussian([1000], mean=2.0, std=0.5)
>>> x.shape
[1000]
>>> abs(x.mean().item() - 2.0) < 0.1
True
"""),
    "randint": Doc(args={"low": "The lower bound (included); the upper bound when high is "
                                "None (then the lower bound is 0).",
                         "high": ("int, optional", "The upper bound (excluded)."),
                         "shape": _SHAPE,
                         "dtype": ("str|fw.dtype, optional", "'int32' or 'int64' (None).")},
                   returns="Tensor: integers drawn uniformly from [low, high).",
                   examples="""
>>> import fw
>>> x = fw.randint(0, 10, [2, 5])
>>> x.shape, x.dtype
([2, 5], fw.int64)
>>> bool(((x >= 0) & (x < 10)).all())
True
>>> fw.randint(3, shape=[4]).max().item() < 3
True
"""),
    "randint_like": Doc(args={"x": "The tensor whose shape the result has.",
                              "low": "The lower bound (included); the upper bound when high is "
                                     "None.",
                              "high": ("int, optional", "The upper bound (excluded)."),
                              "dtype": ("str|fw.dtype, optional", "The result dtype; None keeps "
                                                                  "x's.")},
                        returns="Tensor: random integers in [low, high) with x's shape.",
                        examples="""
>>> import fw
>>> x = fw.zeros([2, 2], dtype="int32")
>>> y = fw.randint_like(x, 5, 8)
>>> y.shape, y.dtype, bool(((y >= 5) & (y < 8)).all())
([2, 2], fw.int32, True)
"""),
    "randperm": Doc(args={"n": "The number of elements.",
                          "dtype": "The dtype of the result."},
                    returns="Tensor: a 1-D tensor holding 0 .. n-1 in random order.",
                    examples="""
>>> import fw
>>> p = fw.randperm(5)
>>> sorted(p.tolist())
[0, 1, 2, 3, 4]
>>> p.dtype
fw.int64
"""),
    "bernoulli": Doc(args={"x": "The probabilities of drawing 1, in [0, 1].",
                           "p": ("float, optional", "One probability for every element "
                                                    "(x then only gives the shape and dtype).")},
                     returns="Tensor: 0s and 1s with x's shape and dtype.",
                     examples="""
>>> import fw
>>> fw.bernoulli(fw.to_tensor([0.0, 1.0, 1.0])).tolist()
[0.0, 1.0, 1.0]
>>> fw.bernoulli(fw.zeros([2, 2]), p=1.0).tolist()
[[1.0, 1.0], [1.0, 1.0]]
"""),
    "binomial": Doc(args={"count": "The number of trials (integer).",
                          "prob": "The probability of success of each trial, broadcast against "
                                  "count."},
                    returns="Tensor: int64 numbers of successes, with the broadcast shape.",
                    examples="""
>>> import fw
>>> fw.binomial(fw.to_tensor([10, 10]), fw.to_tensor([0.0, 1.0])).tolist()
[0, 10]
"""),
    "multinomial": Doc(args={"x": "Non-negative weights of the categories: [C] or a batch [B, "
                                  "C] (need not sum to 1).",
                             "num_samples": "How many indices to draw per row.",
                             "replacement": "Draw with replacement; without it, num_samples <= "
                                            "the number of categories of nonzero weight."},
                       returns="Tensor: int64 category indices, shape x.shape[:-1] + "
                               "[num_samples].",
                       examples="""
>>> import fw
>>> fw.multinomial(fw.to_tensor([0.0, 0.0, 1.0]), num_samples=2, replacement=True).tolist()
[2, 2]
>>> sorted(fw.multinomial(fw.to_tensor([1.0, 1.0, 1.0]), num_samples=3).tolist())
[0, 1, 2]
"""),
    "poisson": Doc(args={"x": "The rates (>= 0), a float tensor."},
                   returns="Tensor: Poisson samples with x's shape and dtype.",
                   examples="""
>>> import fw
>>> fw.poisson(fw.to_tensor([0.0, 0.0])).tolist()
[0.0, 0.0]
>>> fw.poisson(fw.full([3], 4.0)).shape
[3]
"""),
    "standard_gamma": Doc(args={"x": "The concentrations (> 0), a float tensor."},
                          returns="Tensor: gamma(x, 1) samples with x's shape and dtype.",
                          examples="""
>>> import fw
>>> s = fw.standard_gamma(fw.full([500], 3.0))
>>> abs(s.mean().item() - 3.0) < 0.3
True
"""),
}
