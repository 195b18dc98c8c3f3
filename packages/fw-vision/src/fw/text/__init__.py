"""``fw.text``: Paddle's ``paddle.text`` — CRF Viterbi decoding (`viterbi_decode`,
`ViterbiDecoder`)."""

from fw.text.viterbi_decode import ViterbiDecoder, viterbi_decode

__all__ = ["ViterbiDecoder", "viterbi_decode"]
