"""Data types and the one promotion table.

A `DType` is a singleton per type (``fw.float32`` …) wrapping the NumPy dtype
that stores it (bfloat16 through ml_dtypes). Tensors keep NumPy arrays, so the
dtype of a tensor is looked up from its array's dtype in `from_numpy`.

Promotion (`promote_types`, `result_type`) follows Paddle 3.x where Paddle
defines a result — between floating types, and between complex and real types:
the larger type wins, and float16 with bfloat16 gives float32. Paddle leaves
integer/bool mixes undefined; there fw follows the usual lattice
(bool < uint8/int8 < int16 < int32 < int64 < floating < complex, uint8 with
int8 gives int16, an integer with a float gives the float) as PyTorch and the
Array API do. Python scalars are "weak": they take the tensor's dtype when they
are of the same kind (bool < int < float < complex), else the default dtype of
their kind (float → `get_default_dtype()`, int → int64, complex → the complex
type matching the tensor's precision).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "DType", "bool_", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "convert_dtype", "from_numpy",
    "promote_types", "result_type", "set_default_dtype", "get_default_dtype", "iinfo", "finfo",
    "ALL_DTYPES", "FLOAT_DTYPES", "COMPLEX_DTYPES", "INT_DTYPES",
    "float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64", "STORAGE_DTYPES",
    "DataTypeTag", "pstring", "raw",
]

# kinds, in promotion order
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class DType:
    """A tensor element type: ``fw.float32``, ``fw.int64``, ... (``paddle.dtype``).

    A DType compares equal to another DType, to its name (``"float32"``) and to the matching
    NumPy dtype or type; ``x.dtype`` returns one and every ``dtype=`` argument accepts one.

    Args:
        name (str): The name, e.g. "float32".
        short (str): The name in the IR text form.
        np_dtype (numpy.dtype): The NumPy dtype holding the values.
        kind (int): The kind (bool, integer, floating, complex) used by promotion.
        rank (int): The position within its kind for promotion.

    Examples:
        >>> import fw
        >>> import numpy as np
        >>> d = fw.zeros([1]).dtype
        >>> d, d == "float32", d == np.float32, d.itemsize
        (fw.float32, True, True, 4)
        >>> fw.float64.is_floating_point
        True
    """

    __slots__ = ("name", "short", "np", "itemsize", "kind", "rank", "__weakref__")

    def __init__(self, name: str, short: str, np_dtype, kind: int, rank: int):
        self.name = name
        self.short = short  # the name in the IR text form
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.kind = kind
        self.rank = rank  # position within its kind's lattice

    @property
    def is_floating_point(self) -> bool:
        """Whether the dtype is a real floating-point type (float16, bfloat16,
        float32, float64, the float8 types).

        Returns:
            bool: True for a real float dtype.

        Examples:
            >>> import fw
            >>> fw.float32.is_floating_point, fw.complex64.is_floating_point
            (True, False)
        """
        return self.kind == _FLOAT

    @property
    def is_complex(self) -> bool:
        """Whether the dtype is complex (complex64, complex128).

        Returns:
            bool: True for a complex dtype.

        Examples:
            >>> import fw
            >>> fw.complex64.is_complex, fw.float64.is_complex
            (True, False)
        """
        return self.kind == _COMPLEX

    @property
    def is_integer(self) -> bool:
        """Whether the dtype is a signed or unsigned integer type (bool is not).

        Returns:
            bool: True for an integer dtype.

        Examples:
            >>> import fw
            >>> fw.int64.is_integer, fw.uint8.is_integer, fw.bool.is_integer
            (True, True, False)
        """
        return self.kind == _INT

    @property
    def is_bool(self) -> bool:
        """Whether the dtype is bool.

        Returns:
            bool: True for fw.bool.

        Examples:
            >>> import fw
            >>> fw.bool.is_bool, fw.int8.is_bool
            (True, False)
        """
        return self.kind == _BOOL

    @property
    def is_inexact(self) -> bool:
        """Whether the dtype is floating-point or complex (NumPy's "inexact").

        Returns:
            bool: True for a float or complex dtype.

        Examples:
            >>> import fw
            >>> fw.float16.is_inexact, fw.complex128.is_inexact, fw.int32.is_inexact
            (True, True, False)
        """
        return self.kind >= _FLOAT

    def __repr__(self) -> str:
        return f"fw.{self.name}"

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        if other is self:
            return True
        if isinstance(other, DType):
            return False
        try:
            return convert_dtype(other) is self
        except (TypeError, ValueError):
            return False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self):  # copy/deepcopy keep the singleton
        return (convert_dtype, (self.name,))


bool_ = DType("bool", "bool", np.bool_, _BOOL, 0)
uint8 = DType("uint8", "u8", np.uint8, _INT, 1)
int8 = DType("int8", "i8", np.int8, _INT, 1)
int16 = DType("int16", "i16", np.int16, _INT, 2)
int32 = DType("int32", "i32", np.int32, _INT, 3)
int64 = DType("int64", "i64", np.int64, _INT, 4)
float16 = DType("float16", "f16", np.float16, _FLOAT, 1)
bfloat16 = DType("bfloat16", "bf16", ml_dtypes.bfloat16, _FLOAT, 1)
float32 = DType("float32", "f32", np.float32, _FLOAT, 2)
float64 = DType("float64", "f64", np.float64, _FLOAT, 3)
complex64 = DType("complex64", "c64", np.complex64, _COMPLEX, 2)
complex128 = DType("complex128", "c128", np.complex128, _COMPLEX, 3)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
FLOAT_DTYPES = (float16, bfloat16, float32, float64)
COMPLEX_DTYPES = (complex64, complex128)
INT_DTYPES = (uint8, int8, int16, int32, int64)

# NumPy dtype -> DType. Keyed by np.dtype (hashable, and array.dtype hits it directly).
_BY_NP: dict = {d.np: d for d in ALL_DTYPES}
_BY_NAME: dict = {}
for _d in ALL_DTYPES:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d
_BY_NAME.update({
    "bool_": bool_, "float": float32, "double": float64, "half": float16, "int": int64,
    "long": int64, "fp16": float16, "fp32": float32, "fp64": float64, "bf16": bfloat16,
    "uint16": bfloat16,  # Paddle's historical storage name for bfloat16
    "complex": complex64,
})


def from_numpy(np_dtype) -> DType:
    """The DType of a NumPy dtype; TypeError for types fw does not have."""
    try:
        return _BY_NP[np_dtype]
    except (KeyError, TypeError):
        pass
    d = np.dtype(np_dtype)
    if d in _BY_NP:
        return _BY_NP[d]
    # NumPy platform aliases (intc, longlong, …) compare equal to the canonical ones
    for k, v in _BY_NP.items():
        if k == d:
            _BY_NP[d] = v
            return v
    raise TypeError(f"fw has no dtype for NumPy dtype {d!r}; supported: "
                    + ", ".join(x.name for x in ALL_DTYPES))


def convert_dtype(dtype) -> DType:
    """Any dtype spelling (DType, str, NumPy dtype or type, Python type) -> DType."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str):
        key = dtype[7:] if dtype.startswith("paddle.") else dtype
        key = key[3:] if key.startswith("fw.") else key
        try:
            return _BY_NAME[key]
        except KeyError:
            raise TypeError(f"unknown dtype {dtype!r}; expected one of "
                            + ", ".join(x.name for x in ALL_DTYPES)) from None
    if dtype is bool:
        return bool_
    if dtype is int:
        return int64
    if dtype is float:
        return get_default_dtype()
    if dtype is complex:
        return complex64 if get_default_dtype() is not float64 else complex128
    if dtype is None:
        raise TypeError("dtype must not be None here")
    try:
        return from_numpy(np.dtype(dtype))
    except TypeError as e:
        raise TypeError(f"cannot interpret {dtype!r} as a dtype: {e}") from None


# ---------------------------------------------------------------- defaults
_default = [float32]


def set_default_dtype(d) -> None:
    """Set the default float dtype: the dtype of Python floats in fw.to_tensor and of float
    results of creation ops (fw.zeros, fw.rand, ...).

    Args:
        d (str|fw.dtype): float16, bfloat16, float32 or float64.

    Returns:
        None

    Examples:
        >>> import fw
        >>> fw.set_default_dtype("float64")
        >>> fw.to_tensor(1.5).dtype
        fw.float64
        >>> fw.set_default_dtype("float32")
    """
    d = convert_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"set_default_dtype only accepts a floating dtype "
                        f"(float16, bfloat16, float32, float64), got {d.name}")
    _default[0] = d


