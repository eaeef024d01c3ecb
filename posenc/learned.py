r"""Learned absolute position embeddings: a trainable lookup table.

BERT and GPT-2 keep a matrix :math:`W \in \mathbb R^{T_{\max} \times d}` and add row
``p`` to the token embedding at position ``p``.  The forward pass is a gather,

.. math:: Y_{b,t} = W_{p_{b,t}} ,

and the backward pass is its adjoint, a scatter-add: every occurrence of a
position, across the sequence and the batch, adds its upstream gradient into the
same row,

.. math:: \frac{\partial L}{\partial W_r} = \sum_{b,t:\; p_{b,t} = r} \frac{\partial L}{\partial Y_{b,t}} .

Rows that no training batch reaches receive zero gradient and keep their initial
values; positions ``>= max_len`` have no row at all.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_int_array, check_float, check_int

__all__ = ["LearnedPositionalEmbedding"]


class LearnedPositionalEmbedding:
    r"""A ``(max_len, d_model)`` table of position vectors with its gradient.

    Parameters
    ----------
    max_len : int
        Number of rows :math:`T_{\max} \ge 1`: the positions ``0 .. max_len - 1``.
    d_model : int
        Width of each row, ``>= 1``.
    std : float, default 0.02
        Standard deviation of the Gaussian initialisation, which must be >= 0. The
        default 0.02 is BERT's ``initializer_range``. The table is drawn from
        :math:`\mathcal N(0, \text{std}^2)`, as Hugging Face's
        ``BertPreTrainedModel._init_weights`` initialises ``nn.Embedding`` (``normal_``);
        Google's original BERT code (``modeling.py``, ``create_initializer``) draws from a
        normal truncated at two standard deviations (values beyond are re-drawn), which has
        a standard deviation about 0.88 times ``std``.
    seed : int, default 0
        Seed of the ``numpy.random.default_rng`` used for initialisation.

    Notes
    -----
    Two arrays hold the state, both float64 of shape ``(max_len, d_model)``:
    ``weight`` is the table :math:`W` and ``grad`` the accumulated
    :math:`\partial L / \partial W`, reset with :meth:`zero_grad`.

    Examples
    --------
    >>> emb = LearnedPositionalEmbedding(8, 4, seed=1)
    >>> y = emb.forward([[0, 1, 1]])          # shape (1, 3, 4)
    >>> emb.backward(np.ones_like(y))
    >>> emb.grad[1]                           # position 1 appeared twice
    array([2., 2., 2., 2.])
    """

    def __init__(self, max_len: int, d_model: int, *, std: float = 0.02, seed: int = 0):
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.d_model = check_int("d_model", d_model, minimum=1)
        std = check_float("std", std, minimum=0.0)
        seed = check_int("seed", seed, minimum=0)
        rng = np.random.default_rng(seed)
        self.weight = rng.normal(0.0, std, size=(self.max_len, self.d_model))
        self.grad = np.zeros_like(self.weight)
        self._positions = None

    @property
    def n_parameters(self) -> int:
        """Number of trainable scalars, ``max_len * d_model``."""
        return self.weight.size

    def _check_positions(self, positions) -> np.ndarray:
        pos = as_int_array("positions", positions)
        if pos.size:
            lo, hi = int(pos.min()), int(pos.max())
            if lo < 0 or hi >= self.max_len:
                bad = lo if lo < 0 else hi
                raise ValueError(
                    f"positions: expected values in [0, max_len) = [0, {self.max_len}), got {bad}; "
                    "a learned table has no row for that position"
                )
        return pos

    def forward(self, positions) -> np.ndarray:
        """Gather the rows of the given positions.

        Parameters
        ----------
        positions : array_like of int, shape (...)
            Integer positions in ``[0, max_len)``; any shape, e.g. ``(batch, T)``.

        Returns
        -------
        numpy.ndarray of float64, shape (..., d_model)
            A copy: later updates of ``weight`` do not change it.
        """
        pos = self._check_positions(positions)
        self._positions = pos
        return self.weight[pos]

    def backward(self, grad_out) -> None:
        """Scatter-add ``grad_out`` into ``grad`` at the positions of the last forward.

        Repeated positions, within a sequence or across the batch, accumulate
        (``numpy.add.at``, not fancy-index assignment, which would keep only
        one of them).  Calls accumulate until :meth:`zero_grad`.

        Parameters
        ----------
        grad_out : array_like of float, shape (..., d_model)
            :math:`\\partial L / \\partial Y`, the shape of the last forward's output.
        """
        if self._positions is None:
            raise RuntimeError(
                "backward: call forward(positions) first; there is nothing to differentiate"
            )
        g = as_float_array("grad_out", grad_out)
        expected = self._positions.shape + (self.d_model,)
        if g.shape != expected:
            raise ValueError(
                f"grad_out: expected shape {expected} (the forward output), got {g.shape}"
            )
        np.add.at(self.grad, self._positions.reshape(-1),
                  g.reshape(-1, self.d_model))

    def zero_grad(self) -> None:
        """Set ``grad`` to zero."""
        self.grad[...] = 0.0

    def step(self, lr: float) -> None:
        """One step of gradient descent, ``weight -= lr * grad``.

        Parameters
        ----------
        lr : float
            Learning rate, ``> 0``.
        """
        lr = check_float("lr", lr, positive=True)
        self.weight -= lr * self.grad

    def __repr__(self) -> str:
        return f"LearnedPositionalEmbedding(max_len={self.max_len}, d_model={self.d_model})"
