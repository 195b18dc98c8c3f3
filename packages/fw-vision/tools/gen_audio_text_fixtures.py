"""Record real Paddle's paddle.audio / paddle.text outputs into
tests/fixtures/audio_text_paddle.npz (run once with Paddle 3.3 installed; CI only reads
the file):

    /path/to/paddle-venv/bin/python packages/fw-vision/tools/gen_audio_text_fixtures.py

Inputs are drawn from a fixed NumPy seed and stored beside the outputs, so the tests feed
fw exactly what Paddle saw."""

from __future__ import annotations

import os

import numpy as np
import paddle

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                   "audio_text_paddle.npz")

WINDOWS = [("hann",), ("hamming",), ("blackman",), ("nuttall",), ("bartlett",), ("triang",),
           ("cosine",), ("bohman",), ("tukey",), ("taylor",), ("exponential", None, 3.0),
           ("kaiser", 8.0), ("gaussian", 3.0), ("general_gaussian", 1.5, 4.0),
           ("general_hamming", 0.6), ("general_cosine", (0.5, 0.3, 0.2))]


def main():
    rng = np.random.default_rng(20261126)
    F = paddle.audio.functional
    out = {}
    freqs = np.array([0.0, 50.0, 440.0, 999.0, 1000.0, 1500.0, 8000.0, 22050.0], np.float32)
    out["freqs"] = freqs
    for htk in (False, True):
        out[f"hz_to_mel_htk{int(htk)}"] = F.hz_to_mel(paddle.to_tensor(freqs), htk=htk).numpy()
        mels = np.linspace(0.0, 40.0 if not htk else 3000.0, 9).astype(np.float32)
        out[f"mels_htk{int(htk)}"] = mels
        out[f"mel_to_hz_htk{int(htk)}"] = F.mel_to_hz(paddle.to_tensor(mels), htk=htk).numpy()
        out[f"mel_frequencies_htk{int(htk)}"] = F.mel_frequencies(
            n_mels=16, f_min=20.0, f_max=7600.0, htk=htk).numpy()
        out[f"fbank_htk{int(htk)}"] = F.compute_fbank_matrix(
            sr=16000, n_fft=256, n_mels=20, f_min=30.0, htk=htk).numpy()
    out["fbank_norm2"] = F.compute_fbank_matrix(sr=8000, n_fft=128, n_mels=10,
                                                norm=2.0).numpy()
    out["fft_frequencies"] = F.fft_frequencies(sr=22050, n_fft=64).numpy()
    spect = (rng.random((3, 5, 7)) * 10.0 ** rng.integers(-12, 3, (3, 5, 7))).astype(
        np.float32)
    out["spect"] = spect
    out["power_to_db"] = F.power_to_db(paddle.to_tensor(spect)).numpy()
    out["power_to_db_ref"] = F.power_to_db(paddle.to_tensor(spect), ref_value=2.0, amin=1e-5,
                                           top_db=None).numpy()
    out["dct_ortho"] = F.create_dct(n_mfcc=13, n_mels=40).numpy()
    out["dct_none"] = F.create_dct(n_mfcc=5, n_mels=8, norm=None).numpy()
    for w in WINDOWS:
        key = "window_" + "_".join(str(p) for p in w)
        arg = w if len(w) > 1 else w[0]
        for fftbins in (True, False):
            out[f"{key}_{int(fftbins)}_17"] = F.get_window(arg, 17, fftbins=fftbins).numpy()
            out[f"{key}_{int(fftbins)}_16"] = F.get_window(arg, 16, fftbins=fftbins).numpy()
    wav = rng.normal(size=(2, 2000)).astype(np.float32)
    out["wav"] = wav
    x = paddle.to_tensor(wav)
    A = paddle.audio.features
    out["spectrogram"] = A.Spectrogram(n_fft=256, hop_length=100, win_length=200)(x).numpy()
    out["spectrogram_p2"] = A.Spectrogram(n_fft=128, window="hamming", power=2.0)(x).numpy()
    out["melspectrogram"] = A.MelSpectrogram(sr=16000, n_fft=256, hop_length=128,
                                             n_mels=32)(x).numpy()
    out["logmelspectrogram"] = A.LogMelSpectrogram(sr=16000, n_fft=256, n_mels=32,
                                                   top_db=60.0)(x).numpy()
    out["mfcc"] = A.MFCC(sr=16000, n_mfcc=13, n_fft=256, n_mels=32)(x).numpy()
    # Viterbi: several lengths, with and without the BOS/EOS tags
    for be in (True, False):
        pot = rng.normal(size=(4, 6, 5)).astype(np.float32)
        trans = rng.normal(size=(5, 5)).astype(np.float32)
        lens = np.array([6, 1, 3, 4], np.int64)
        s, p = paddle.text.viterbi_decode(paddle.to_tensor(pot), paddle.to_tensor(trans),
                                          paddle.to_tensor(lens), be)
        out[f"vit{int(be)}_pot"], out[f"vit{int(be)}_trans"] = pot, trans
        out[f"vit{int(be)}_lens"] = lens
        out[f"vit{int(be)}_scores"], out[f"vit{int(be)}_path"] = s.numpy(), p.numpy()
    np.savez_compressed(OUT, **out)
    print(f"wrote {len(out)} arrays to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
