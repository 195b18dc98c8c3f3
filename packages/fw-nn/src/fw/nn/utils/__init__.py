"""``fw.nn.utils``: parameter/vector conversion, gradient clipping helpers, weight
normalization and spectral normalization."""

from fw.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from fw.nn.utils.spectral_norm_hook import remove_spectral_norm, spectral_norm
from fw.nn.utils.transform_parameters import parameters_to_vector, vector_to_parameters
from fw.nn.utils.weight_norm_hook import remove_weight_norm, weight_norm

__all__ = ["parameters_to_vector", "vector_to_parameters", "clip_grad_norm_",
           "clip_grad_value_", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm"]
