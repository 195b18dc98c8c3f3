"""``fw.audio.functional``: Paddle's ``paddle.audio.functional`` — mel scale conversions,
mel filter banks, decibels, the DCT matrix and window functions."""

from fw.audio.functional.functional import (
    compute_fbank_matrix,
    create_dct,
    fft_frequencies,
    hz_to_mel,
    mel_frequencies,
    mel_to_hz,
    power_to_db,
)
from fw.audio.functional.window import get_window

__all__ = ["compute_fbank_matrix", "create_dct", "fft_frequencies", "hz_to_mel",
           "mel_frequencies", "mel_to_hz", "power_to_db", "get_window"]
