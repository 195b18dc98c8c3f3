"""fw.optimizer — optimizers with Paddle 3's signatures, and learning-rate schedules
(`fw.optimizer.lr`).

Every optimizer updates its parameters with fused kernels: parameters are packed
into flat buffers per dtype and hyper-parameter group, and one call of the update
op's kernel (``fw.core.ops.optimizer``) updates each buffer. See
`fw.optimizer.optimizer` and `fw.optimizer._flat` for the design.
"""

from fw.optimizer import lr  # noqa: F401
from fw.optimizer.adagrad import Adadelta, Adagrad, RMSProp
from fw.optimizer.adam import Adam, Adamax, AdamW, Lamb
from fw.optimizer.asgd import ASGD
from fw.optimizer.lbfgs import LBFGS
from fw.optimizer.nadam import NAdam, RAdam
from fw.optimizer.optimizer import Optimizer
from fw.optimizer.rprop import Rprop
from fw.optimizer.sgd import SGD, Momentum

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta",
           "RMSProp", "Lamb", "ASGD", "NAdam", "RAdam", "Rprop", "LBFGS",
           "lr"]
