"""ESC-50, 2000 five-second environmental sound clips in 50 classes (Paddle's
``paddle.audio.datasets.ESC50``)."""

from __future__ import annotations

import csv
import os
from typing import NamedTuple

from fw.audio.datasets.dataset import AudioClassificationDataset, data_home, download_archive
from fw.core.errors import InvalidArgumentError


class ESC50(AudioClassificationDataset):
    """ESC-50 with Paddle's 5-fold protocol: 'train' is every fold but ``split``, 'dev'
    is fold ``split``. The archive is downloaded and extracted into the hub cache's
    ``datasets`` directory the first time.

    Args:
        mode (str, optional): 'train' or 'dev'. Default 'train'.
        split (int, optional): the held-out fold, 1 to 5. Default 1.
        feat_type (str, optional): 'raw' or a feature (see
            `AudioClassificationDataset`). Default 'raw'.
        archive (dict, optional): ``{'url': ..., 'md5': ...}`` to download instead of
            Paddle's. Default None.
        **kwargs: arguments of the feature layer.

    Returns:
        Dataset: items ``(feature Tensor, label int)``.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> fw.audio.datasets.ESC50.label_list[:3]
            ['Dog', 'Rooster', 'Pig']
    """

    archive = {"url": "https://paddleaudio.bj.bcebos.com/datasets/ESC-50-master.zip",
               "md5": "7771e4b9d86d0945acce719c7a59305a"}
    label_list = [
        "Dog", "Rooster", "Pig", "Cow", "Frog", "Cat", "Hen", "Insects (flying)", "Sheep",
        "Crow", "Rain", "Sea waves", "Crackling fire", "Crickets", "Chirping birds",
        "Water drops", "Wind", "Pouring water", "Toilet flush", "Thunderstorm",
        "Crying baby", "Sneezing", "Clapping", "Breathing", "Coughing", "Footsteps",
        "Laughing", "Brushing teeth", "Snoring", "Drinking, sipping", "Door knock",
        "Mouse click", "Keyboard typing", "Door, wood creaks", "Can opening",
        "Washing machine", "Vacuum cleaner", "Clock alarm", "Clock tick", "Glass breaking",
        "Helicopter", "Chainsaw", "Siren", "Car horn", "Engine", "Train", "Church bells",
        "Airplane", "Fireworks", "Hand saw",
    ]
    meta = os.path.join("ESC-50-master", "meta", "esc50.csv")
    audio_path = os.path.join("ESC-50-master", "audio")

    class meta_info(NamedTuple):
        filename: str
        fold: str
        target: str
        category: str
        esc10: str
        src_file: str
        take: str

    def __init__(self, mode: str = "train", split: int = 1, feat_type: str = "raw",
                 archive: dict | None = None, **kwargs):
        if mode not in ("train", "dev"):
            raise InvalidArgumentError(f"ESC50: argument 'mode' must be 'train' or 'dev', got "
                                       f"{mode!r}")
        if isinstance(split, bool) or split not in range(1, 6):
            raise InvalidArgumentError(f"ESC50: argument 'split' must be an int in 1..5, got "
                                       f"{split!r}")
        if archive is not None:
            self.archive = archive
        files, labels = self._get_data(mode, split)
        super().__init__(files=files, labels=labels, feat_type=feat_type, **kwargs)

    def _get_meta_info(self):
        with open(os.path.join(data_home(), self.meta), newline="") as f:
            rows = list(csv.reader(f))[1:]
        out = []
        for row in rows:
            if len(row) != 7:
                raise InvalidArgumentError(f"ESC50: {self.meta} row {row!r} does not have "
                                           f"7 fields")
            out.append(self.meta_info(*row))
        return out

    def _get_data(self, mode, split):
        home = data_home()
        if not os.path.isdir(os.path.join(home, self.audio_path)) or \
                not os.path.isfile(os.path.join(home, self.meta)):
            download_archive(self.archive, "ESC50")
        files, labels = [], []
        for sample in self._get_meta_info():
            if (int(sample.fold) != split) == (mode == "train"):
                files.append(os.path.join(home, self.audio_path, sample.filename))
                labels.append(int(sample.target))
        return files, labels
