"""Recurrent layers: cells (SimpleRNNCell, LSTMCell, GRUCell), the RNN/BiRNN
wrappers that unroll any cell over time, and the multi-layer SimpleRNN/LSTM/GRU.

Gate layouts follow Paddle (and PyTorch): ``weight_ih`` is ``[G*hidden,
input_size]``, ``weight_hh`` ``[G*hidden, hidden]``, with gates (i, f, g, o) for
LSTM and (r, z, c) for GRU:

- SimpleRNN: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``
- LSTM: ``i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh)``;
  ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``; ``h' = sigmoid(o) tanh(c')``
  (times ``W_ho^T`` with ``proj_size``)
- GRU: ``r = sigmoid(x_r + h_r)``, ``z = sigmoid(x_z + h_z)``,
  ``c = tanh(x_c + r * h_c)`` (``x_* = x W_ih^T + b_ih`` and ``h_* = h W_hh^T + b_hh``
  split in three); ``h' = z h + (1 - z) c``

Every parameter starts uniform in ``[-1/sqrt(hidden), 1/sqrt(hidden)]``.

With ``sequence_length``, steps past a sequence's length leave its state unchanged
and produce zero outputs (so the final state is the one at its last valid step,
and the reverse direction of a BiRNN starts at that step).
"""

from __future__ import annotations

import math

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F
from fw.nn import initializer as I
from fw.nn.layer.container import LayerList
from fw.nn.layer.layers import Layer

__all__ = ["RNNCellBase", "SimpleRNNCell", "LSTMCell", "GRUCell", "RNN", "BiRNN", "SimpleRNN",
           "LSTM", "GRU"]


def _map(fn, *structs):
    """Apply `fn` leaf-wise over equally nested tuples/lists of tensors."""
    s = structs[0]
    if isinstance(s, (tuple, list)):
        return type(s)(_map(fn, *parts) for parts in zip(*structs))
    return fn(*structs)


def _first(s):
    while isinstance(s, (tuple, list)):
        s = s[0]
    return s


def _is_shape(s):
    return isinstance(s, (tuple, list)) and all(isinstance(d, int) for d in s)


def _batch_full(ref, batch_dim, shape, value, dtype):
    """A ``[batch] + shape`` tensor of `value` with the batch size of `ref` along
    `batch_dim` -- also when that size is dynamic (-1) in a program being built."""
    b = ref.shape[batch_dim]
    if b >= 0:
        return fw.full([b] + list(shape), value, dtype)
    others = [i for i in range(len(ref.shape)) if i != batch_dim % len(ref.shape)]
    col = fw.full_like(ref.sum(axis=others) if others else ref, value, dtype)  # [batch]
    return col.reshape([-1] + [1] * len(shape)).tile([1] + list(shape))


