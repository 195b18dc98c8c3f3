"""Decoding loops: the `Decoder` interface, `BeamSearchDecoder` and
`dynamic_decode` (Paddle's ``paddle.nn.dynamic_decode``). Eager only: the loop
runs in Python until every sequence has finished or `max_step_num` is passed.
"""

from __future__ import annotations

import collections

import fw
from fw.core.errors import InvalidArgumentError
from fw.nn import functional as F

__all__ = ["Decoder", "BeamSearchDecoder", "dynamic_decode"]


def _map(fn, *structs):
    s = structs[0]
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*(_map(fn, *parts) for parts in zip(*structs)))
    if isinstance(s, (tuple, list)):
        return type(s)(_map(fn, *parts) for parts in zip(*structs))
    return fn(*structs)


class Decoder:
    """The interface that `dynamic_decode` drives. A decoder implements:

    - ``initialize(inits) -> (initial_inputs, initial_states, initial_finished)``;
    - ``step(time, inputs, states, **kwargs) -> (outputs, next_states, next_inputs,
      finished)``;
    - optionally ``finalize(outputs, final_states, sequence_lengths) -> (outputs,
      final_states)`` (the default returns them unchanged);
    - ``tracks_own_finished``: True when ``step`` keeps finished sequences finished
      itself (then `dynamic_decode` does not track lengths for it).

    Examples:
        >>> import fw
        >>> class CountDown(fw.nn.Decoder):
        ...     def initialize(self, inits):
        ...         return inits, inits, inits <= 0
        ...     def step(self, time, inputs, states, **kwargs):
        ...         nxt = states - 1
        ...         return nxt, nxt, nxt, nxt <= 0
        >>> out, state = fw.nn.dynamic_decode(CountDown(), inits=fw.to_tensor([3, 1]))
        >>> out.tolist()
        [[2, 1, 0], [0, -1, -2]]
    """

    def initialize(self, inits):
        """Start decoding: return the first inputs, the initial states and which sequences
        are already finished (a bool tensor). Subclasses implement it.

        Args:
            inits (object): what `dynamic_decode` was given as ``inits``.

        Returns:
            tuple: ``(initial_inputs, initial_states, initial_finished)``.

        Examples:
            >>> import fw
            >>> class CountDown(fw.nn.Decoder):
            ...     def initialize(self, inits):
            ...         return inits, inits, inits <= 0
            ...     def step(self, time, inputs, states, **kwargs):
            ...         nxt = states - 1
            ...         return nxt, nxt, nxt, nxt <= 0
            >>> CountDown().initialize(fw.to_tensor([2, 0]))[2].tolist()
            [False, True]
        """
        raise NotImplementedError

    def step(self, time, inputs, states, **kwargs):
        """Run one decoding step. Subclasses implement it.

        Args:
            time (Tensor): the step number, int64 0-D.
            inputs (object): this step's inputs.
            states (object): the current states.
            **kwargs: what `dynamic_decode` passes on.

        Returns:
            tuple: ``(outputs, next_states, next_inputs, finished)``.

        Examples:
            >>> import fw
            >>> class CountDown(fw.nn.Decoder):
            ...     def initialize(self, inits):
            ...         return inits, inits, inits <= 0
            ...     def step(self, time, inputs, states, **kwargs):
            ...         nxt = states - 1
            ...         return nxt, nxt, nxt, nxt <= 0
            >>> out, states, inputs, finished = CountDown().step(fw.to_tensor(0), None,
            ...                                                   fw.to_tensor([2, 1]))
            >>> finished.tolist()
            [False, True]
        """
        raise NotImplementedError

    def finalize(self, outputs, final_states, sequence_lengths):
        """Post-process the stacked outputs and final states (the default returns them
        unchanged).

        Args:
            outputs (object): the per-step outputs stacked along time.
            final_states (object): the last states.
            sequence_lengths (Tensor): the length of each sequence.

        Returns:
            tuple: ``(outputs, final_states)``.

        Examples:
            >>> import fw
            >>> lengths = fw.to_tensor([3, 3])
            >>> out, states = fw.nn.Decoder().finalize(fw.ones([3, 2]), fw.zeros([2]), lengths)
            >>> out.shape
            [3, 2]
        """
        return outputs, final_states

    @property
    def tracks_own_finished(self) -> bool:
        """True when `step` keeps finished sequences finished itself (then `dynamic_decode`
        neither ORs the finished flags nor counts lengths for it).

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> fw.nn.Decoder().tracks_own_finished
            False
        """
        return False


