"""Knowledge distillation: soft-label (logit) and feature losses between a
teacher and a student, for a plain training loop and for `fw.Model.fit`.

- `soft_label_loss`: Hinton et al. 2015, "Distilling the Knowledge in a Neural
  Network": ``T^2 * KL(softmax(t/T) || softmax(s/T))``, averaged over the batch.
  The ``T^2`` keeps the soft term's gradient on the scale of the hard loss's
  when T changes (the gradient of the softened KL shrinks as ``1/T^2``). The
  teacher's logits get no gradient.
- `feature_loss`: FitNets-style hints (Romero et al. 2015): the distance (MSE,
  L1 or cosine) between a student feature and a teacher feature, through an
  optional learned `FeatureAdapter` (a 1x1 conv for NCHW maps, a Linear for
  ``[..., C]``) when the widths differ.
- `Distiller`: holds the student (trained) and the teacher (frozen, eval mode,
  not a sublayer: its parameters are not the Distiller's and no optimizer sees
  them); its forward runs both and returns the student's output, recording the
  teacher's output and the paired features (forward post-hooks). `DistillLoss`
  is the loss for `fw.Model.prepare`: ``loss(student_out, label)`` adds the hard
  loss, ``alpha`` x the soft-label loss and ``beta`` x the feature losses.

    >>> import fw
    >>> distiller = Distiller(teacher, student, features={"features.3": "features.3"})
    >>> model = fw.Model(distiller)
    >>> model.prepare(opt, DistillLoss(distiller, temperature=4.0, alpha=0.7),
    ...               fw.metric.Accuracy())
    >>> model.fit(train_data, epochs=2)
"""

from __future__ import annotations

import fw
import fw.nn as nn
import fw.nn.functional as F

__all__ = ["soft_label_loss", "feature_loss", "FeatureAdapter", "Distiller", "DistillLoss"]


def _constant(t):
    """`t` without a gradient path. Eagerly: ``detach()``. In a program being traced
    (fw.jit.to_static) fw's IR has no detach; there the teacher's values must not
    depend on trained parameters -- which the `Distiller` guarantees (a frozen teacher
    run without gradients) -- and are passed on as they are."""
    return t.detach() if isinstance(t, fw.Tensor) else t


