"""fw.audio: the functional API, windows and feature layers against independent NumPy /
SciPy references and against real Paddle 3.3's outputs recorded in
fixtures/audio_text_paddle.npz (tools/gen_audio_text_fixtures.py); gradients of the
feature layers against finite differences; WAV round trips and errors."""

from __future__ import annotations

import io
import math
import wave
from pathlib import Path

import numpy as np
import pytest

import fw
from fw.audio import features as A
from fw.audio import functional as F
from fw.core.errors import InvalidArgumentError, InvalidTypeError, UnsupportedError

FIX = np.load(Path(__file__).parent / "fixtures" / "audio_text_paddle.npz")


# --- independent NumPy references (librosa's formulas, written out) ---------------------

def np_hz_to_mel(f, htk=False):
    f = np.asarray(f, np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + f / 700.0)
    return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-30) / 1000.0) / (
        np.log(6.4) / 27.0), f * 3.0 / 200.0)


def np_mel_to_hz(m, htk=False):
    m = np.asarray(m, np.float64)
    if htk:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    return np.where(m >= 15.0, 1000.0 * np.exp(np.log(6.4) / 27.0 * (m - 15.0)), m * 200.0 / 3)


def np_fbank(sr, n_fft, n_mels, f_min, f_max, htk=False):
    fft_f = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_f = np_mel_to_hz(np.linspace(np_hz_to_mel(f_min, htk), np_hz_to_mel(f_max, htk),
                                     n_mels + 2), htk)
    w = np.zeros((n_mels, len(fft_f)))
    for i in range(n_mels):
        lo, c, hi = mel_f[i:i + 3]
        w[i] = np.maximum(0, np.minimum((fft_f - lo) / (c - lo), (hi - fft_f) / (hi - c)))
        w[i] *= 2.0 / (hi - lo)
    return w


def np_stft_mag(x, n_fft, hop, window):
    pad = n_fft // 2
    xp = np.pad(x, [(0, 0), (pad, pad)], mode="reflect")
    n_frames = 1 + (xp.shape[1] - n_fft) // hop
    frames = np.stack([xp[:, t * hop:t * hop + n_fft] for t in range(n_frames)], axis=-1)
    return np.abs(np.fft.rfft(frames * window[None, :, None], axis=1))


# --- functional --------------------------------------------------------------------------

