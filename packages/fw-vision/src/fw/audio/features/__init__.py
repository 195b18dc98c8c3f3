"""``fw.audio.features``: Paddle's ``paddle.audio.features`` — spectrogram, mel
spectrogram, log-mel spectrogram and MFCC layers."""

from fw.audio.features.layers import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram

__all__ = ["Spectrogram", "MelSpectrogram", "LogMelSpectrogram", "MFCC"]
