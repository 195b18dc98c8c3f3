"""``fw.text``: Paddle's ``paddle.text`` — CRF Viterbi decoding (`viterbi_decode`,
`ViterbiDecoder`) and the text data sets."""

from fw.text.datasets import WMT14, WMT16, Conll05st, Imdb, Imikolov, Movielens, UCIHousing
from fw.text.viterbi_decode import ViterbiDecoder, viterbi_decode

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16",
           "ViterbiDecoder", "viterbi_decode"]