@pytest.mark.parametrize("htk", [False, True])
def test_mel_scale_matches_numpy_and_paddle(htk):
    freqs = FIX["freqs"]
    got = F.hz_to_mel(fw.to_tensor(freqs), htk=htk)
    assert got.shape == [len(freqs)] and got.dtype == fw.float32
    np.testing.assert_allclose(got.numpy(), np_hz_to_mel(freqs, htk), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got.numpy(), FIX[f"hz_to_mel_htk{int(htk)}"], rtol=1e-5,
                               atol=1e-4)
    mels = FIX[f"mels_htk{int(htk)}"]
    back = F.mel_to_hz(fw.to_tensor(mels), htk=htk).numpy()
    np.testing.assert_allclose(back, FIX[f"mel_to_hz_htk{int(htk)}"], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(back, np_mel_to_hz(mels, htk), rtol=1e-5, atol=1e-3)
    # the float forms agree with the tensor forms and invert each other
    for f in (0.0, 440.0, 1000.0, 5000.0):
        assert F.hz_to_mel(f, htk=htk) == pytest.approx(float(np_hz_to_mel(f, htk)), rel=1e-9,
                                                        abs=1e-9)
        assert F.mel_to_hz(F.hz_to_mel(f, htk=htk), htk=htk) == pytest.approx(f, abs=1e-6)
    np.testing.assert_allclose(
        F.mel_frequencies(n_mels=16, f_min=20.0, f_max=7600.0, htk=htk).numpy(),
        FIX[f"mel_frequencies_htk{int(htk)}"], rtol=1e-5)


def test_hz_to_mel_gradient_is_finite_on_both_branches():
    f = fw.to_tensor([300.0, 3000.0], dtype="float64", stop_gradient=False)
    F.hz_to_mel(f).sum().backward()
    want = [3.0 / 200.0, 27.0 / math.log(6.4) / 3000.0]
    np.testing.assert_allclose(f.grad.numpy(), want, rtol=1e-9)


@pytest.mark.parametrize("htk", [False, True])
def test_fbank_matrix_matches_numpy_and_paddle(htk):
    got = F.compute_fbank_matrix(sr=16000, n_fft=256, n_mels=20, f_min=30.0, htk=htk)
    assert got.shape == [20, 129] and got.dtype == fw.float32
    np.testing.assert_allclose(got.numpy(), np_fbank(16000, 256, 20, 30.0, 8000.0, htk),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got.numpy(), FIX[f"fbank_htk{int(htk)}"], rtol=1e-4,
                               atol=1e-6)


def test_fbank_p_norm_and_fft_frequencies():
    got = F.compute_fbank_matrix(sr=8000, n_fft=128, n_mels=10, norm=2.0).numpy()
    np.testing.assert_allclose(got, FIX["fbank_norm2"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(F.fft_frequencies(sr=22050, n_fft=64).numpy(),
                               FIX["fft_frequencies"], rtol=1e-6)
    np.testing.assert_allclose(F.fft_frequencies(sr=22050, n_fft=64).numpy(),
                               np.fft.rfftfreq(64, 1 / 22050), rtol=1e-6)


def test_power_to_db_matches_numpy_and_paddle():
    spect = FIX["spect"]
    got = F.power_to_db(fw.to_tensor(spect)).numpy()
    ref = 10 * np.log10(np.maximum(spect.astype(np.float64), 1e-10))
    ref = np.maximum(ref, ref.max() - 80.0)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got, FIX["power_to_db"], rtol=1e-5, atol=1e-4)
    got2 = F.power_to_db(fw.to_tensor(spect), ref_value=2.0, amin=1e-5, top_db=None).numpy()
    np.testing.assert_allclose(got2, FIX["power_to_db_ref"], rtol=1e-5, atol=1e-4)
    with pytest.raises(InvalidArgumentError, match="power_to_db.*'amin'"):
        F.power_to_db(fw.to_tensor(spect), amin=0.0)
    with pytest.raises(InvalidArgumentError, match="'top_db'"):
        F.power_to_db(fw.to_tensor(spect), top_db=-1.0)
    with pytest.raises(InvalidTypeError, match="'spect' must be a Tensor"):
        F.power_to_db(spect)


def test_create_dct_matches_scipy_and_paddle():
    scipy_fft = pytest.importorskip("scipy.fft")
    got = F.create_dct(n_mfcc=13, n_mels=40).numpy()
    assert got.shape == (40, 13)
    # column k of the matrix is the orthonormal DCT-II basis vector k
    ref = scipy_fft.dct(np.eye(40), type=2, norm="ortho", axis=0)[:13].T
    np.testing.assert_allclose(got, ref, atol=1e-6)
    np.testing.assert_allclose(got, FIX["dct_ortho"], atol=1e-6)
    np.testing.assert_allclose(F.create_dct(5, 8, norm=None).numpy(), FIX["dct_none"],
                               atol=1e-6)
    with pytest.raises(InvalidArgumentError, match="create_dct.*'norm'"):
        F.create_dct(5, 8, norm="backward")


_WINDOWS = [("hann",), ("hamming",), ("blackman",), ("nuttall",), ("bartlett",), ("triang",),
            ("cosine",), ("bohman",), ("tukey",), ("taylor",), ("exponential", None, 3.0),
            ("kaiser", 8.0), ("gaussian", 3.0), ("general_gaussian", 1.5, 4.0),
            ("general_hamming", 0.6), ("general_cosine", (0.5, 0.3, 0.2))]


@pytest.mark.parametrize("w", _WINDOWS, ids=lambda w: w[0])
def test_windows_match_scipy_and_paddle(w):
    signal = pytest.importorskip("scipy.signal")
    arg = w if len(w) > 1 else w[0]
    key = "window_" + "_".join(str(p) for p in w)
    for fftbins in (True, False):
        for n in (16, 17):
            got = F.get_window(arg, n, fftbins=fftbins)
            assert got.shape == [n] and got.dtype == fw.float64
            np.testing.assert_allclose(got.numpy(), FIX[f"{key}_{int(fftbins)}_{n}"],
                                       atol=1e-6, err_msg=f"{w} fftbins={fftbins} n={n}")
            np.testing.assert_allclose(got.numpy(), signal.get_window(arg, n, fftbins=fftbins),
                                       atol=1e-10, err_msg=f"{w} vs scipy")


def test_get_window_errors():
    with pytest.raises(InvalidArgumentError, match="unknown window 'hannn'"):
        F.get_window("hannn", 8)
    with pytest.raises(InvalidArgumentError, match="'kaiser' takes 1 parameter"):
        F.get_window("kaiser", 8)
    with pytest.raises(InvalidArgumentError, match="'exponential'"):
        F.get_window("exponential", 8)
    with pytest.raises(InvalidTypeError, match="'window'"):
        F.get_window(3, 8)
    with pytest.raises(InvalidArgumentError, match="'win_length'"):
        F.get_window("hann", -1)
    assert F.get_window("hann", 4, dtype="float32").dtype == fw.float32


# --- feature layers ----------------------------------------------------------------------

def test_spectrogram_matches_numpy_and_paddle():
    wav = FIX["wav"]
    layer = A.Spectrogram(n_fft=256, hop_length=100, win_length=200)
    got = layer(fw.to_tensor(wav))
    assert got.shape == list(FIX["spectrogram"].shape) and got.dtype == fw.float32
    np.testing.assert_allclose(got.numpy(), FIX["spectrogram"], rtol=1e-4, atol=1e-4)
    win = np.zeros(256)
    win[28:228] = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(200) / 200)
    np.testing.assert_allclose(got.numpy(), np_stft_mag(wav, 256, 100, win), rtol=1e-4,
                               atol=1e-4)
    p2 = A.Spectrogram(n_fft=128, window="hamming", power=2.0)(fw.to_tensor(wav))
    np.testing.assert_allclose(p2.numpy(), FIX["spectrogram_p2"], rtol=1e-4, atol=1e-3)
    # the window is a buffer: it is in the state dict
    assert "fft_window" in layer.state_dict()


def test_mel_logmel_mfcc_match_paddle():
    x = fw.to_tensor(FIX["wav"])
    mel = A.MelSpectrogram(sr=16000, n_fft=256, hop_length=128, n_mels=32)(x)
    np.testing.assert_allclose(mel.numpy(), FIX["melspectrogram"], rtol=1e-4, atol=1e-4)
    logmel = A.LogMelSpectrogram(sr=16000, n_fft=256, n_mels=32, top_db=60.0)(x)
    np.testing.assert_allclose(logmel.numpy(), FIX["logmelspectrogram"], rtol=1e-4, atol=2e-3)
    mfcc = A.MFCC(sr=16000, n_mfcc=13, n_fft=256, n_mels=32)(x)
    assert mfcc.shape == list(FIX["mfcc"].shape)
    np.testing.assert_allclose(mfcc.numpy(), FIX["mfcc"], rtol=1e-4, atol=5e-3)
    # MFCC = DCT of the log-mel spectrogram (NumPy on fw's own log-mel)
    lm = A.LogMelSpectrogram(sr=16000, n_fft=256, n_mels=32)(x).numpy()
    ref = np.einsum("mk,bmt->bkt", F.create_dct(13, 32).numpy(), lm)
    np.testing.assert_allclose(mfcc.numpy(), ref, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("make", [
    lambda: A.Spectrogram(n_fft=16, hop_length=8, power=2.0, dtype="float64"),
    lambda: A.MelSpectrogram(sr=800, n_fft=16, hop_length=8, n_mels=4, dtype="float64"),
    lambda: A.MFCC(sr=800, n_mfcc=3, n_fft=16, n_mels=4, dtype="float64"),
], ids=["Spectrogram", "MelSpectrogram", "MFCC"])
def test_feature_gradients_match_finite_differences(make):
    layer = make()
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(1, 40))
    ct = rng.normal(size=layer(fw.to_tensor(x0)).shape)
    x = fw.to_tensor(x0, stop_gradient=False)
    (layer(x) * fw.to_tensor(ct)).sum().backward()
    analytic = x.grad.numpy()
    d = rng.normal(size=x0.shape)
    eps = 1e-6

    def f(v):
        return float((layer(fw.to_tensor(v)).numpy() * ct).sum())

    numeric = (f(x0 + eps * d) - f(x0 - eps * d)) / (2 * eps)
    assert (analytic * d).sum() == pytest.approx(numeric, rel=1e-5, abs=1e-6)


def test_feature_errors_name_the_layer():
    with pytest.raises(InvalidArgumentError, match="Spectrogram.*shape \\[1, 2, 64\\]"):
        A.Spectrogram(n_fft=16)(fw.zeros([1, 2, 64]))
    with pytest.raises(InvalidTypeError, match="Spectrogram.*Tensor"):
        A.Spectrogram(n_fft=16)(np.zeros(64))
    with pytest.raises(InvalidArgumentError, match="MFCC.*'n_mfcc' \\(40\\).*'n_mels' \\(20\\)"):
        A.MFCC(n_mels=20)
    with pytest.raises(InvalidArgumentError, match="'power' must be > 0"):
        A.Spectrogram(power=0.0)


# --- WAV backend -------------------------------------------------------------------------

def test_wav_round_trip_and_info(tmp_path):
    rng = np.random.default_rng(1)
    data = (rng.uniform(-1, 1, size=(2, 300))).astype(np.float32)
    path = str(tmp_path / "a.wav")
    fw.audio.save(path, fw.to_tensor(data), 8000)
    info = fw.audio.info(path)
    assert (info.sample_rate, info.num_frames, info.num_channels, info.bits_per_sample,
            info.encoding) == (8000, 300, 2, 16, "PCM_S")
    wav, sr = fw.audio.load(path)
    assert sr == 8000 and wav.shape == [2, 300] and wav.dtype == fw.float32
    np.testing.assert_allclose(wav.numpy(), np.round(data * 32768) / 32768, atol=1e-7)
    # the same bytes through the standard library: interleaved little-endian int16
    with wave.open(path) as w:
        raw = np.frombuffer(w.readframes(300), "<i2").reshape(300, 2).T
    np.testing.assert_array_equal(raw, np.round(data * 32768).astype(np.int16))
    part, _ = fw.audio.load(path, frame_offset=10, num_frames=5, channels_first=False,
                            normalize=False)
    assert part.shape == [5, 2]
    np.testing.assert_array_equal(part.numpy(), raw.T[10:15].astype(np.float32))
    tail, _ = fw.audio.load(path, frame_offset=290)
    np.testing.assert_allclose(tail.numpy(), wav.numpy()[:, 290:])
    with open(path, "rb") as fh:  # a file object works too
        assert fw.audio.load(io.BytesIO(fh.read()))[0].shape == [2, 300]


def test_wav_errors_and_backends(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....not a wave file")
    with pytest.raises(UnsupportedError, match="fw.audio.load.*16-bit PCM"):
        fw.audio.load(str(bad))
    with pytest.raises(UnsupportedError, match="fw.audio.info"):
        fw.audio.info(str(bad))
    with pytest.raises(InvalidArgumentError, match="fw.audio.save.*2-D.*\\[10\\]"):
        fw.audio.save(str(tmp_path / "x.wav"), fw.zeros([10]), 8000)
    with pytest.raises(UnsupportedError, match="bits_per_sample=24"):
        fw.audio.save(str(tmp_path / "x.wav"), fw.zeros([1, 10]), 8000, bits_per_sample=24)
    assert not (tmp_path / "x.wav").exists()
    B = fw.audio.backends
    assert B.list_available_backends() == ["wave_backend"]
    assert B.get_current_backend() == "wave_backend"
    B.set_backend("wave_backend")
    with pytest.raises(UnsupportedError, match="'soundfile' is not available"):
        B.set_backend("soundfile")
