"""fw.vision.datasets: Paddle 3.x's ``paddle.vision.datasets`` (see
packages/fw-vision/README.md): MNIST, FashionMNIST, Cifar10/100, Flowers, VOC2012
downloaded through `fw.utils.download` (Paddle's URLs and md5 sums, fw's cache,
offline-first) and parsed from their real file formats; DatasetFolder and
ImageFolder over directory trees."""

from fw.vision.datasets.cifar import Cifar10, Cifar100
from fw.vision.datasets.flowers import Flowers
from fw.vision.datasets.folder import DatasetFolder, ImageFolder
from fw.vision.datasets.mnist import MNIST, FashionMNIST
from fw.vision.datasets.voc2012 import VOC2012

__all__ = ["DatasetFolder", "ImageFolder", "MNIST", "FashionMNIST", "Flowers", "Cifar10",
           "Cifar100", "VOC2012"]
