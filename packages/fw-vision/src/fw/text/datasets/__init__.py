"""``fw.text.datasets``: Paddle's text data sets, parsed from Paddle's published files
(downloaded through `fw.utils.download` with Paddle's URLs and md5s)."""

from fw.text.datasets.conll05 import Conll05st
from fw.text.datasets.imdb import Imdb
from fw.text.datasets.imikolov import Imikolov
from fw.text.datasets.movielens import Movielens
from fw.text.datasets.uci_housing import UCIHousing
from fw.text.datasets.wmt14 import WMT14
from fw.text.datasets.wmt16 import WMT16

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16"]
