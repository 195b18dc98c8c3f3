"""fw.vision.ops: Paddle 3.x's ``paddle.vision.ops`` — detection and region ops
(see packages/fw-vision/README.md). One module per family; the public names are
re-exported here."""

from fw.vision.ops.boxes import box_coder, prior_box, yolo_box
from fw.vision.ops.deform import DeformConv2D, deform_conv2d
from fw.vision.ops.image_io import decode_jpeg, read_file
from fw.vision.ops.proposals import distribute_fpn_proposals, generate_proposals
from fw.vision.ops.roi import PSRoIPool, RoIAlign, RoIPool, psroi_pool, roi_align, roi_pool
from fw.vision.ops.suppression import matrix_nms, nms
from fw.vision.ops.yolov3_loss import yolo_loss

__all__ = ["nms", "matrix_nms", "box_coder", "prior_box", "yolo_box", "roi_align",
           "roi_pool", "psroi_pool", "RoIAlign", "RoIPool", "PSRoIPool", "deform_conv2d",
           "DeformConv2D", "distribute_fpn_proposals", "generate_proposals", "yolo_loss",
           "read_file", "decode_jpeg"]
