"""The UCI Boston housing data set (Paddle's ``paddle.text.UCIHousing``)."""

from __future__ import annotations

import numpy as np

import fw
from fw.core.errors import InvalidArgumentError
from fw.io import Dataset
from fw.text.datasets._common import check_choice, fetch

URL = "http://paddlemodels.bj.bcebos.com/uci_housing/housing.data"
MD5 = "d4accdce7a25600298819f8e28e8d593"
feature_names = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX",
                 "PTRATIO", "B", "LSTAT"]


class UCIHousing(Dataset):
    """506 houses, 13 features and the median value; features are centred and divided by
    their range (over the whole file), the first 80% of rows are 'train', the rest 'test'.

    Args:
        data_file (str, optional): the path of ``housing.data`` (whitespace-separated
            numbers, 14 per row); None downloads it. Default None.
        mode (str, optional): 'train' or 'test'. Default 'train'.
        download (bool, optional): download when ``data_file`` is None. Default True.

    Returns:
        Dataset: items ``(features float[13], price float[1])`` in the default dtype.

    Examples:
        .. code-block:: python

            >>> import fw
            >>> import os, tempfile
            >>> import numpy as np
            >>> path = os.path.join(tempfile.mkdtemp(), "housing.data")
            >>> np.savetxt(path, np.arange(140.0).reshape(10, 14))
            >>> ds = fw.text.UCIHousing(data_file=path, mode="test")
            >>> len(ds), ds[0][0].shape, ds[0][1].tolist()
            (2, (13,), [125.0])
    """

    def __init__(self, data_file: str | None = None, mode: str = "train",
                 download: bool = True):
        self.mode = check_choice(mode, "mode", ("train", "test"), "UCIHousing")
        self.data_file = fetch(data_file, URL, MD5, "uci_housing", download, "UCIHousing")
        self._load_data()
        self.dtype = np.dtype(fw.get_default_dtype().np).name

    def _load_data(self, feature_num: int = 14, ratio: float = 0.8) -> None:
        with open(self.data_file) as f:
            try:
                data = np.array(f.read().split(), dtype=np.float64)
            except ValueError as e:
                raise InvalidArgumentError(f"UCIHousing: {self.data_file} is not a file of "
                                           f"numbers: {e}") from None
        if data.size % feature_num:
            raise InvalidArgumentError(f"UCIHousing: {self.data_file} holds {data.size} "
                                       f"numbers, not a multiple of {feature_num}")
        data = data.reshape(-1, feature_num)
        span = data.max(axis=0) - data.min(axis=0)
        avg = data.sum(axis=0) / data.shape[0]
        data[:, :-1] = (data[:, :-1] - avg[:-1]) / span[:-1]
        offset = int(data.shape[0] * ratio)
        self.data = data[:offset] if self.mode == "train" else data[offset:]

    def __getitem__(self, idx):
        row = self.data[idx]
        return np.array(row[:-1]).astype(self.dtype), np.array(row[-1:]).astype(self.dtype)

    def __len__(self):
        return len(self.data)