def get_default_dtype() -> DType:
    """The default float dtype (float32 unless changed by set_default_dtype).

    Returns:
        fw.dtype: the default float dtype.

    Examples:
        >>> import fw
        >>> fw.get_default_dtype()
        fw.float32
    """
    return _default[0]


# ---------------------------------------------------------------- promotion
def _promote_pair(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.kind != b.kind:
        hi, lo = (a, b) if a.kind > b.kind else (b, a)
        if hi.kind == _COMPLEX and lo is float64:
            return complex128
        return hi
    if a.kind == _FLOAT and a.rank == b.rank:  # float16 with bfloat16
        return float32
    if a.kind == _INT and a.rank == b.rank:  # uint8 with int8
        return int16
    return a if a.rank > b.rank else b


_TABLE: dict = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(a, b) -> DType:
    """Result dtype of an elementwise op between tensors of dtypes a and b."""
    return _TABLE[(convert_dtype(a), convert_dtype(b))]


def _scalar_kind(v) -> int:
    if isinstance(v, (bool, np.bool_)):
        return _BOOL
    if isinstance(v, (int, np.integer)):
        return _INT
    if isinstance(v, (float, np.floating)):
        return _FLOAT
    if isinstance(v, (complex, np.complexfloating)):
        return _COMPLEX
    raise TypeError(f"not a scalar: {type(v).__name__}")


def scalar_dtype(v) -> DType:
    """The dtype a lone Python scalar gets (to_tensor(3.0) -> float32)."""
    k = _scalar_kind(v)
    if k == _BOOL:
        return bool_
    if k == _INT:
        return int64
    if k == _FLOAT:
        return get_default_dtype()
    return complex128 if get_default_dtype() is float64 else complex64


def promote_with_scalar(t: DType, v) -> DType:
    """Result dtype of tensor(dtype t) op Python scalar v (the scalar is weak)."""
    k = _scalar_kind(v)
    if k <= t.kind:
        return t
    if k == _INT:
        return int64
    if k == _FLOAT:
        return get_default_dtype()
    return complex128 if t is float64 else complex64


def result_type(*args) -> DType:
    """Promote tensors' dtypes (DType entries) and Python scalars together:
    scalars only matter when they are of a higher kind than every dtype."""
    dts = [a for a in args if isinstance(a, DType)]
    scalars = [a for a in args if not isinstance(a, DType)]
    if not dts:
        if not scalars:
            raise TypeError("result_type needs at least one argument")
        out = scalar_dtype(scalars[0])
        for s in scalars[1:]:
            out = _TABLE[(out, scalar_dtype(s))]
        return out
    out = dts[0]
    for d in dts[1:]:
        out = _TABLE[(out, d)]
    for s in scalars:
        out = promote_with_scalar(out, s)
    return out


# ---------------------------------------------------------------- iinfo / finfo
class iinfo:
    """Machine limits of an integer dtype (``paddle.iinfo``).

    Attributes: ``min``, ``max``, ``bits`` and ``dtype``.

    Args:
        dtype (str|fw.dtype): An integer dtype.

    Examples:
        >>> import fw
        >>> info = fw.iinfo(fw.int8)
        >>> info.min, info.max, info.bits
        (-128, 127, 8)
    """

    def __init__(self, dtype):
        d = convert_dtype(dtype)
        if d.kind not in (_INT, _BOOL):
            raise TypeError(f"iinfo expects an integer dtype, got {d.name}")
        i = np.iinfo(d.np) if d.kind == _INT else None
        self.dtype = d.name
        self.bits = d.itemsize * 8
        self.min = int(i.min) if i is not None else 0
        self.max = int(i.max) if i is not None else 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype})"


