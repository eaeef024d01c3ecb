"""posenc.model: every gradient against central finite differences, for every scheme."""

import numpy as np
import pytest

from helpers import finite_difference_gradient

from posenc import alibi_bias, apply_rope
from posenc.model import (
    SCHEMES,
    ModelConfig,
    batch_forward,
    batch_loss_and_grads,
    forward,
    init_params,
    log_softmax,
    loss_and_grads,
    position_terms,
    stack_params,
    unstack_params,
)


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


def _tiny_stack(schemes, dtype="float64"):
    configs = tuple(ModelConfig(vocab=5, d_model=8, n_heads=2, d_ff=6, scheme=s, max_len=10) for s in schemes)
    params = stack_params([init_params(c, i) for i, c in enumerate(configs)])
    return configs, {k: v.astype(dtype) for k, v in params.items()}


@pytest.mark.parametrize("schemes", [("nope", "sinusoidal", "rope", "alibi"), ("learned", "learned")])
def test_every_batched_gradient_matches_finite_differences(schemes):
    """A stack of models: the gradient of the sum of their losses is each model's own gradient."""
    rng = np.random.default_rng(5)
    configs, params = _tiny_stack(schemes)
    x = rng.integers(0, 5, (len(configs), 2, 6))
    y = rng.integers(0, 4, (len(configs), 2, 6))
    _, grads = batch_loss_and_grads(params, x, y, configs)
    assert set(grads) == set(params)
    for key in params:
        # every model, every parameter array; its first 3 entries along the last axis (a view,
        # perturbed in place), to keep the test short
        part = params[key][..., :3]
        num = finite_difference_gradient(lambda: float(batch_loss_and_grads(params, x, y, configs)[0].sum()), part)
        ref = grads[key][..., :3]
        scale = max(np.max(np.abs(num)), np.max(np.abs(ref)), 1e-12)
        assert np.max(np.abs(num - ref)) / scale < 1e-6, key


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_stack_gives_each_model_its_own_result_bit_for_bit(dtype):
    schemes = ("rope", "nope", "alibi", "sinusoidal", "rope")
    configs, params = _tiny_stack(schemes, dtype)
    rng = np.random.default_rng(6)
    x = rng.integers(0, 5, (len(configs), 3, 7))
    y = rng.integers(0, 4, (len(configs), 3, 7))
    losses, grads = batch_loss_and_grads(params, x, y, configs)
    logits, same_losses = batch_forward(params, x, configs, targets=y)
    assert np.array_equal(losses, same_losses) and losses.dtype == np.dtype(dtype)
    for m, (c, p) in enumerate(zip(configs, unstack_params(params))):
        loss, g = loss_and_grads(p, x[m], y[m], c)
        assert loss == losses[m], c.scheme
        assert all(np.array_equal(g[k], grads[k][m]) for k in g), c.scheme
        assert np.array_equal(forward(p, x[m], c)[0], logits[m])
        assert all(g[k].dtype == np.dtype(dtype) for k in g)


def test_float32_gradients_agree_with_float64():
    configs, p64 = _tiny_stack(("nope", "sinusoidal", "rope", "alibi"))
    p32 = {k: v.astype(np.float32) for k, v in p64.items()}
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 5, (4, 2, 6)), rng.integers(0, 4, (4, 2, 6))
    l64, g64 = batch_loss_and_grads(p64, x, y, configs)
    l32, g32 = batch_loss_and_grads(p32, x, y, configs)
    np.testing.assert_allclose(l32, l64, rtol=1e-5)
    for k in g64:
        assert np.max(np.abs(g32[k] - g64[k])) <= 1e-4 * max(np.max(np.abs(g64[k])), 1e-3), k


def test_position_terms_are_neutral_for_schemes_that_do_not_use_them():
    configs = tuple(ModelConfig(scheme=s) for s in ("nope", "sinusoidal", "rope", "alibi"))
    terms = position_terms(configs, np.arange(6.0))
    assert terms.encoding.shape == (4, 1, 6, 32) and terms.rope.shape == (4, 1, 1, 6, 4)
    assert np.all(terms.encoding[[0, 2, 3]] == 0) and np.any(terms.encoding[1] != 0)
    assert np.all(terms.rope[[0, 1, 3]] == 1) and np.any(terms.rope[2] != 1)
    np.testing.assert_array_equal(terms.bias[0, 0], terms.bias[1, 0])
    np.testing.assert_array_equal(terms.bias[3, 0], alibi_bias(4, 6))
    only_nope = position_terms(configs[:1], np.arange(6.0))
    assert only_nope.encoding is None and only_nope.rope is None and only_nope.learned_rows is None


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: position_terms(ModelConfig(), np.arange(3.0)), TypeError, "configs"),
        (lambda: position_terms([ModelConfig(), ModelConfig(scheme="learned")], np.arange(3.0)), ValueError, "configs"),
        (lambda: position_terms([ModelConfig(), ModelConfig(d_ff=8)], np.arange(3.0)), ValueError, "configs"),
        (lambda: position_terms([ModelConfig()], np.arange(3.0), dtype="float16"), ValueError, "dtype"),
        (lambda: position_terms([ModelConfig()], np.zeros((2, 3))), ValueError, "positions"),
        (lambda: position_terms([ModelConfig()], np.arange(3.0), attention_factor=0.0), ValueError, "attention_factor"),
        (lambda: stack_params({"E": np.zeros(2)}), TypeError, "params_list"),
        (lambda: stack_params([{"E": np.zeros(2)}, {"E": np.zeros(3)}]), ValueError, "params_list"),
        (lambda: stack_params([{"E": np.zeros(2)}, {"U": np.zeros(2)}]), ValueError, "params_list"),
        (lambda: batch_forward(stack_params([init_params(ModelConfig(), 0)]), [[0, 1]], [ModelConfig()]),
         ValueError, "tokens"),
        (lambda: batch_forward(stack_params([init_params(ModelConfig(), 0)]), [[[0, 1]]], [ModelConfig()],
                               terms=position_terms([ModelConfig()], np.arange(3.0))), ValueError, "terms"),
        (lambda: batch_forward(stack_params([init_params(ModelConfig(), 0)]), [[[0, 1]]], [ModelConfig()],
                               terms=position_terms([ModelConfig()], np.arange(2.0)), positions=[0, 1]),
         ValueError, "terms"),
        (lambda: batch_forward(stack_params([init_params(ModelConfig(), 0)]), [[[0, 1]]], [ModelConfig()],
                               terms=(0, 1)), TypeError, "terms"),
        (lambda: batch_loss_and_grads(stack_params([init_params(ModelConfig(), 0)]), [[[0, 1]]], [[[0, 8]]],
                                      [ModelConfig()]), ValueError, "targets"),
    ],
)
def test_bad_batched_input_is_rejected(call, exc, name):
    with pytest.raises(exc, match=rf"^{name}: "):
        call()