class BeamSearchDecoder(Decoder):
    """Beam search over an RNN cell, for `dynamic_decode`.

    At each step the cell's outputs go through ``output_fn`` to vocabulary logits; the
    ``beam_size`` best continuations of every batch entry (by total log-probability) are
    kept. Step outputs are ``OutputWrapper(scores, predicted_ids, parent_ids)`` of
    ``[batch, beam]``; ``finalize`` back-traces the beams with `gather_tree`, so the
    decoded ids are ``[batch, time, beam]`` after `dynamic_decode` (``[time, batch,
    beam]`` with ``output_time_major``). The final states are
    ``StateWrapper(cell_states, log_probs, finished, lengths)`` with the beams sorted
    best first.

    Args:
        cell (RNNCellBase): the cell, ``cell(inputs, states) -> (outputs, new_states)``.
        start_token (int): the id every sequence starts with.
        end_token (int): the id that ends a sequence.
        beam_size (int): the number of beams per batch entry.
        embedding_fn (callable, optional): maps ids ``[batch * beam]`` to cell inputs, e.g. an
            `Embedding`. Default: None.
        output_fn (callable, optional): maps cell outputs to vocabulary logits, e.g. a
            `Linear`. Default: None.

    Examples:
        >>> import fw
        >>> emb, proj, cell = fw.nn.Embedding(100, 16), fw.nn.Linear(16, 100), fw.nn.GRUCell(16, 16)
        >>> decoder = fw.nn.BeamSearchDecoder(cell, start_token=0, end_token=1, beam_size=4,
        ...                                embedding_fn=emb, output_fn=proj)
        >>> init = cell.get_initial_states(fw.ones([2, 16]))
        >>> ids, states = fw.nn.dynamic_decode(decoder, inits=init, max_step_num=5)
        >>> ids.shape[0], ids.shape[2], ids.dtype
        (2, 4, fw.int64)
    """

    OutputWrapper = collections.namedtuple("OutputWrapper",
                                           ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = collections.namedtuple("StateWrapper",
                                          ("cell_states", "log_probs", "finished", "lengths"))

    def __init__(self, cell, start_token, end_token, beam_size, embedding_fn=None,
                 output_fn=None):
        if beam_size < 1:
            raise InvalidArgumentError(f"BeamSearchDecoder: beam_size must be >= 1, got "
                                       f"{beam_size}")
        self.cell = cell
        self.start_token = int(start_token)
        self.end_token = int(end_token)
        self.beam_size = int(beam_size)
        self.embedding_fn = embedding_fn
        self.output_fn = output_fn

    @staticmethod
    def tile_beam_merge_with_batch(x, beam_size):
        """Repeat every batch entry ``beam_size`` times: ``[batch, ...] -> [batch * beam_size,
        ...]`` (to prepare, e.g., encoder outputs for attention inside the beam).

        Args:
            x (Tensor): ``[batch, ...]``.
            beam_size (int): the number of beams.

        Returns:
            Tensor: ``[batch * beam_size, ...]``.

        Examples:
            >>> import fw
            >>> x = fw.to_tensor([[1.0], [2.0]])
            >>> fw.nn.BeamSearchDecoder.tile_beam_merge_with_batch(x, 2).tolist()
            [[1.0], [1.0], [2.0], [2.0]]
        """
        return fw.repeat_interleave(x, beam_size, axis=0)

    def _expand(self, x):
        """[batch, ...] -> [batch, beam, ...]"""
        return x.unsqueeze(1).expand([x.shape[0], self.beam_size] + list(x.shape[1:]))

    def _merge(self, x):
        return x.reshape([-1] + list(x.shape[2:]))

    def _split(self, x):
        return x.reshape([-1, self.beam_size] + list(x.shape[1:]))

    def _gather(self, x, beam_idx):
        """x ``[batch, beam, ...]`` re-ordered along the beam axis by beam_idx ``[batch,
        beam]``."""
        b = x.shape[0]
        flat = beam_idx + fw.arange(b, dtype=beam_idx.dtype).unsqueeze(1) * self.beam_size
        return fw.gather(self._merge(x), flat.reshape([-1])).reshape(list(x.shape))

    def initialize(self, initial_cell_states):
        """Tile the cell's initial states over the beams and start every beam with
        ``start_token`` (only the first beam of each entry is live at step 0).

        Args:
            initial_cell_states (Tensor|tuple): the cell's states ``[batch, ...]``.

        Returns:
            tuple: ``(initial_inputs, StateWrapper, initial_finished [batch, beam])``.

        Examples:
            >>> import fw
            >>> emb, proj, cell = fw.nn.Embedding(50, 8), fw.nn.Linear(8, 50), fw.nn.GRUCell(8, 8)
            >>> dec = fw.nn.BeamSearchDecoder(cell, 0, 1, beam_size=3, embedding_fn=emb,
            ...                                output_fn=proj)
            >>> inputs, states, finished = dec.initialize(cell.get_initial_states(fw.ones([2, 8])))
            >>> finished.shape, states.log_probs.tolist()[0]
            ([2, 3], [0.0, -inf, -inf])
        """
        states = _map(self._expand, initial_cell_states)
        ref = states
        while isinstance(ref, (tuple, list)):
            ref = ref[0]
        b = ref.shape[0]
        ids = fw.full([b, self.beam_size], self.start_token, "int64")
        inputs = self.embedding_fn(ids) if self.embedding_fn is not None else ids
        first = [0.0] + [float("-inf")] * (self.beam_size - 1)
        log_probs = fw.to_tensor([first] * b, dtype=ref.dtype)
        finished = fw.zeros([b, self.beam_size], dtype="bool")
        lengths = fw.zeros([b, self.beam_size], dtype="int64")
        return inputs, self.StateWrapper(states, log_probs, finished, lengths), finished

    def step(self, time, inputs, states, **kwargs):
        """Advance every beam by one token: run the cell, score all continuations and keep
        the ``beam_size`` best per batch entry.

        Args:
            time (Tensor): the step number.
            inputs (Tensor): the embedded previous ids.
            states (StateWrapper): the beam states.
            **kwargs: passed to the cell.

        Returns:
            tuple: ``(OutputWrapper, StateWrapper, next_inputs, finished)``.

        Examples:
            >>> import fw
            >>> emb, proj, cell = fw.nn.Embedding(50, 8), fw.nn.Linear(8, 50), fw.nn.GRUCell(8, 8)
            >>> dec = fw.nn.BeamSearchDecoder(cell, 0, 1, beam_size=3, embedding_fn=emb,
            ...                                output_fn=proj)
            >>> inputs, states, finished = dec.initialize(cell.get_initial_states(fw.ones([2, 8])))
            >>> out, states, inputs, finished = dec.step(fw.to_tensor(0), inputs, states)
            >>> out.predicted_ids.shape, out.parent_ids.shape
            ([2, 3], [2, 3])
        """
        cell_in = _map(self._merge, inputs)
        cell_states = _map(self._merge, states.cell_states)
        out, next_cell = self.cell(cell_in, cell_states, **kwargs)
        out = _map(self._split, out)
        next_cell = _map(self._split, next_cell)
        logits = self.output_fn(out) if self.output_fn is not None else out
        step_lp = F.log_softmax(logits, axis=-1)
        v = step_lp.shape[-1]
        # a finished beam only continues with end_token, at no cost
        only_end = fw.full([v], float("-inf"), step_lp.dtype)
        only_end[self.end_token] = 0.0
        step_lp = fw.where(states.finished.unsqueeze(-1), only_end, step_lp)
        total = step_lp + states.log_probs.unsqueeze(-1)
        b = total.shape[0]
        scores, idx = fw.topk(total.reshape([b, -1]), self.beam_size, axis=-1)
        beam_idx = idx // v
        token = idx % v
        next_cell = _map(lambda s: self._gather(s, beam_idx), next_cell)
        prev_finished = self._gather(states.finished, beam_idx)
        finished = fw.logical_or(prev_finished, token == self.end_token)
        lengths = self._gather(states.lengths, beam_idx) + fw.logical_not(
            prev_finished).astype("int64")
        next_inputs = self.embedding_fn(token) if self.embedding_fn is not None else token
        outputs = self.OutputWrapper(scores, token, beam_idx)
        return outputs, self.StateWrapper(next_cell, scores, finished, lengths), \
            next_inputs, finished

    def finalize(self, outputs, final_states, sequence_lengths):
        """Back-trace the beams (`fw.nn.functional.gather_tree`) into full id sequences.

        Args:
            outputs (OutputWrapper): the stacked step outputs, time-major.
            final_states (StateWrapper): the final beam states.
            sequence_lengths (Tensor): the lengths.

        Returns:
            tuple: ``(predicted_ids [time, batch, beam], final_states)``.

        Examples:
            >>> import fw
            >>> emb, proj, cell = fw.nn.Embedding(50, 8), fw.nn.Linear(8, 50), fw.nn.GRUCell(8, 8)
            >>> dec = fw.nn.BeamSearchDecoder(cell, 0, 1, beam_size=3, embedding_fn=emb,
            ...                                output_fn=proj)
            >>> inputs, states, finished = dec.initialize(cell.get_initial_states(fw.ones([2, 8])))
            >>> init = cell.get_initial_states(fw.ones([2, 8]))
            >>> ids, _ = fw.nn.dynamic_decode(dec, init, max_step_num=3, output_time_major=True)
            >>> ids.shape[1:]
            [2, 3]
        """
        ids = F.gather_tree(outputs.predicted_ids, outputs.parent_ids)
        return ids, final_states

    @property
    def tracks_own_finished(self) -> bool:
        """Always True: the beam search keeps finished beams finished itself.

        Returns:
            bool.

        Examples:
            >>> import fw
            >>> emb, proj, cell = fw.nn.Embedding(50, 8), fw.nn.Linear(8, 50), fw.nn.GRUCell(8, 8)
            >>> dec = fw.nn.BeamSearchDecoder(cell, 0, 1, beam_size=3, embedding_fn=emb,
            ...                                output_fn=proj)
            >>> dec.tracks_own_finished
            True
        """
        return True


def _keep_where(finished):
    def keep(new, old):
        extra = [1] * (len(new.shape) - len(finished.shape))
        return fw.where(finished.reshape(list(finished.shape) + extra), old, new)

    return keep


def dynamic_decode(decoder, inits=None, max_step_num=None, output_time_major=False,
                   impute_finished=False, is_test=False, return_length=False, **kwargs):
    """Run a `Decoder` step by step until every sequence has finished or more than
    ``max_step_num`` steps have run (eager mode: the loop runs in Python).

    Args:
        decoder (Decoder): the decoder, e.g. a `BeamSearchDecoder`.
        inits (object, optional): passed to ``decoder.initialize`` (for a beam search, the
            cell's initial states). Default: None.
        max_step_num (int, optional): the most steps to run; unlimited when None.
            Default: None.
        output_time_major (bool, optional): stack the outputs as ``[time, batch, ...]``
            instead of ``[batch, time, ...]``. Default: False.
        impute_finished (bool, optional): finished sequences keep their last state.
            Default: False.
        is_test (bool, optional): accepted for Paddle compatibility. Default: False.
        return_length (bool, optional): also return the sequence lengths. Default: False.
        **kwargs: passed to ``decoder.step``.

    Returns:
        tuple: ``(final_outputs, final_states)``, plus ``sequence_lengths`` with
        ``return_length``.

    Examples:
        >>> import fw
        >>> class CountDown(fw.nn.Decoder):
        ...     def initialize(self, inits):
        ...         return inits, inits, inits <= 0
        ...     def step(self, time, inputs, states, **kwargs):
        ...         nxt = states - 1
        ...         return nxt, nxt, nxt, nxt <= 0
        >>> out, state, lengths = fw.nn.dynamic_decode(CountDown(), fw.to_tensor([3, 1]),
        ...                                            return_length=True)
        >>> out.tolist(), lengths.tolist()
        ([[2, 1, 0], [0, -1, -2]], [3, 1])
    """
    inputs, states, finished = decoder.initialize(inits)
    seq_lens = fw.zeros(finished.shape, dtype="int64")
    steps = []
    t = 0
    while True:
        outputs, next_states, next_inputs, next_finished = decoder.step(
            fw.to_tensor(t, dtype="int64"), inputs, states, **kwargs)
        if not decoder.tracks_own_finished:
            next_finished = fw.logical_or(next_finished, finished)
            seq_lens = seq_lens + fw.logical_not(finished).astype("int64")
            if impute_finished:  # finished sequences keep their state
                next_states = _map(_keep_where(finished), next_states, states)
        steps.append(outputs)
        inputs, states, finished = next_inputs, next_states, next_finished
        t += 1
        if bool(fw.all(finished).item()):
            break
        if max_step_num is not None and t > max_step_num:
            break
    final = _map(lambda *xs: fw.stack(list(xs), axis=0), *steps)
    if decoder.tracks_own_finished and hasattr(states, "lengths"):
        seq_lens = states.lengths
    final, states = decoder.finalize(final, states, seq_lens)
    if not output_time_major:
        final = _map(lambda x: x.transpose([1, 0] + list(range(2, len(x.shape)))), final)
    return (final, states, seq_lens) if return_length else (final, states)
