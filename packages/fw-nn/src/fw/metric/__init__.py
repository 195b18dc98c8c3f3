"""fw.metric — evaluation metrics (Paddle's ``paddle.metric``)."""

from fw.metric.metrics import Accuracy, Auc, Metric, Precision, Recall, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]
