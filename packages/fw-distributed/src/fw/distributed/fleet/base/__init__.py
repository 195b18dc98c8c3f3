"""``fleet.base`` (Paddle's ``paddle.distributed.fleet.base``): the role makers and
`UtilBase`."""

from fw.distributed.fleet.base import role_maker, util_factory
from fw.distributed.fleet.base.role_maker import (
    PaddleCloudRoleMaker,
    Role,
    RoleMakerBase,
    UserDefinedRoleMaker,
)
from fw.distributed.fleet.base.util_factory import UtilBase

__all__ = ["role_maker", "util_factory", "Role", "RoleMakerBase", "PaddleCloudRoleMaker",
           "UserDefinedRoleMaker", "UtilBase"]
