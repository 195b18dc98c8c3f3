"""The base of the audio classification data sets: (file, label) pairs whose waveform is
loaded on access and optionally turned into features (Paddle's
``AudioClassificationDataset``)."""

from __future__ import annotations

import os

import fw
from fw.audio.features import MFCC, LogMelSpectrogram, MelSpectrogram, Spectrogram
from fw.core.errors import InvalidArgumentError
from fw.io import Dataset

feat_funcs = {
    "raw": None,
    "melspectrogram": MelSpectrogram,
    "mfcc": MFCC,
    "logmelspectrogram": LogMelSpectrogram,
    "spectrogram": Spectrogram,
}


def data_home() -> str:
    """Where the audio archives are downloaded and extracted: ``<hub dir>/datasets``
    (fw.hub's cache, moved by ``FW_HUB_CACHE``; Paddle: ``~/.cache/paddle/dataset``)."""
    from fw.hub.cache import hub_dir

    return os.path.join(hub_dir(), "datasets")


def download_archive(archive: dict, who: str) -> None:
    """Fetch and safely extract ``archive['url']`` (md5 ``archive['md5']``) into
    `data_home` through `fw.utils.download`."""
    if not isinstance(archive, dict) or not {"url", "md5"} <= set(archive):
        raise InvalidArgumentError(f"{who}: argument 'archive' must be a dict with 'url' and "
                                   f"'md5', got {archive!r}")
    from fw.utils.download import get_path_from_url

    get_path_from_url(archive["url"], data_home(), archive["md5"], decompress=True)


class AudioClassificationDataset(Dataset):
    """Audio files with integer labels; items are ``(feature, label)`` where the feature
    is the mono waveform (``feat_type='raw'``) or one of the `fw.audio.features` layers
    applied to it, built with ``**kwargs`` (plus ``sr`` = the file's sample rate).

    Args:
        files (list[str]): the WAV files.
        labels (list[int]): their labels.
        feat_type (str, optional): 'raw', 'melspectrogram', 'mfcc', 'logmelspectrogram'
            or 'spectrogram'. Default 'raw'.
        sample_rate (int, optional): recorded from the last file read. Default None.
        **kwargs: arguments of the feature layer.

    Examples:
        .. code-block:: python

            >>> import os, tempfile
            >>> import fw
            >>> from fw.audio.datasets.dataset import AudioClassificationDataset
            >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
            >>> fw.audio.save(path, fw.zeros([1, 1600]), 16000)
            >>> ds = AudioClassificationDataset([path], [3], feat_type="mfcc", n_mfcc=13)
            >>> feat, label = ds[0]
            >>> feat.shape, label
            ([13, 13], 3)
    """

    def __init__(self, files, labels, feat_type: str = "raw", sample_rate: int | None = None,
                 **kwargs):
        super().__init__()
        if feat_type not in feat_funcs:
            raise InvalidArgumentError(f"{type(self).__name__}: unknown feat_type "
                                       f"{feat_type!r}; it must be one of {list(feat_funcs)}")
        if len(files) != len(labels):
            raise InvalidArgumentError(f"{type(self).__name__}: {len(files)} files but "
                                       f"{len(labels)} labels")
        self.files, self.labels = files, labels
        self.feat_type = feat_type
        self.sample_rate = sample_rate
        self.feat_config = kwargs

    def _convert_to_record(self, idx):
        waveform, sample_rate = fw.audio.load(self.files[idx])
        self.sample_rate = sample_rate
        if len(waveform.shape) == 2:
            waveform = waveform[0]  # the first channel, as Paddle's squeeze(0) on mono
        layer = feat_funcs[self.feat_type]
        if layer is None:
            return waveform, self.labels[idx]
        config = dict(self.feat_config)
        if self.feat_type != "spectrogram":
            config["sr"] = sample_rate
        return layer(**config)(waveform.unsqueeze(0))[0], self.labels[idx]

    def __getitem__(self, idx):
        return self._convert_to_record(idx)

    def __len__(self):
        return len(self.files)
