"""fw.hub.text: BERT / ERNIE / MiniLM encoders with Hugging Face names, their
tokenizers (the ``tokenizers`` library) and sentence-transformers folders.

See packages/fw-hub/README.md ("Text models") for the design.
"""

from fw.hub.text.bert import BertModel, ErnieModel
from fw.hub.text.config import BertConfig, ErnieConfig, config_from_dict, load_config
from fw.hub.text.sentence_transformer import (
    Dense,
    Normalize,
    Pooling,
    SentenceTransformer,
    Transformer,
)
from fw.hub.text.tokenizer import Tokenizer
from fw.hub.text.weights import (
    ConversionReport,
    from_pretrained,
    fw_to_hf_state_dict,
    hf_to_fw_state_dict,
    linear_weight_names,
    load_hf_weights,
    save_pretrained,
)

__all__ = ["BertConfig", "BertModel", "ConversionReport", "Dense", "ErnieConfig", "ErnieModel",
           "Normalize", "Pooling", "SentenceTransformer", "Tokenizer", "Transformer",
           "config_from_dict", "from_pretrained", "fw_to_hf_state_dict", "hf_to_fw_state_dict",
           "linear_weight_names", "load_config", "load_hf_weights",
           "save_pretrained"]
