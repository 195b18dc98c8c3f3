"""Program passes of fw-distributed (registered in fw-core's pass registry on
import): ``fuse_all_reduce_ops`` coalesces a program's gradient all-reduces into
buckets (`fuse_all_reduce`)."""

from fw.distributed.passes.fuse_all_reduce import FuseAllReduce, bucket_bytes, install

__all__ = ["FuseAllReduce", "bucket_bytes", "install"]

install()
