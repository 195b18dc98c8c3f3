"""Bad inputs to fw.vision.ops give errors that name the op, the argument, and the
shapes and dtypes involved; read_file / decode_jpeg on real files."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import fw
import fw.vision.ops as ops

BOX = fw.to_tensor([[0.0, 0.0, 2.0, 2.0]])
NUM = fw.to_tensor(np.array([1], np.int32))
X = fw.zeros([1, 4, 5, 5])


@pytest.mark.parametrize("call, exc, words", [
    (lambda: ops.nms(fw.zeros([3, 5])), ValueError, ["nms", "'boxes'", "[3, 5]", "float32"]),
    (lambda: ops.nms(fw.zeros([3, 4], dtype="int32")), TypeError, ["nms", "'boxes'", "int32"]),
    (lambda: ops.nms(fw.zeros([3, 4]), 0.3, fw.zeros([2])), ValueError,
     ["nms", "'scores'", "[2]"]),
    (lambda: ops.nms(fw.zeros([3, 4]), 0.3, fw.zeros([3]),
                     fw.zeros([3], dtype="int64")), ValueError, ["nms", "'categories'"]),
    (lambda: ops.roi_align(fw.zeros([1, 4, 5]), BOX, NUM, 2), ValueError,
     ["roi_align", "'x'", "4-D", "[1, 4, 5]"]),
    (lambda: ops.roi_align(X, BOX, fw.to_tensor(np.array([2], np.int32)), 2), ValueError,
     ["roi_align", "'boxes_num'", "sum"]),
    (lambda: ops.roi_align(X, fw.zeros([1, 4], dtype="float64"), NUM, 2), TypeError,
     ["roi_align", "'x'", "'boxes'", "float64", "float32"]),
    (lambda: ops.roi_pool(X, BOX, NUM, 0), ValueError, ["roi_pool", "'output_size'"]),
    (lambda: ops.psroi_pool(fw.zeros([1, 3, 5, 5]), BOX, NUM, 2), ValueError,
     ["psroi_pool", "divisible", "[1, 3, 5, 5]"]),
    (lambda: ops.deform_conv2d(X, fw.zeros([1, 18, 2, 2]), fw.zeros([2, 4, 3, 3])),
     ValueError, ["deform_conv2d", "'offset'", "[1, 18, 3, 3]", "[1, 18, 2, 2]"]),
    (lambda: ops.deform_conv2d(X, fw.zeros([1, 18, 3, 3]), fw.zeros([2, 3, 3, 3])),
     ValueError, ["deform_conv2d", "'weight'", "[2, 3, 3, 3]"]),
    (lambda: ops.box_coder(BOX, [0.1, 0.2], BOX), ValueError, ["box_coder", "'prior_box_var'"]),
    (lambda: ops.box_coder(BOX, None, BOX, code_type="nope"), ValueError,
     ["box_coder", "'code_type'"]),
    (lambda: ops.yolo_box(fw.zeros([1, 10, 2, 2]), fw.to_tensor(np.array([[8, 8]], np.int32)),
                          [1, 2], 3, 0.1, 4), ValueError, ["yolo_box", "'x'", "8 channels"]),
    (lambda: ops.prior_box(X, X, [4.0], [2.0]), ValueError, ["prior_box", "max size"]),
    (lambda: ops.yolo_loss(fw.zeros([1, 16, 2, 2]), fw.zeros([1, 2, 4]),
                           fw.zeros([1, 3], dtype="int32"), [1, 2, 3, 4], [0, 1], 3, 0.5, 8),
     ValueError, ["yolo_loss", "'gt_label'", "[1, 3]"]),
    (lambda: ops.yolo_loss(fw.zeros([1, 16, 2, 3]), fw.zeros([1, 2, 4]),
                           fw.zeros([1, 2], dtype="int32"), [1, 2, 3, 4], [0, 1], 3, 0.5, 8),
     ValueError, ["yolo_loss", "'x'", "square", "[1, 16, 2, 3]"]),
    (lambda: ops.matrix_nms(fw.zeros([1, 3, 4]), fw.zeros([1, 2, 4]), 0.1, 0.1, -1, -1),
     ValueError, ["matrix_nms", "'bboxes'", "'scores'", "[1, 2, 4]"]),
    (lambda: ops.generate_proposals(fw.zeros([1, 2, 3, 3]), fw.zeros([1, 4, 3, 3]),
                                    fw.ones([1, 2]), fw.zeros([3, 3, 2, 4]),
                                    fw.ones([3, 3, 2, 4])), ValueError,
     ["generate_proposals", "'bbox_deltas'", "[1, 8, 3, 3]"]),
    (lambda: ops.distribute_fpn_proposals(BOX, 5, 2, 4, 224), ValueError,
     ["distribute_fpn_proposals", "min_level"]),
    (lambda: ops.decode_jpeg(fw.zeros([4])), TypeError, ["decode_jpeg", "'x'", "uint8"]),
])
def test_bad_input_errors_name_op_argument_shape(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def _jpeg(mode, size=(7, 5)):
    rng = np.random.default_rng(0)
    shape = (size[1], size[0]) + ((3,) if mode == "RGB" else ())
    img = Image.fromarray(rng.integers(0, 255, shape).astype(np.uint8), mode=mode)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


@pytest.mark.parametrize("src_mode", ["RGB", "L"])
@pytest.mark.parametrize("mode", ["unchanged", "gray", "rgb"])
def test_read_file_and_decode_jpeg(tmp_path, src_mode, mode):
    data = _jpeg(src_mode)
    path = tmp_path / "img.jpg"
    path.write_bytes(data)
    raw = ops.read_file(str(path))
    assert raw.dtype == fw.uint8 and raw.numpy().tobytes() == data
    img = ops.decode_jpeg(raw, mode=mode).numpy()
    ref = Image.open(io.BytesIO(data))
    ref = ref.convert({"gray": "L", "rgb": "RGB"}.get(mode, ref.mode))
    want = np.asarray(ref)
    want = want[None] if want.ndim == 2 else want.transpose(2, 0, 1)
    assert img.dtype == np.uint8 and img.shape == want.shape
    np.testing.assert_array_equal(img, want)


def test_decode_jpeg_refuses_other_formats_and_garbage(tmp_path):
    buf = io.BytesIO()
    Image.new("RGB", (3, 3)).save(buf, format="PNG")
    with pytest.raises(ValueError, match="decode_jpeg.*PNG"):
        ops.decode_jpeg(fw.to_tensor(np.frombuffer(buf.getvalue(), np.uint8)))
    with pytest.raises(ValueError, match="decode_jpeg.*not a decodable JPEG"):
        ops.decode_jpeg(fw.to_tensor(np.frombuffer(b"\x00garbage", np.uint8)))
    truncated = _jpeg("RGB", (64, 64))[:200]
    with pytest.raises(ValueError, match="decode_jpeg"):
        ops.decode_jpeg(fw.to_tensor(np.frombuffer(truncated, np.uint8)))
    with pytest.raises(FileNotFoundError, match="read_file"):
        ops.read_file(str(tmp_path / "missing.jpg"))


def test_empty_inputs_like_paddle():
    """Empty box sets give empty outputs; values checked against Paddle 3.3.1 by hand."""
    assert ops.nms(fw.zeros([0, 4])).shape == [0]
    assert ops.nms(fw.zeros([0, 4]), 0.3, fw.zeros([0])).shape == [0]
    none = fw.to_tensor(np.array([0, 0], np.int32))
    x = fw.ones([2, 3, 5, 5])
    assert ops.roi_align(x, fw.zeros([0, 4]), none, 2).shape == [0, 3, 2, 2]
    assert ops.roi_pool(x, fw.zeros([0, 4]), none, 2).shape == [0, 3, 2, 2]
    assert ops.psroi_pool(fw.ones([2, 4, 5, 5]), fw.zeros([0, 4]), none, 2).shape == [0, 1, 2, 2]
    # an image without boxes gets no gradient; the other one gets all of it
    x.stop_gradient = False
    ops.roi_align(x, BOX, fw.to_tensor(np.array([0, 1], np.int32)), 2).sum().backward()
    assert x.grad.numpy()[0].sum() == 0 and abs(x.grad.numpy()[1].sum() - 12.0) < 1e-5
    # every proposal filtered out: Paddle emits one zero box with score 0
    rois, probs, num = ops.generate_proposals(
        fw.to_tensor([[[[0.9]]]]), fw.zeros([1, 4, 1, 1]), fw.to_tensor([[16.0, 16.0]]),
        fw.to_tensor([[[[0.0, 0.0, 0.2, 0.2]]]]), fw.ones([1, 1, 1, 4]), return_rois_num=True)
    assert rois.numpy().tolist() == [[0, 0, 0, 0]] and probs.numpy().tolist() == [[0]]
    assert num.numpy().tolist() == [1]
    assert ops.matrix_nms(fw.zeros([1, 3, 4]), fw.zeros([1, 2, 3]), 0.5, 0.1, -1, -1)[0].shape \
        == [0, 6]
    loss = ops.yolo_loss(fw.zeros([1, 16, 2, 2]), fw.zeros([1, 1, 4]),
                         fw.zeros([1, 1], dtype="int32"), [1, 2, 3, 4], [0, 1], 3, 0.5, 8)
    np.testing.assert_allclose(loss.numpy(), [5.5451775], rtol=1e-6)  # 8 * log(2)


def test_roi_align_empty_box_pools_to_zero():
    """Paddle 3.3.1 returns NaN here (0 / 0 in its kernel); fw returns 0, like torchvision."""
    x = fw.to_tensor(np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5))
    boxes = fw.to_tensor([[1.0, 1.0, 1.0, 3.0], [2.0, 2.0, 1.0, 1.0], [1.2, 1.0, 1.6, 3.0]])
    out = ops.roi_align(x, boxes, fw.to_tensor(np.array([3], np.int32)), 2).numpy()
    assert (out[:2] == 0).all()
    # the third box is Paddle's value (aligned=True), from the same call in Paddle 3.3.1
    np.testing.assert_allclose(out[2, 0], [[5.8, 6.0], [10.8, 11.0]], rtol=1e-5)
