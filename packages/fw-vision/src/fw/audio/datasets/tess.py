"""TESS, the Toronto emotional speech set: 2800 clips of two speakers in 7 emotions
(Paddle's ``paddle.audio.datasets.TESS``)."""

from __future__ import annotations

import os
from typing import NamedTuple

from fw.audio.datasets.dataset import AudioClassificationDataset, data_home, download_archive
from fw.core.errors import InvalidArgumentError


class TESS(AudioClassificationDataset):
    """TESS split into ``n_folds`` folds by file order (file i is in fold
    ``i % n_folds + 1``): 'train' is every fold but ``split``, 'dev' is fold ``split``.
    Files are taken in sorted path order (Paddle takes the file system's listing order,
    so its folds vary between machines). Labels come from the file names
    (``<speaker>_<word>_<emotion>.wav``).

    Args:
        mode (str, optional): 'train' or 'dev'. Default 'train'.
        n_folds (int, optional): the number of folds (>= 1). Default 5.
        split (int, optional): the held-out fold, 1 to ``n_folds``. Default 1.
        feat_type (str, optional): 'raw' or a feature. Default 'raw'.
        archive (dict, optional): ``{'url': ..., 'md5': ...}`` to download instead of
            Paddle's. Default None.
        **kwargs: arguments of the feature layer.

    Returns:
        Dataset: items ``(feature Tensor, label int)``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.datasets.TESS.label_list
            ['angry', 'disgust', 'fear', 'happy', 'neutral', 'ps', 'sad']
    """

    archive = {"url": "https://bj.bcebos.com/paddleaudio/datasets/"
                      "TESS_Toronto_emotional_speech_set.zip",
               "md5": "1465311b24d1de704c4c63e4ccc470c7"}
    label_list = ["angry", "disgust", "fear", "happy", "neutral", "ps", "sad"]
    audio_path = "TESS_Toronto_emotional_speech_set"

    class meta_info(NamedTuple):
        speaker: str
        word: str
        emotion: str

    def __init__(self, mode: str = "train", n_folds: int = 5, split: int = 1,
                 feat_type: str = "raw", archive: dict | None = None, **kwargs):
        if mode not in ("train", "dev"):
            raise InvalidArgumentError(f"TESS: argument 'mode' must be 'train' or 'dev', got "
                                       f"{mode!r}")
        if isinstance(n_folds, bool) or not isinstance(n_folds, int) or n_folds < 1:
            raise InvalidArgumentError(f"TESS: argument 'n_folds' must be an int >= 1, got "
                                       f"{n_folds!r}")
        if isinstance(split, bool) or split not in range(1, n_folds + 1):
            raise InvalidArgumentError(f"TESS: argument 'split' must be an int in "
                                       f"1..{n_folds}, got {split!r}")
        if archive is not None:
            self.archive = archive
        files, labels = self._get_data(mode, n_folds, split)
        super().__init__(files=files, labels=labels, feat_type=feat_type, **kwargs)

    def _get_meta_info(self, files):
        out = []
        for f in files:
            parts = os.path.basename(f)[:-4].split("_")
            if len(parts) != 3 or parts[2] not in self.label_list:
                raise InvalidArgumentError(f"TESS: {f}: expected <speaker>_<word>_<emotion>"
                                           f".wav with an emotion in {self.label_list}")
            out.append(self.meta_info(*parts))
        return out

    def _get_data(self, mode, n_folds, split):
        root = os.path.join(data_home(), self.audio_path)
        if not os.path.isdir(root):
            download_archive(self.archive, "TESS")
        wav_files = sorted(os.path.join(d, f) for d, _, names in os.walk(root)
                           for f in names if f.endswith(".wav"))
        files, labels = [], []
        for idx, sample in enumerate(self._get_meta_info(wav_files)):
            if (idx % n_folds + 1 != split) == (mode == "train"):
                files.append(wav_files[idx])
                labels.append(self.label_list.index(sample.emotion))
        return files, labels
