"""posenc.model: every gradient against central finite differences, for every scheme."""

import numpy as np
import pytest

from helpers import finite_difference_gradient

from posenc import alibi_bias, apply_rope
from posenc.model import SCHEMES, ModelConfig, forward, init_params, log_softmax, loss_and_grads


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_gradient_matches_finite_differences(scheme):
    rng = np.random.default_rng(0)
    cfg = ModelConfig(vocab=5, d_model=8, n_heads=2, d_ff=6, scheme=scheme, max_len=10)
    params = init_params(cfg, 3)
    x = rng.integers(0, 5, (2, 6))
    y = rng.integers(0, 4, (2, 6))
    _, grads = loss_and_grads(params, x, y, cfg)
    assert set(grads) == set(params)
    for key in params:
        num = finite_difference_gradient(lambda: loss_and_grads(params, x, y, cfg)[0], params[key])
        scale = max(np.max(np.abs(num)), np.max(np.abs(grads[key])), 1e-12)
        assert np.max(np.abs(num - grads[key])) / scale < 1e-6, key


def test_rope_gradient_with_scaled_frequencies_and_positions():
    """The backward pass uses R^T (rotation by -m): also right for shifted positions."""
    rng = np.random.default_rng(1)
    cfg = ModelConfig(vocab=4, d_model=8, n_heads=2, d_ff=4, scheme="rope")
    params = init_params(cfg, 0)
    x, y = rng.integers(0, 4, (1, 5)), rng.integers(0, 3, (1, 5))
    pos = np.array([3.0, 10.0, 11.0, 40.0, 41.5])
    loss, g = loss_and_grads(params, x, y, cfg, positions=pos)
    eps, key, idx = 1e-6, "Wq0", (2, 5)
    params[key][idx] += eps
    lp, _ = loss_and_grads(params, x, y, cfg, positions=pos)
    params[key][idx] -= 2 * eps
    lm, _ = loss_and_grads(params, x, y, cfg, positions=pos)
    assert abs((lp - lm) / (2 * eps) - g[key][idx]) < 1e-7


def test_forward_returns_the_loss_of_loss_and_grads_when_given_targets():
    rng = np.random.default_rng(4)
    for scheme in SCHEMES:
        cfg = ModelConfig(scheme=scheme, max_len=16)
        p = init_params(cfg, 1)
        x, y = rng.integers(0, 9, (3, 12)), rng.integers(0, 8, (3, 12))
        logits, none = forward(p, x, cfg)
        same_logits, loss = forward(p, x, cfg, targets=y)
        assert none is None and np.array_equal(logits, same_logits)
        assert loss == loss_and_grads(p, x, y, cfg)[0]
        # the loss is the mean negative log-probability of the targets, by a direct computation
        direct = np.log(np.exp(logits).sum(-1)) - np.take_along_axis(logits, y[..., None], -1)[..., 0]
        assert loss == pytest.approx(direct.mean(), rel=1e-12)


def test_log_softmax_is_stable_and_normalised():
    z = np.array([[1000.0, 0.0, -1000.0], [0.5, 0.5, 0.5]])
    out = log_softmax(z)
    np.testing.assert_allclose(np.exp(out).sum(-1), 1.0, rtol=1e-15)
    assert out[0, 0] == 0.0 and out[0, 1] == -1000.0 and np.isfinite(out).all()
    np.testing.assert_allclose(out[1], -np.log(3.0), rtol=1e-15)


def test_positional_schemes_really_use_positions():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 9, (3, 12))
    shuffled = rng.permutation(12).astype(float)
    for scheme in SCHEMES:
        cfg = ModelConfig(scheme=scheme, max_len=16)
        p = init_params(cfg, 0)
        a, _ = forward(p, x, cfg)
        b, _ = forward(p, x, cfg, positions=shuffled)
        if scheme == "nope":
            np.testing.assert_array_equal(a, b)
        else:
            assert np.max(np.abs(a - b)) > 1e-3, scheme


def test_rope_scores_are_relative_and_alibi_is_posencs_bias():
    cfg = ModelConfig(scheme="rope")
    p = init_params(cfg, 0)
    x = np.random.default_rng(3).integers(0, 9, (2, 10))
    a, _ = forward(p, x, cfg)
    b, _ = forward(p, x, cfg, positions=np.arange(10) + 1000.0)  # a common shift changes nothing
    np.testing.assert_allclose(a, b, atol=1e-9)
    cfg_a = ModelConfig(scheme="alibi")
    pa = init_params(cfg_a, 0)
    # the model's bias for positions 0..T-1 is posenc.alibi_bias (checked through the logits)
    import posenc.model as model

    T = 7
    rel = np.arange(T)[None, :] - np.arange(T)[:, None]
    mask = np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -np.inf)
    ours = model.alibi_slopes(4)[:, None, None] * rel[None] + mask
    np.testing.assert_array_equal(ours, alibi_bias(4, T))
    assert forward(pa, x[:, :T], cfg_a)[0].shape == (2, T, 8)
    assert apply_rope is model.apply_rope  # the model uses posenc's RoPE


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: ModelConfig(scheme="relative"), ValueError, "scheme"),
        (lambda: ModelConfig(vocab=1), ValueError, "vocab"),
        (lambda: ModelConfig(vocab=9.0), TypeError, "vocab"),
        (lambda: ModelConfig(d_model=0), ValueError, "d_model"),
        (lambda: ModelConfig(n_heads=0), ValueError, "n_heads"),
        (lambda: ModelConfig(d_ff=0), ValueError, "d_ff"),
        (lambda: ModelConfig(max_len=0), ValueError, "max_len"),
        (lambda: ModelConfig(rope_base=1.0), ValueError, "rope_base"),
        (lambda: ModelConfig(rope_base=float("nan")), ValueError, "rope_base"),
        (lambda: ModelConfig(rope_base="1e4"), TypeError, "rope_base"),
        (lambda: ModelConfig(d_model=30, n_heads=4), ValueError, "d_model"),
        (lambda: ModelConfig(d_model=12, n_heads=4), ValueError, "d_model"),  # odd head width
        (lambda: init_params("config", 0), TypeError, "config"),
        (lambda: forward(init_params(ModelConfig(), 0), [[0, 9]], ModelConfig()), ValueError, "tokens"),
        (lambda: forward(init_params(ModelConfig(), 0), [[0, 1]], ModelConfig(), positions=[0]), ValueError, "positions"),
        (lambda: forward(init_params(ModelConfig(scheme="learned", max_len=4), 0), [[0] * 5],
                         ModelConfig(scheme="learned", max_len=4)), ValueError, "positions"),
        (lambda: loss_and_grads(init_params(ModelConfig(), 0), [[0, 1]], [[0, 8]], ModelConfig()), ValueError, "targets"),
        (lambda: forward(init_params(ModelConfig(), 0), [[0, 1]], ModelConfig(), targets=[[0]]), ValueError, "targets"),
    ],
)
def test_bad_input_is_rejected(call, exc, name):
    with pytest.raises(exc, match=rf"^{name}: "):
        call()