class finfo:
    """Machine limits of a floating dtype (``paddle.finfo``).

    Attributes: ``min``, ``max``, ``eps``, ``tiny``, ``smallest_normal``, ``resolution``,
    ``bits`` and ``dtype`` (for a complex dtype, those of its real part).

    Args:
        dtype (str|fw.dtype): A floating or complex dtype.

    Examples:
        >>> import fw
        >>> fw.finfo(fw.float32).eps
        1.1920928955078125e-07
        >>> fw.finfo("float16").max
        65504.0
    """

    def __init__(self, dtype):
        d = convert_dtype(dtype)
        if d.kind not in (_FLOAT, _COMPLEX):
            raise TypeError(f"finfo expects a floating or complex dtype, got {d.name}")
        npd = d.np
        if d.kind == _COMPLEX:
            npd = np.dtype(np.float32 if d is complex64 else np.float64)
        f = ml_dtypes.finfo(npd) if d.kind == _FLOAT and d.rank <= 1 and d is not float16 \
            else np.finfo(npd)  # bfloat16 and the float8 formats are ml_dtypes types
        self.dtype = d.name if d.kind == _FLOAT else ("float32" if d is complex64 else "float64")
        self.bits = int(f.bits)
        self.eps = float(f.eps)
        self.min = float(f.min)
        self.max = float(f.max)
        self.tiny = float(f.tiny)
        self.smallest_normal = float(f.smallest_normal)
        self.resolution = float(f.resolution)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.smallest_normal}, tiny={self.tiny}, "
                f"bits={self.bits}, dtype={self.dtype})")


