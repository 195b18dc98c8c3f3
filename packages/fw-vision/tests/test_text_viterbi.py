"""fw.text.viterbi_decode / ViterbiDecoder against an exhaustive NumPy search over every
tag sequence and against real Paddle 3.3's outputs (fixtures/audio_text_paddle.npz)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import fw
from fw.core.errors import InvalidArgumentError, InvalidTypeError
from fw.text import ViterbiDecoder, viterbi_decode

FIX = np.load(Path(__file__).parent / "fixtures" / "audio_text_paddle.npz")


def brute_force(pot, trans, lengths, bos_eos):
    """Score every tag sequence of each item; Paddle's BOS/EOS convention: row n-1 of the
    transitions is added to the first tag's score, row n-2 to the last tag's."""
    n = trans.shape[0]
    scores, paths = [], []
    for b, length in enumerate(lengths):
        best, arg = -np.inf, None
        for seq in itertools.product(range(n), repeat=int(length)):
            s = sum(pot[b, t, k] for t, k in enumerate(seq))
            s += sum(trans[seq[t - 1], seq[t]] for t in range(1, len(seq)))
            if bos_eos:
                s += trans[n - 1, seq[0]] + trans[n - 2, seq[-1]]
            if s > best:
                best, arg = s, seq
        scores.append(best)
        paths.append(list(arg) + [0] * (int(max(lengths)) - int(length)))
    return np.array(scores), np.array(paths)


@pytest.mark.parametrize("bos_eos", [True, False])
def test_matches_paddle_fixture(bos_eos):
    k = f"vit{int(bos_eos)}"
    scores, path = viterbi_decode(fw.to_tensor(FIX[f"{k}_pot"]), fw.to_tensor(FIX[f"{k}_trans"]),
                                  fw.to_tensor(FIX[f"{k}_lens"]), bos_eos)
    assert scores.dtype == fw.float32 and path.dtype == fw.int64
    assert path.shape == list(FIX[f"{k}_path"].shape)
    np.testing.assert_allclose(scores.numpy(), FIX[f"{k}_scores"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(path.numpy(), FIX[f"{k}_path"])


@pytest.mark.parametrize("bos_eos", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_matches_exhaustive_search(seed, bos_eos):
    rng = np.random.default_rng(seed)
    batch, seq_len, n = 3, 4, 4
    pot = rng.normal(size=(batch, seq_len, n))
    trans = rng.normal(size=(n, n))
    lengths = rng.integers(1, seq_len + 1, size=batch)
    lengths[0] = 3  # max(lengths) < seq_len in some draws: the path is that wide
    want_s, want_p = brute_force(pot, trans, lengths, bos_eos)
    decoder = ViterbiDecoder(fw.to_tensor(trans), include_bos_eos_tag=bos_eos)
    scores, path = decoder(fw.to_tensor(pot), fw.to_tensor(lengths.astype(np.int64)))
    assert scores.dtype == fw.float64 and path.shape == list(want_p.shape)
    np.testing.assert_allclose(scores.numpy(), want_s, rtol=1e-12)
    np.testing.assert_array_equal(path.numpy(), want_p)


def test_errors_name_the_function_and_shapes():
    pot = fw.zeros([2, 3, 4])
    lengths = fw.to_tensor([3, 2], dtype="int64")
    with pytest.raises(InvalidArgumentError, match="viterbi_decode.*\\[2, 3, 4\\], \\[3, 3\\]"):
        viterbi_decode(pot, fw.zeros([3, 3]), lengths)
    with pytest.raises(InvalidTypeError, match="float32 or both float64.*float64"):
        viterbi_decode(pot, fw.zeros([4, 4], dtype="float64"), lengths)
    with pytest.raises(InvalidTypeError, match="'lengths' must be an integer"):
        viterbi_decode(pot, fw.zeros([4, 4]), fw.to_tensor([3.0, 2.0]))
    with pytest.raises(InvalidArgumentError, match="'lengths' must lie in \\[0, "):
        viterbi_decode(pot, fw.zeros([4, 4]), fw.to_tensor([4, 2], dtype="int64"))
    with pytest.raises(InvalidTypeError, match="'potentials' must be a Tensor"):
        viterbi_decode(np.zeros((2, 3, 4)), fw.zeros([4, 4]), lengths)