class RNNCellBase(Layer):
    """Base class of recurrent cells. A cell maps ``(inputs, states)`` to
    ``(outputs, new_states)`` for one time step; `RNN` unrolls it over a sequence.
    Subclasses define ``state_shape`` (per-sample shapes, nested for several states)
    and get `get_initial_states` from it.

    Args:
        name_scope (str, optional): as for `Layer`. Default: None.
        dtype (str, optional): the parameters' dtype, as for `Layer`. Default: None.

    Examples:
        >>> import fw
        >>> class Accumulate(fw.nn.RNNCellBase):
        ...     @property
        ...     def state_shape(self):
        ...         return (2,)
        ...     def forward(self, inputs, states=None):
        ...         if states is None:
        ...             states = self.get_initial_states(inputs)
        ...         new = states + inputs
        ...         return new, new
        >>> out, final = fw.nn.RNN(Accumulate())(fw.ones([1, 3, 2]))
        >>> final.tolist()
        [[3.0, 3.0]]
    """

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value=0.0,
                           batch_dim_idx=0):
        """Initial states filled with ``init_value``, with the batch size read from
        ``batch_ref`` (nested like the cell's ``state_shape``; for an LSTM cell a pair).

        Args:
            batch_ref (Tensor): a tensor whose axis ``batch_dim_idx`` is the batch size.
            shape (list|tuple, optional): the per-sample state shape; the cell's
                ``state_shape`` when None. Default: None.
            dtype (str, optional): the dtype; the cell's when None. Default: None.
            init_value (float, optional): the fill value. Default: 0.0.
            batch_dim_idx (int, optional): the batch axis of ``batch_ref``. Default: 0.

        Returns:
            Tensor|tuple: the states, ``[B, *state_shape]`` each.

        Examples:
            >>> import fw
            >>> cell = fw.nn.LSTMCell(4, 8)
            >>> h, c = cell.get_initial_states(fw.ones([3, 4]))
            >>> h.shape, c.shape
            ([3, 8], [3, 8])
        """
        ref = _first(batch_ref)
        shape = self.state_shape if shape is None else shape
        if dtype is None:
            dtype = ref.dtype if ref.dtype.is_floating_point else self._dtype

        def build(s):
            if _is_shape(s):
                return _batch_full(ref, batch_dim_idx, [d for d in s if d != -1], init_value,
                                   dtype)
            return type(s)(build(e) for e in s)

        return build(shape)

    @property
    def state_shape(self):
        """The per-sample shape of the cell's state(s); subclasses define it.

        Returns:
            tuple: the shape, or a tuple of shapes.

        Examples:
            >>> import fw
            >>> fw.nn.GRUCell(4, 8).state_shape
            (8,)
        """
        raise NotImplementedError

    @property
    def state_dtype(self):
        """The dtype of the cell's states (the default float dtype).

        Returns:
            str|fw.dtype: the dtype.

        Examples:
            >>> import fw
            >>> fw.nn.GRUCell(4, 8).state_dtype
            'float32'
        """
        return self._dtype

    def _uniform(self, hidden_size):
        std = 1.0 / math.sqrt(hidden_size)
        return I.Uniform(-std, std)

    def _make_params(self, gates, input_size, hidden_size, weight_ih_attr, weight_hh_attr,
                     bias_ih_attr, bias_hh_attr):
        init = self._uniform(hidden_size)
        self.weight_ih = self.create_parameter([gates * hidden_size, input_size],
                                               weight_ih_attr, default_initializer=init)
        self.weight_hh = self.create_parameter([gates * hidden_size, hidden_size],
                                               weight_hh_attr, default_initializer=init)
        self.bias_ih = self.create_parameter([gates * hidden_size], bias_ih_attr, is_bias=True,
                                             default_initializer=init)
        self.bias_hh = self.create_parameter([gates * hidden_size], bias_hh_attr, is_bias=True,
                                             default_initializer=init)

    # the unrolled layers precompute the input projection of every step at once
    def _project(self, x):
        y = fw.matmul(x, self.weight_ih, transpose_y=True)
        return y + self.bias_ih if self.bias_ih is not None else y

    def _hh(self, h):
        y = fw.matmul(h, self.weight_hh, transpose_y=True)
        return y + self.bias_hh if self.bias_hh is not None else y

    def forward(self, inputs, states=None):
        if states is None:
            states = self.get_initial_states(inputs)
        return self._step(self._project(inputs), states)


