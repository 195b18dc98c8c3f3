"""Viterbi decoding of a linear-chain CRF: Paddle's ``paddle.text.viterbi_decode`` and
``ViterbiDecoder``.

Decoding is an argmax (no gradient, as in Paddle), so it runs as one vectorized NumPy
dynamic programme over the batch: per step a ``[batch, tags, tags]`` max/argmax, then a
backtrace through the stored argmaxes."""

from __future__ import annotations

import numpy as np

import fw
from fw import nn
from fw.core.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["viterbi_decode", "ViterbiDecoder"]


def _viterbi(pot: np.ndarray, trans: np.ndarray, lengths: np.ndarray, bos_eos: bool):
    """scores [B], path [B, max(lengths)] (int64, 0 past each sequence's end)."""
    batch, _, n = pot.shape
    max_len = int(lengths.max()) if batch else 0
    # with BOS/EOS tags, row n-1 of the transitions scores the first tag (start) and
    # row n-2 the last tag (stop), as Paddle's kernel reads them
    start = trans[n - 1] if bos_eos else 0.0
    stop = trans[n - 2] if bos_eos else 0.0
    alpha = pot[:, 0] + start
    if bos_eos:
        alpha = alpha + np.where((lengths == 1)[:, None], stop, 0.0)
    back = np.zeros((max(max_len - 1, 0), batch, n), np.int64)
    for t in range(1, max_len):
        cand = alpha[:, :, None] + trans[None]  # [B, from, to]
        best_from = cand.argmax(axis=1)
        nxt = np.take_along_axis(cand, best_from[:, None, :], axis=1)[:, 0] + pot[:, t]
        live = (t < lengths)[:, None]
        if bos_eos:
            nxt = nxt + np.where((lengths == t + 1)[:, None], stop, 0.0)
        alpha = np.where(live, nxt, alpha)
        back[t - 1] = best_from
    scores = alpha.max(axis=1) if n else np.zeros(batch, pot.dtype)
    path = np.zeros((batch, max_len), np.int64)
    for b in range(batch):
        length = int(lengths[b])
        if length <= 0:
            continue
        tag = int(alpha[b].argmax())
        path[b, length - 1] = tag
        for t in range(length - 1, 0, -1):
            tag = int(back[t - 1, b, tag])
            path[b, t - 1] = tag
    return scores.astype(pot.dtype), path


def viterbi_decode(potentials, transition_params, lengths, include_bos_eos_tag: bool = True,
                   name: str | None = None):
    """The highest-scoring tag sequence of each batch item under a linear-chain CRF.

    Args:
        potentials (Tensor): the emission scores, float32/float64
            ``[batch_size, sequence_length, num_tags]``.
        transition_params (Tensor): the transition scores ``[num_tags, num_tags]``
            (``[i, j]``: from tag i to tag j), of ``potentials``' dtype.
        lengths (Tensor): int64 ``[batch_size]``, each sequence's real length
            (``<= sequence_length``).
        include_bos_eos_tag (bool, optional): whether the last tag is a start tag and the
            second to last a stop tag: row ``num_tags - 1`` of ``transition_params`` is
            added to the first step's scores and row ``num_tags - 2`` to the last step's
            (as Paddle's kernel does). Default True.
        name (str, optional): unused; for Paddle compatibility. Default None.

    Returns:
        tuple: (scores, path) — scores ``[batch_size]`` of ``potentials``' dtype, the
        best path's score; path int64 ``[batch_size, max(lengths)]``, 0 past each
        sequence's end.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> emission = fw.to_tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]])
            >>> transition = fw.zeros([4, 4])
            >>> lengths = fw.to_tensor([2], dtype='int64')
            >>> scores, path = fw.text.viterbi_decode(emission, transition, lengths, False)
            >>> float(scores[0]), path.numpy().tolist()
            (3.0, [[0, 1]])
    """
    who = "fw.text.viterbi_decode"
    for arg, v in (("potentials", potentials), ("transition_params", transition_params),
                   ("lengths", lengths)):
        if not isinstance(v, fw.Tensor):
            raise InvalidTypeError(f"{who}: argument '{arg}' must be a Tensor, got "
                                   f"{type(v).__name__}")
    pot, trans = potentials.numpy(), transition_params.numpy()
    lens = lengths.numpy()
    if pot.dtype not in (np.float32, np.float64) or trans.dtype != pot.dtype:
        raise InvalidTypeError(f"{who}: 'potentials' and 'transition_params' must both be "
                               f"float32 or both float64, got {potentials.dtype} and "
                               f"{transition_params.dtype}")
    if not np.issubdtype(lens.dtype, np.integer):
        raise InvalidTypeError(f"{who}: 'lengths' must be an integer tensor (int64), got "
                               f"{lengths.dtype}")
    if pot.ndim != 3 or trans.shape != (pot.shape[2], pot.shape[2]) \
            or lens.shape != (pot.shape[0],):
        raise InvalidArgumentError(
            f"{who}: expected potentials [batch, seq_len, num_tags], transition_params "
            f"[num_tags, num_tags] and lengths [batch]; got {list(potentials.shape)}, "
            f"{list(transition_params.shape)} and {list(lengths.shape)}")
    if include_bos_eos_tag and pot.shape[2] < 2:
        raise InvalidArgumentError(f"{who}: include_bos_eos_tag=True needs num_tags >= 2 (the "
                                   f"start and stop tags), got {pot.shape[2]}")
    if lens.size and (lens.min() < 0 or lens.max() > pot.shape[1]):
        raise InvalidArgumentError(f"{who}: 'lengths' must lie in [0, sequence_length="
                                   f"{pot.shape[1]}], got {lens.tolist()}")
    scores, path = _viterbi(pot, trans, lens.astype(np.int64), bool(include_bos_eos_tag))
    return fw.to_tensor(scores), fw.to_tensor(path)


class ViterbiDecoder(nn.Layer):
    """A layer holding CRF transition scores that decodes emissions with
    `viterbi_decode`.

    Args:
        transitions (Tensor): the transition scores ``[num_tags, num_tags]``.
        include_bos_eos_tag (bool, optional): see `viterbi_decode`. Default True.
        name (str, optional): unused; for Paddle compatibility. Default None.

    Shape:
        potentials (Tensor): ``[batch_size, sequence_length, num_tags]``.
        lengths (Tensor): int64 ``[batch_size]``.

    Returns:
        tuple: (scores ``[batch_size]``, path int64 ``[batch_size, max(lengths)]``).

    Examples:
        .. code-block:: python

            >>> import fw
            >>> decoder = fw.text.ViterbiDecoder(fw.zeros([4, 4]), include_bos_eos_tag=False)
            >>> emission = fw.to_tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]])
            >>> scores, path = decoder(emission, fw.to_tensor([2], dtype='int64'))
            >>> path.numpy().tolist()
            [[0, 1]]
    """

    def __init__(self, transitions, include_bos_eos_tag: bool = True,
                 name: str | None = None):
        super().__init__()
        self.transitions = transitions
        self.include_bos_eos_tag = include_bos_eos_tag
        self.name = name

    def forward(self, potentials, lengths):
        return viterbi_decode(potentials, self.transitions, lengths, self.include_bos_eos_tag,
                              self.name)