# ---------------------------------------------------------------- storage dtypes
# Paddle 3.3's float8 formats (through ml_dtypes, as bfloat16) and its wider unsigned
# integers. Tensors of these dtypes are created, cast, copied, saved and compared like
# any other; they are not among ALL_DTYPES, so the op records do not sample them and an
# op whose kernel NumPy cannot run on them says so. Promotion: a float8 with a wider
# float gives the wider one, the two float8 formats give float32 (as float16 with
# bfloat16); uint32/uint64 with integers follow NumPy (uint64 with a signed int: float64).
float8_e4m3fn = DType("float8_e4m3fn", "f8e4m3fn", ml_dtypes.float8_e4m3fn, _FLOAT, 0)
float8_e5m2 = DType("float8_e5m2", "f8e5m2", ml_dtypes.float8_e5m2, _FLOAT, 0)
uint32 = DType("uint32", "u32", np.uint32, _INT, 4)
uint64 = DType("uint64", "u64", np.uint64, _INT, 5)
STORAGE_DTYPES = (float8_e4m3fn, float8_e5m2, uint32, uint64)
uint16 = bfloat16  # Paddle 3.3: paddle.uint16 is paddle.bfloat16 (its storage name)

for _d in STORAGE_DTYPES:
    _BY_NP[_d.np] = _d
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.short] = _d


def _promote_storage(a: DType, b: DType) -> DType:
    if {a, b} & {uint32, uint64} and a.kind <= _INT and b.kind <= _INT:
        return from_numpy(np.promote_types(a.np, b.np))
    return _promote_pair(a, b)


for _a in ALL_DTYPES + STORAGE_DTYPES:
    for _b in STORAGE_DTYPES:
        _TABLE[(_a, _b)] = _promote_storage(_a, _b)
        _TABLE[(_b, _a)] = _promote_storage(_b, _a)


class DataTypeTag:
    """A Paddle ``DataType`` that no tensor of fw can have: ``pstring`` (Paddle's string
    tensors) and ``raw`` (``DataType.UNDEFINED``). They compare equal only to
    themselves; using one as a tensor dtype raises a TypeError naming it."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"fw.{self.name}"


pstring = DataTypeTag("pstring")
raw = DataTypeTag("raw")