def soft_label_loss(student_logits, teacher_logits, temperature=4.0, reduction="mean"):
    """Hinton's soft-label distillation loss, ``T^2 * KL(p_t || p_s)``, with both
    distributions softened by `temperature` along the last axis.

    Args:
        student_logits (Tensor): ``[..., classes]``.
        teacher_logits (Tensor): the same shape (gets no gradient).
        temperature (float, optional): T > 0. Default: 4.0.
        reduction (str, optional): "mean" (over the rows: the batch), "sum" or "none"
            (one value per row). Default: "mean".

    Returns:
        Tensor: the loss.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> t = fw.to_tensor([[2.0, 1.0, 0.0]])
        >>> float(fw.slim.soft_label_loss(t, t))                  # same distribution
        0.0
        >>> s = fw.to_tensor([[0.0, 0.0, 0.0]])
        >>> round(float(fw.slim.soft_label_loss(s, t, temperature=1.0)), 4)
        0.2662
    """
    s_shape, t_shape = list(student_logits.shape), list(teacher_logits.shape)
    if s_shape != t_shape:
        raise ValueError(f"soft_label_loss: student logits {s_shape} and teacher logits "
                         f"{t_shape} differ in shape")
    if not float(temperature) > 0:
        raise ValueError(f"soft_label_loss: 'temperature' must be > 0, got {temperature}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"soft_label_loss: 'reduction' must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    t = float(temperature)
    teacher = _constant(teacher_logits)
    log_ps = F.log_softmax(student_logits / t, axis=-1)
    log_pt = F.log_softmax(teacher / t, axis=-1)
    per_row = (log_pt.exp() * (log_pt - log_ps)).sum(axis=-1) * (t * t)
    if reduction == "mean":
        return per_row.mean()
    if reduction == "sum":
        return per_row.sum()
    return per_row


class FeatureAdapter(nn.Layer):
    """A learned map from the student's feature width to the teacher's, for feature
    distillation: a 1x1 Conv2D for ``[N, C, H, W]`` features (``kind="conv"``), a Linear
    for ``[..., C]`` ones (``kind="linear"``).

    Args:
        student_channels (int): the student feature's width.
        teacher_channels (int): the teacher feature's width.
        kind (str, optional): "conv" or "linear". Default: "conv".

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> adapter = fw.slim.FeatureAdapter(4, 8, kind="linear")
        >>> adapter(fw.ones([2, 4])).shape
        [2, 8]
    """

    def __init__(self, student_channels, teacher_channels, kind="conv"):
        super().__init__()
        if kind not in ("conv", "linear"):
            raise ValueError(f"FeatureAdapter: 'kind' must be 'conv' or 'linear', got {kind!r}")
        self.kind = kind
        self.proj = (nn.Conv2D(student_channels, teacher_channels, 1) if kind == "conv"
                     else nn.Linear(student_channels, teacher_channels))

    def forward(self, x):
        return self.proj(x)


def feature_loss(student_feat, teacher_feat, adapter=None, loss="mse"):
    """The distance between a student feature and a teacher feature.

    The teacher's feature gets no gradient; `adapter` (a Layer or callable) maps the
    student's first (e.g. to match widths).

    Args:
        student_feat (Tensor): the student's feature.
        teacher_feat (Tensor): the teacher's feature.
        adapter (Layer|callable, optional): applied to `student_feat`. Default: None.
        loss (str, optional): "mse", "l1" or "cosine" (1 - cosine similarity of the
            flattened features per sample, averaged). Default: "mse".

    Returns:
        Tensor: the scalar loss.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> float(fw.slim.feature_loss(fw.ones([2, 3]), fw.zeros([2, 3])))
        1.0
        >>> float(fw.slim.feature_loss(fw.ones([2, 3]), fw.ones([2, 3]), loss="cosine"))
        0.0
    """
    s = adapter(student_feat) if adapter is not None else student_feat
    t = _constant(teacher_feat)
    if list(s.shape) != list(t.shape):
        hint = "" if adapter is not None else " (pass adapter=FeatureAdapter(...))"
        raise ValueError(f"feature_loss: student feature {list(s.shape)} and teacher feature "
                         f"{list(t.shape)} differ in shape{hint}")
    if loss == "mse":
        return F.mse_loss(s, t)
    if loss == "l1":
        return F.l1_loss(s, t)
    if loss == "cosine":
        n = s.shape[0]
        return (1.0 - F.cosine_similarity(s.reshape([n, -1]), t.reshape([n, -1]), axis=1)).mean()
    raise ValueError(f"feature_loss: 'loss' must be 'mse', 'l1' or 'cosine', got {loss!r}")


def _sublayer(model, name, who):
    layers = dict(model.named_sublayers(include_self=True))
    if name not in layers:
        raise KeyError(f"Distiller: the {who} has no sublayer {name!r}; some are "
                       f"{[k for k in layers if k][:10]}")
    return layers[name]


class Distiller(nn.Layer):
    """A teacher and a student for knowledge distillation.

    Calling it runs both on the input and returns the student's output; the teacher's
    output (and the paired features) are kept for `DistillLoss`. The teacher is frozen
    (``stop_gradient``) and kept in eval mode.

    Args:
        teacher (Layer): the trained model.
        student (Layer): the model to train.
        features (dict, optional): ``{student sublayer name: teacher sublayer name}``
            pairs whose outputs `DistillLoss`'s feature term compares. Default: None.
        adapters (dict|bool, optional): ``{student sublayer name: Layer}`` adapters
            (trained with the student), or True to build a `FeatureAdapter` per pair whose
            widths differ (read from a forward pass on `sample`). Default: None.
        sample (Tensor, optional): an input used once to size the automatic adapters.
            Default: None.

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> teacher = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 3))
        >>> student = fw.nn.Sequential(fw.nn.Linear(4, 3))
        >>> distiller = fw.slim.Distiller(teacher, student)
        >>> distiller(fw.randn([5, 4])).shape
        [5, 3]
    """

    def __init__(self, teacher, student, features=None, adapters=None, sample=None):
        super().__init__()
        for who, m in (("teacher", teacher), ("student", student)):
            if not isinstance(m, nn.Layer):
                raise TypeError(f"Distiller: '{who}' must be a fw.nn.Layer, got "
                                f"{type(m).__name__}")
        self.student = student
        # not a sublayer: its parameters stay out of parameters() and optimizers
        object.__setattr__(self, "_teacher", teacher)
        for p in teacher.parameters():
            p.stop_gradient = True
        teacher.eval()
        self.features = dict(features or {})
        self.teacher_output = None
        self.student_features: dict = {}
        self.teacher_features: dict = {}
        self._hooks = []
        for s_name, t_name in self.features.items():
            self._hooks.append(_sublayer(student, s_name, "student").register_forward_post_hook(
                self._recorder(self.student_features, s_name)))
            self._hooks.append(_sublayer(teacher, t_name, "teacher").register_forward_post_hook(
                self._recorder(self.teacher_features, s_name)))
        self.adapters = nn.LayerDict()
        if adapters is True:
            if sample is None:
                raise ValueError("Distiller: adapters=True needs 'sample' (an input batch) to "
                                 "read the feature widths")
            from fw.autograd import no_grad

            with no_grad():
                self(sample)
            for s_name in self.features:
                s, t = self.student_features[s_name], self.teacher_features[s_name]
                if list(s.shape) != list(t.shape):
                    kind = "conv" if len(s.shape) == 4 else "linear"
                    ax = 1 if kind == "conv" else -1
                    self.adapters[_key(s_name)] = FeatureAdapter(s.shape[ax], t.shape[ax], kind)
        elif adapters:
            for s_name, layer in dict(adapters).items():
                if s_name not in self.features:
                    raise KeyError(f"Distiller: adapter for {s_name!r}, which is not a student "
                                   f"feature in 'features' ({list(self.features)})")
                self.adapters[_key(s_name)] = layer

    @property
    def teacher(self):
        """The teacher model (kept in eval mode, run without gradients).

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> teacher = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 3))
            >>> student = fw.nn.Sequential(fw.nn.Linear(4, 3))
            >>> distiller = fw.slim.Distiller(teacher, student)
            >>> distiller.teacher is teacher
            True
        """
        return self._teacher

    def remove_hooks(self) -> None:
        """Detach the feature recorders from the student and the teacher (when the
        distillation is over; the student then runs exactly as before).

        Returns:
            None.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> teacher = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 3))
            >>> student = fw.nn.Sequential(fw.nn.Linear(4, 3))
            >>> distiller = fw.slim.Distiller(teacher, student)
            >>> distiller.remove_hooks()
            >>> student(fw.randn([2, 4])).shape
            [2, 3]
        """
        for h in self._hooks:
            h.remove()
        self._hooks.clear()

    @staticmethod
    def _recorder(store, key):
        def hook(layer, inputs, output):
            store[key] = output

        return hook

    def train(self, mode: bool = True):
        super().train(mode)
        self._teacher.eval()  # the teacher's BN/dropout stay in inference mode
        return self

    def forward(self, *inputs):
        from fw.autograd import no_grad

        with no_grad():
            self.teacher_output = self._teacher(*inputs)
        return self.student(*inputs)

    def adapter(self, s_name):
        """The adapter layer that maps student feature `s_name` to the teacher's width,
        or None when it has none.

        Args:
            s_name (str): a student feature name of ``features``.

        Returns:
            Layer|None: the adapter.

        Examples:
            >>> import fw
            >>> import fw.slim
            >>> teacher = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 3))
            >>> student = fw.nn.Sequential(fw.nn.Linear(4, 3))
            >>> distiller = fw.slim.Distiller(teacher, student)
            >>> distiller.adapter("0") is None
            True
        """
        k = _key(s_name)
        return self.adapters[k] if k in self.adapters else None


def _key(name: str) -> str:
    return name.replace(".", "__") or "_root"


class DistillLoss:
    """The loss of a `Distiller`, for a training loop or ``fw.Model.prepare``:
    ``hard_weight * hard_loss(student_out, label) + alpha * soft_label_loss(...) +
    beta * sum(feature losses)``.

    Args:
        distiller (Distiller): its last forward's teacher output and features are read.
        temperature (float, optional): T of the soft-label loss. Default: 4.0.
        alpha (float, optional): the soft-label loss's weight (0 disables it).
            Default: 0.9.
        beta (float, optional): the feature losses' weight. Default: 0.0.
        hard_loss (callable|str|None, optional): a loss on (student output, label);
            "default" is cross entropy; None for no hard term (then no label is needed).
            Default: "default".
        hard_weight (float, optional): the hard loss's weight. Default: 1.0.
        feature_loss_type (str, optional): "mse", "l1" or "cosine". Default: "mse".

    Examples:
        >>> import fw
        >>> import fw.slim
        >>> teacher = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 3))
        >>> student = fw.nn.Sequential(fw.nn.Linear(4, 3))
        >>> distiller = fw.slim.Distiller(teacher, student)
        >>> loss_fn = fw.slim.DistillLoss(distiller, temperature=2.0, alpha=0.5)
        >>> loss = loss_fn(distiller(fw.randn([5, 4])), fw.randint(0, 3, [5, 1]))
        >>> loss.backward()
        >>> student[0].weight.grad is not None, teacher[0].weight.grad is None
        (True, True)
    """

    def __init__(self, distiller, temperature=4.0, alpha=0.9, beta=0.0, hard_loss="default",
                 hard_weight=1.0, feature_loss_type="mse"):
        if not isinstance(distiller, Distiller):
            raise TypeError(f"DistillLoss: 'distiller' must be a Distiller, got "
                            f"{type(distiller).__name__}")
        self.distiller = distiller
        self.temperature = float(temperature)
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.hard_loss = nn.CrossEntropyLoss() if hard_loss == "default" else hard_loss
        self.hard_weight = float(hard_weight)
        self.feature_loss_type = feature_loss_type

    def __call__(self, student_out, *labels):
        d = self.distiller
        if d.teacher_output is None:
            raise RuntimeError("DistillLoss: call the Distiller (its forward) before the loss")
        total = None

        def acc(t, w):
            nonlocal total
            if w:
                total = t * w if total is None else total + t * w

        if self.hard_loss is not None:
            if not labels:
                raise ValueError("DistillLoss: the hard loss needs a label (pass hard_loss=None "
                                 "to distil without labels)")
            acc(self.hard_loss(student_out, *labels), self.hard_weight)
        if self.alpha:
            acc(soft_label_loss(student_out, d.teacher_output, self.temperature), self.alpha)
        if self.beta:
            for s_name in d.features:
                acc(feature_loss(d.student_features[s_name], d.teacher_features[s_name],
                                 d.adapter(s_name), self.feature_loss_type), self.beta)
        if total is None:
            raise ValueError("DistillLoss: every term has weight 0")
        return total