class SimpleRNNCell(RNNCellBase):
    """An Elman RNN cell: ``h' = act(x @ W_ih^T + b_ih + h @ W_hh^T + b_hh)``.

    ``forward(inputs, states=None)`` returns ``(h', h')``; states default to zeros.
    The weights are ``weight_ih [hidden_size, input_size]`` and
    ``weight_hh [hidden_size, hidden_size]``, all parameters uniform in
    ``[-1/sqrt(hidden_size), 1/sqrt(hidden_size)]`` at the start.

    Args:
        input_size (int): the size of the input.
        hidden_size (int): the size of the hidden state.
        activation (str, optional): ``"tanh"`` or ``"relu"``. Default: "tanh".
        weight_ih_attr (ParamAttr, optional): attributes of ``weight_ih``. Default: None.
        weight_hh_attr (ParamAttr, optional): attributes of ``weight_hh``. Default: None.
        bias_ih_attr (ParamAttr|bool, optional): attributes of ``bias_ih``; False for none.
            Default: None.
        bias_hh_attr (ParamAttr|bool, optional): attributes of ``bias_hh``; False for none.
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Shape:
        - inputs: ``[B, input_size]``; states: ``[B, hidden_size]``.
        - outputs and new states: ``[B, hidden_size]``.

    Examples:
        >>> import fw
        >>> cell = fw.nn.SimpleRNNCell(16, 32)
        >>> y, h = cell(fw.randn([4, 16]))
        >>> y.shape, h.shape
        ([4, 32], [4, 32])
        >>> y, h = cell(fw.randn([4, 16]), h)
    """

    def __init__(self, input_size, hidden_size, activation="tanh", weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__()
        if hidden_size <= 0:
            raise InvalidArgumentError(f"SimpleRNNCell: hidden_size must be positive, got "
                                       f"{hidden_size}")
        if activation not in ("tanh", "relu"):
            raise InvalidArgumentError(f"SimpleRNNCell: activation must be 'tanh' or 'relu', "
                                       f"got {activation!r}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.activation = activation
        self._act = fw.tanh if activation == "tanh" else F.relu
        self._make_params(1, input_size, hidden_size, weight_ih_attr, weight_hh_attr,
                          bias_ih_attr, bias_hh_attr)

    @property
    def state_shape(self):
        """The per-sample shape of the state(s) of this cell (without the batch axis).

        Returns:
            tuple: the shape, or a tuple of shapes for several states.

        Examples:
            >>> import fw
            >>> fw.nn.SimpleRNNCell(4, 8).state_shape
            (8,)
        """
        return (self.hidden_size,)

    def _step(self, xw, h):
        h = self._act(xw + self._hh(h))
        return h, h

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        return s if self.activation == "tanh" else s + f", activation={self.activation}"


class LSTMCell(RNNCellBase):
    """A long short-term memory cell.

    With gates ``i, f, g, o = split(x @ W_ih^T + b_ih + h @ W_hh^T + b_hh)``:
    ``c' = sigmoid(f) * c + sigmoid(i) * tanh(g)`` and ``h' = sigmoid(o) * tanh(c')``
    (then ``h' @ W_ho^T`` with ``proj_size``). ``forward(inputs, states=None)`` returns
    ``(h', (h', c'))``; states ``(h, c)`` default to zeros. The gate order (i, f, g, o)
    is Paddle's and PyTorch's.

    Args:
        input_size (int): the size of the input.
        hidden_size (int): the size of the cell state.
        weight_ih_attr (ParamAttr, optional): attributes of ``weight_ih``. Default: None.
        weight_hh_attr (ParamAttr, optional): attributes of ``weight_hh``. Default: None.
        bias_ih_attr (ParamAttr|bool, optional): attributes of ``bias_ih``; False for none.
            Default: None.
        bias_hh_attr (ParamAttr|bool, optional): attributes of ``bias_hh``; False for none.
            Default: None.
        proj_size (int, optional): when > 0, project h to this size (< hidden_size) with
            ``weight_ho [proj_size, hidden_size]``. Default: 0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Shape:
        - inputs: ``[B, input_size]``; states: ``(h [B, hidden_size], c [B, hidden_size])``.
        - outputs: ``[B, hidden_size]`` (``proj_size`` with projection).

    Examples:
        >>> import fw
        >>> cell = fw.nn.LSTMCell(16, 32)
        >>> y, (h, c) = cell(fw.randn([4, 16]))
        >>> y.shape, h.shape, c.shape
        ([4, 32], [4, 32], [4, 32])
        >>> cell.weight_ih.shape
        [128, 16]
    """

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, proj_size=0, name=None):
        super().__init__()
        if hidden_size <= 0:
            raise InvalidArgumentError(f"LSTMCell: hidden_size must be positive, got "
                                       f"{hidden_size}")
        if proj_size < 0 or (proj_size and proj_size >= hidden_size):
            raise InvalidArgumentError(f"LSTMCell: proj_size must be in [0, hidden_size), got "
                                       f"{proj_size}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.proj_size = proj_size
        h_in = proj_size or hidden_size
        init = self._uniform(hidden_size)
        self.weight_ih = self.create_parameter([4 * hidden_size, input_size], weight_ih_attr,
                                               default_initializer=init)
        self.weight_hh = self.create_parameter([4 * hidden_size, h_in], weight_hh_attr,
                                               default_initializer=init)
        self.bias_ih = self.create_parameter([4 * hidden_size], bias_ih_attr, is_bias=True,
                                             default_initializer=init)
        self.bias_hh = self.create_parameter([4 * hidden_size], bias_hh_attr, is_bias=True,
                                             default_initializer=init)
        if proj_size:
            self.weight_ho = self.create_parameter([proj_size, hidden_size], weight_hh_attr,
                                                   default_initializer=init)

    @property
    def state_shape(self):
        """The per-sample shape of the state(s) of this cell (without the batch axis).

        Returns:
            tuple: the shape, or a tuple of shapes for several states.

        Examples:
            >>> import fw
            >>> fw.nn.LSTMCell(4, 8).state_shape
            ((8,), (8,))
        """
        return ((self.proj_size or self.hidden_size,), (self.hidden_size,))

    def _step(self, xw, states):
        h, c = states
        gates = xw + self._hh(h)
        i, f, g, o = fw.split(gates, 4, axis=-1)
        c = fw.sigmoid(f) * c + fw.sigmoid(i) * fw.tanh(g)
        h = fw.sigmoid(o) * fw.tanh(c)
        if self.proj_size:
            h = fw.matmul(h, self.weight_ho, transpose_y=True)
        return h, (h, c)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        return s + (f", proj_size={self.proj_size}" if self.proj_size else "")


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell.

    With ``x_r, x_z, x_c = split(x @ W_ih^T + b_ih)`` and
    ``h_r, h_z, h_c = split(h @ W_hh^T + b_hh)``: ``r = sigmoid(x_r + h_r)``,
    ``z = sigmoid(x_z + h_z)``, ``c = tanh(x_c + r * h_c)`` and
    ``h' = z * h + (1 - z) * c``. ``forward(inputs, states=None)`` returns ``(h', h')``.

    Args:
        input_size (int): the size of the input.
        hidden_size (int): the size of the hidden state.
        weight_ih_attr (ParamAttr, optional): attributes of ``weight_ih``. Default: None.
        weight_hh_attr (ParamAttr, optional): attributes of ``weight_hh``. Default: None.
        bias_ih_attr (ParamAttr|bool, optional): attributes of ``bias_ih``; False for none.
            Default: None.
        bias_hh_attr (ParamAttr|bool, optional): attributes of ``bias_hh``; False for none.
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Shape:
        - inputs: ``[B, input_size]``; states: ``[B, hidden_size]``.
        - outputs and new states: ``[B, hidden_size]``.

    Examples:
        >>> import fw
        >>> cell = fw.nn.GRUCell(16, 32)
        >>> y, h = cell(fw.randn([4, 16]))
        >>> y.shape, cell.weight_hh.shape
        ([4, 32], [96, 32])
    """

    def __init__(self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__()
        if hidden_size <= 0:
            raise InvalidArgumentError(f"GRUCell: hidden_size must be positive, got "
                                       f"{hidden_size}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self._make_params(3, input_size, hidden_size, weight_ih_attr, weight_hh_attr,
                          bias_ih_attr, bias_hh_attr)

    @property
    def state_shape(self):
        """The per-sample shape of the state(s) of this cell (without the batch axis).

        Returns:
            tuple: the shape, or a tuple of shapes for several states.

        Examples:
            >>> import fw
            >>> fw.nn.GRUCell(4, 8).state_shape
            (8,)
        """
        return (self.hidden_size,)

    def _step(self, xw, h):
        x_r, x_z, x_c = fw.split(xw, 3, axis=-1)
        h_r, h_z, h_c = fw.split(self._hh(h), 3, axis=-1)
        r = fw.sigmoid(x_r + h_r)
        z = fw.sigmoid(x_z + h_z)
        c = fw.tanh(x_c + r * h_c)
        h = z * h + (1.0 - z) * c
        return h, h

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


# ---------------------------------------------------------------- unrolling
def _step_mask(sequence_length, steps, dtype=None):
    """[T, B, 1] bool: step t is inside sequence b."""
    m = F.sequence_mask(sequence_length, steps, dtype="bool")  # [B, T]
    return m.transpose([1, 0]).unsqueeze(-1)


def _unroll(step, xs, states, mask, reverse):
    """Run ``step(x_t, states) -> (out, states)`` over time-major `xs` (a list of
    per-step inputs); returns (list of outputs, final states)."""
    n = len(xs)
    outs = [None] * n
    order = range(n - 1, -1, -1) if reverse else range(n)
    for t in order:
        out, new = step(xs[t], states)
        if mask is not None:
            m = mask[t]
            new = _map(lambda a, b, m=m: fw.where(m, a, b), new, states)
            out = fw.where(m, out, fw.zeros_like(out))
        states = new
        outs[t] = out
    return outs, states


def _time_major(x, time_major):
    return _map(lambda t: t if time_major else t.transpose(
        [1, 0] + list(range(2, len(t.shape)))), x)


class RNN(Layer):
    """Unroll a cell over the time axis of a sequence.

    ``forward(inputs, initial_states=None, sequence_length=None, **kwargs)`` returns
    ``(outputs, final_states)``: the per-step outputs stacked along time, and the states
    after the last (valid) step. Extra keyword arguments are passed to the cell.

    Args:
        cell (RNNCellBase): the cell, any layer ``cell(x_t, states) -> (out, states)`` with
            ``get_initial_states``.
        is_reverse (bool, optional): process the sequence from its end. Default: False.
        time_major (bool, optional): inputs are ``[T, B, ...]`` instead of ``[B, T, ...]``.
            Default: False.

    Shape:
        - inputs: ``[B, T, input_size]`` (``[T, B, ...]`` when time-major).
        - outputs: ``[B, T, hidden_size]``; final states: the cell's state shapes.

    Examples:
        >>> import fw
        >>> rnn = fw.nn.RNN(fw.nn.GRUCell(16, 32))
        >>> y, h = rnn(fw.randn([4, 10, 16]))
        >>> y.shape, h.shape
        ([4, 10, 32], [4, 32])
    """

    def __init__(self, cell, is_reverse=False, time_major=False):
        super().__init__()
        self.cell = cell
        self.is_reverse = is_reverse
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        x = _time_major(inputs, self.time_major)
        steps = _first(x).shape[0]
        if initial_states is None:
            initial_states = self.cell.get_initial_states(x, batch_dim_idx=1)
        mask = None if sequence_length is None else _step_mask(sequence_length, steps)
        xs = [_map(lambda t, i=i: t[i], x) for i in range(steps)]
        outs, final = _unroll(lambda xt, s: self.cell(xt, s, **kwargs), xs, initial_states,
                              mask, self.is_reverse)
        out = _map(lambda *ts: fw.stack(list(ts), axis=0), *outs) if outs else outs
        return _time_major(out, self.time_major), final


class BiRNN(Layer):
    """Run one cell forwards and another backwards over a sequence; the outputs are
    concatenated on the last axis and the final states returned as
    ``(states_fw, states_bw)``.

    Args:
        cell_fw (RNNCellBase): the cell for the forward direction.
        cell_bw (RNNCellBase): the cell for the backward direction.
        time_major (bool, optional): inputs are ``[T, B, ...]``. Default: False.

    Shape:
        - inputs: ``[B, T, input_size]``.
        - outputs: ``[B, T, hidden_fw + hidden_bw]``.

    Examples:
        >>> import fw
        >>> birnn = fw.nn.BiRNN(fw.nn.LSTMCell(16, 32), fw.nn.LSTMCell(16, 32))
        >>> y, (s_fw, s_bw) = birnn(fw.randn([4, 10, 16]))
        >>> y.shape, s_fw[0].shape
        ([4, 10, 64], [4, 32])
    """

    def __init__(self, cell_fw, cell_bw, time_major=False):
        super().__init__()
        self.cell_fw = cell_fw
        self.cell_bw = cell_bw
        self.time_major = time_major

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        if initial_states is None:
            initial_states = (None, None)
        elif not isinstance(initial_states, (tuple, list)) or len(initial_states) != 2:
            raise InvalidArgumentError("BiRNN: initial_states must be (states_fw, states_bw)")
        fw_rnn = RNN(self.cell_fw, False, self.time_major)
        bw_rnn = RNN(self.cell_bw, True, self.time_major)
        out_f, st_f = fw_rnn(inputs, initial_states[0], sequence_length, **kwargs)
        out_b, st_b = bw_rnn(inputs, initial_states[1], sequence_length, **kwargs)
        return fw.concat([out_f, out_b], axis=-1), (st_f, st_b)


class _RNNBase(LayerList):
    """Multi-layer, optionally bidirectional recurrent network of one cell type."""

    _cell = None
    _gates = 1

    def __init__(self, mode, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, **cell_kw):
        super().__init__()
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise InvalidArgumentError(f"{mode}: direction must be 'forward', 'bidirect' or "
                                       f"'bidirectional', got {direction!r}")
        if num_layers < 1:
            raise InvalidArgumentError(f"{mode}: num_layers must be >= 1, got {num_layers}")
        if not 0 <= dropout <= 1:
            raise InvalidArgumentError(f"{mode}: dropout must be in [0, 1], got {dropout}")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.direction = direction
        self.num_directions = 2 if direction != "forward" else 1
        self.time_major = time_major
        self.dropout = dropout
        self.proj_size = cell_kw.get("proj_size", 0)
        out_size = self.proj_size or hidden_size
        attrs = dict(weight_ih_attr=weight_ih_attr, weight_hh_attr=weight_hh_attr,
                     bias_ih_attr=bias_ih_attr, bias_hh_attr=bias_hh_attr)
        cls = type(self)._cell
        for i in range(num_layers):
            in_size = input_size if i == 0 else out_size * self.num_directions
            if self.num_directions == 1:
                self.append(RNN(cls(in_size, hidden_size, **attrs, **cell_kw),
                                time_major=time_major))
            else:
                self.append(BiRNN(cls(in_size, hidden_size, **attrs, **cell_kw),
                                  cls(in_size, hidden_size, **attrs, **cell_kw), time_major))
        # Paddle's flat names (weight_ih_l0, ..._reverse) for the same parameters
        for i, layer in enumerate(self):
            cells = [layer.cell] if self.num_directions == 1 else [layer.cell_fw, layer.cell_bw]
            for d, cell in enumerate(cells):
                sfx = "_reverse" if d else ""
                for pname in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_ho"):
                    p = cell._parameters.get(pname)
                    if p is not None:
                        setattr(self, f"{pname}_l{i}{sfx}", p)

    def _cells(self, i):
        layer = self[i]
        return [layer.cell] if self.num_directions == 1 else [layer.cell_fw, layer.cell_bw]

    def _init_states(self, x, initial_states):
        """Per (layer, direction) initial states."""
        n = self.num_layers * self.num_directions
        b = x.shape[1]
        if initial_states is None:
            h = _batch_full(x, 1, [self.proj_size or self.hidden_size], 0.0, x.dtype)
            if self.mode == "LSTM":
                c = _batch_full(x, 1, [self.hidden_size], 0.0, x.dtype)
                return [(h, c)] * n
            return [h] * n
        if self.mode == "LSTM":
            if not isinstance(initial_states, (tuple, list)) or len(initial_states) != 2:
                raise InvalidArgumentError("LSTM: initial_states must be (h0, c0)")
            h, c = initial_states
            self._check_state(h, n, b, self.proj_size or self.hidden_size, "h0")
            self._check_state(c, n, b, self.hidden_size, "c0")
            return [(h[k], c[k]) for k in range(n)]
        self._check_state(initial_states, n, b, self.hidden_size, "initial_states")
        return [initial_states[k] for k in range(n)]

    def _check_state(self, s, n, b, h, what):
        want = [n, b, h]
        if len(s.shape) != 3 or any(g != w and g >= 0 and w >= 0
                                    for g, w in zip(s.shape, want)):
            raise InvalidArgumentError(f"{self.mode}: {what} must have shape [num_layers * "
                                       f"num_directions, batch, hidden] = {want}, got "
                                       f"{list(s.shape)}")

    def forward(self, inputs, initial_states=None, sequence_length=None):
        x = inputs if self.time_major else inputs.transpose([1, 0, 2])
        if len(x.shape) != 3 or x.shape[2] != self.input_size:
            lead = "time, batch" if self.time_major else "batch, time"
            raise InvalidArgumentError(f"{self.mode}: inputs must be [{lead}, "
                                       f"{self.input_size}], got {list(inputs.shape)}")
        steps = x.shape[0]
        init = self._init_states(x, initial_states)
        mask = None if sequence_length is None else _step_mask(sequence_length, steps)
        finals = []
        for i in range(self.num_layers):
            if i > 0 and self.dropout > 0:
                x = F.dropout(x, self.dropout, training=self.training)
            outs = []
            for d, cell in enumerate(self._cells(i)):
                xw = cell._project(x)
                xs = [xw[t] for t in range(steps)]
                o, st = _unroll(cell._step, xs, init[i * self.num_directions + d], mask,
                                reverse=d == 1)
                outs.append(fw.stack(o, axis=0) if o else xw[:, :, :0])
                finals.append(st)
            x = outs[0] if len(outs) == 1 else fw.concat(outs, axis=-1)
        out = x if self.time_major else x.transpose([1, 0, 2])
        if self.mode == "LSTM":
            h = fw.stack([s[0] for s in finals], axis=0)
            c = fw.stack([s[1] for s in finals], axis=0)
            return out, (h, c)
        return out, fw.stack(finals, axis=0)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.direction != "forward":
            s += f", direction={self.direction}"
        if self.time_major:
            s += ", time_major=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        return s


class SimpleRNN(_RNNBase):
    """A multi-layer Elman RNN (see `SimpleRNNCell` for one step).

    ``forward(inputs, initial_states=None, sequence_length=None)`` returns
    ``(outputs, final_states)``. With ``sequence_length`` (an int tensor ``[B]``), steps
    past a sequence's end leave its state unchanged and give zero outputs.

    Args:
        input_size (int): the size of each input step.
        hidden_size (int): the size of the hidden state.
        num_layers (int, optional): the number of stacked layers. Default: 1.
        direction (str, optional): ``"forward"``, or ``"bidirect"``/``"bidirectional"`` for a
            second layer per level that reads the sequence backwards (D = 2). Default: "forward".
        time_major (bool, optional): inputs and outputs are ``[T, B, ...]`` instead of
            ``[B, T, ...]``. Default: False.
        dropout (float, optional): dropout on the outputs of every layer but the last, while
            training. Default: 0.0.
        activation (str, optional): ``"tanh"`` or ``"relu"``. Default: "tanh".
        weight_ih_attr (ParamAttr, optional): attributes of ``weight_ih``. Default: None.
        weight_hh_attr (ParamAttr, optional): attributes of ``weight_hh``. Default: None.
        bias_ih_attr (ParamAttr|bool, optional): attributes of ``bias_ih``; False for none.
            Default: None.
        bias_hh_attr (ParamAttr|bool, optional): attributes of ``bias_hh``; False for none.
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Shape:
        - inputs: ``[B, T, input_size]``; initial_states: ``[num_layers * D, B, hidden_size]``.
        - outputs: ``[B, T, D * hidden_size]``; final_states: ``[num_layers * D, B, hidden_size]``.

    Examples:
        >>> import fw
        >>> rnn = fw.nn.SimpleRNN(16, 32, num_layers=2)
        >>> y, h = rnn(fw.randn([4, 23, 16]))
        >>> y.shape, h.shape
        ([4, 23, 32], [2, 4, 32])
    """

    _cell = SimpleRNNCell

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, activation="tanh", weight_ih_attr=None,
                 weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__("SimpleRNN", input_size, hidden_size, num_layers, direction,
                         time_major, dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr,
                         bias_hh_attr, activation=activation)


class LSTM(_RNNBase):
    """A multi-layer LSTM (see `LSTMCell` for one step); the states are pairs
    ``(h, c)``.

    ``forward(inputs, initial_states=None, sequence_length=None)`` returns
    ``(outputs, final_states)``. With ``sequence_length`` (an int tensor ``[B]``), steps
    past a sequence's end leave its state unchanged and give zero outputs.

    Args:
        input_size (int): the size of each input step.
        hidden_size (int): the size of the hidden state.
        num_layers (int, optional): the number of stacked layers. Default: 1.
        direction (str, optional): ``"forward"``, or ``"bidirect"``/``"bidirectional"`` for a
            second layer per level that reads the sequence backwards (D = 2). Default: "forward".
        time_major (bool, optional): inputs and outputs are ``[T, B, ...]`` instead of
            ``[B, T, ...]``. Default: False.
        dropout (float, optional): dropout on the outputs of every layer but the last, while
            training. Default: 0.0.
        weight_ih_attr (ParamAttr, optional): attributes of ``weight_ih``. Default: None.
        weight_hh_attr (ParamAttr, optional): attributes of ``weight_hh``. Default: None.
        bias_ih_attr (ParamAttr|bool, optional): attributes of ``bias_ih``; False for none.
            Default: None.
        bias_hh_attr (ParamAttr|bool, optional): attributes of ``bias_hh``; False for none.
            Default: None.
        proj_size (int, optional): project h to this size (< hidden_size). Default: 0.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Shape:
        - inputs: ``[B, T, input_size]``; initial_states: ``(h, c)``, each
          ``[num_layers * D, B, hidden_size]``.
        - outputs: ``[B, T, D * hidden_size]``; final_states: ``(h, c)`` of the same shapes
          (h of size ``proj_size`` with a projection).

    Examples:
        >>> import fw
        >>> lstm = fw.nn.LSTM(16, 32, num_layers=2, direction='bidirect')
        >>> y, (h, c) = lstm(fw.randn([4, 10, 16]))
        >>> y.shape, h.shape, c.shape
        ([4, 10, 64], [4, 4, 32], [4, 4, 32])
        >>> lengths = fw.to_tensor([10, 7, 3, 1])
        >>> y, _ = lstm(fw.randn([4, 10, 16]), sequence_length=lengths)
        >>> float(y[3, 1:].abs().sum())
        0.0
    """

    _cell = LSTMCell

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, proj_size=0, name=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, direction, time_major,
                         dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
                         proj_size=proj_size)


class GRU(_RNNBase):
    """A multi-layer GRU (see `GRUCell` for one step).

    ``forward(inputs, initial_states=None, sequence_length=None)`` returns
    ``(outputs, final_states)``. With ``sequence_length`` (an int tensor ``[B]``), steps
    past a sequence's end leave its state unchanged and give zero outputs.

    Args:
        input_size (int): the size of each input step.
        hidden_size (int): the size of the hidden state.
        num_layers (int, optional): the number of stacked layers. Default: 1.
        direction (str, optional): ``"forward"``, or ``"bidirect"``/``"bidirectional"`` for a
            second layer per level that reads the sequence backwards (D = 2). Default: "forward".
        time_major (bool, optional): inputs and outputs are ``[T, B, ...]`` instead of
            ``[B, T, ...]``. Default: False.
        dropout (float, optional): dropout on the outputs of every layer but the last, while
            training. Default: 0.0.
        weight_ih_attr (ParamAttr, optional): attributes of ``weight_ih``. Default: None.
        weight_hh_attr (ParamAttr, optional): attributes of ``weight_hh``. Default: None.
        bias_ih_attr (ParamAttr|bool, optional): attributes of ``bias_ih``; False for none.
            Default: None.
        bias_hh_attr (ParamAttr|bool, optional): attributes of ``bias_hh``; False for none.
            Default: None.
        name (str, optional): unused, for Paddle compatibility. Default: None.

    Shape:
        - inputs: ``[B, T, input_size]``; initial_states: ``[num_layers * D, B, hidden_size]``.
        - outputs: ``[B, T, D * hidden_size]``; final_states: ``[num_layers * D, B, hidden_size]``.

    Examples:
        >>> import fw
        >>> gru = fw.nn.GRU(16, 32, time_major=True)
        >>> y, h = gru(fw.randn([10, 4, 16]))
        >>> y.shape, h.shape
        ([10, 4, 32], [1, 4, 32])
    """

    _cell = GRUCell

    def __init__(self, input_size, hidden_size, num_layers=1, direction="forward",
                 time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None,
                 bias_ih_attr=None, bias_hh_attr=None, name=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, direction, time_major,
                         dropout, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
