"""posenc.experiment: deterministic, the same serial and parallel, and the command line works."""

import csv
import os

import numpy as np
import pytest

from posenc.experiment import ExperimentConfig, learning_rate, main, run_experiment, summarize, train, train_batch

TINY = ExperimentConfig(schemes=("nope", "rope", "alibi"), seeds=(0, 1), train_len=8, eval_multiples=(1, 2),
                        eval_tokens=64, steps=6, batch=2, d_model=8, n_heads=2, d_ff=8, workers=1)


def _same(a, b):
    """Rows equal, NaN equal to NaN (the 'beyond' losses at 1x)."""
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(x[k] == y[k] or (x[k] != x[k] and y[k] != y[k]) for k in x)
        for x, y in zip(a, b)
    )


def test_serial_and_parallel_give_identical_results():
    serial = run_experiment(TINY)
    parallel = run_experiment(ExperimentConfig(**{**TINY.__dict__, "workers": 2}))
    assert _same(serial, parallel)
    assert not _same(serial, run_experiment(ExperimentConfig(**{**TINY.__dict__, "seeds": (0, 2)})))
    schemes = {r["scheme"] for r in serial}
    assert {"nope", "rope", "rope+pi", "rope+ntk", "rope+yarn", "alibi", "rope (shuffled positions)"} <= schemes


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_stack_trains_each_model_exactly_as_it_trains_alone(dtype):
    config = ExperimentConfig(**{**TINY.__dict__, "schemes": ("nope", "sinusoidal", "learned", "rope", "alibi"),
                                 "dtype": dtype})
    for models in ([("rope", 1), ("nope", 0), ("alibi", 1), ("sinusoidal", 0)], [("learned", 0), ("learned", 1)]):
        trained, losses = train_batch(config, models)
        assert losses.shape == (len(models), config.steps)
        for (scheme, seed), params, loss in zip(models, trained, losses):
            alone, alone_loss = train(config, scheme, seed)
            assert np.array_equal(loss, alone_loss), (scheme, seed)
            assert all(np.array_equal(params[k], alone[k]) for k in alone), (scheme, seed)
            assert all(v.dtype == np.float64 for v in params.values())


@pytest.mark.parametrize(
    "models, exc",
    [
        ([], TypeError),
        ("rope", TypeError),
        ([("rope",)], TypeError),
        ([("xpos", 0)], ValueError),
        ([("rope", -1)], ValueError),
        ([("rope", 0.0)], TypeError),
        ([("rope", 0), ("learned", 0)], ValueError),
        ([("rope", 0), ("rope", 0)], ValueError),
    ],
)
def test_train_batch_rejects_bad_models(models, exc):
    with pytest.raises(exc, match=r"^models: "):
        train_batch(TINY, models)
    with pytest.raises(TypeError, match=r"^config: "):
        train_batch({"steps": 1}, [("rope", 0)])


def test_float32_training_stays_close_to_float64():
    config = ExperimentConfig(**{**TINY.__dict__, "steps": 20})
    _, l64 = train(config, "rope", 0)
    _, l32 = train(ExperimentConfig(**{**config.__dict__, "dtype": "float32"}), "rope", 0)
    assert not np.array_equal(l32, l64)  # the computation did run in float32
    np.testing.assert_allclose(l32, l64, rtol=1e-3)


@pytest.mark.parametrize("platform, workers", [("linux", 2), ("darwin", 2), ("emscripten", 1)])
def test_book_configuration_trains_in_one_process_under_pyodide(monkeypatch, platform, workers):
    """Pyodide (the chapters' Run controls in the browser) has no processes: workers=1 there."""
    monkeypatch.setattr("sys.platform", platform)
    config = ExperimentConfig.book()
    assert config.workers == workers
    assert (config.steps, config.eval_tokens) == (600, 4096)  # the rest is the book's configuration


def test_rows_and_summary_are_consistent():
    rows = run_experiment(TINY)
    summary = summarize(rows)
    for s in summary:
        sel = [r["loss_all"] for r in rows if r["scheme"] == s["scheme"] and r["eval_len"] == s["eval_len"]]
        assert s["n_seeds"] == len(sel) and s["loss_all_mean"] == pytest.approx(np.mean(sel))
    at_1x = [r for r in rows if r["multiple"] == 1]
    assert all(np.isnan(r["loss_beyond"]) for r in at_1x)
    # at 1x every RoPE variant is the unmodified model
    base = {r["seed"]: r["loss_all"] for r in at_1x if r["scheme"] == "rope"}
    for r in at_1x:
        if r["scheme"].startswith("rope+"):
            assert r["loss_all"] == base[r["seed"]]


def test_command_line_writes_the_table_and_the_figure(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(["--out", str(out), "--schemes", "nope,alibi", "--seeds", "1", "--train-len", "8",
                 "--multiples", "1,2", "--eval-tokens", "32", "--steps", "3", "--workers", "1"])
    assert code == 0
    assert {"results.csv", "summary.csv", "loss_vs_length.png"} <= set(os.listdir(out))
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["scheme"] for r in rows} >= {"nope", "alibi"}
    assert "[2/2] trained alibi seed 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        ({"schemes": ("xpos",)}, ValueError, "schemes"),
        ({"schemes": ()}, ValueError, "schemes"),
        ({"schemes": "rope"}, TypeError, "schemes"),
        ({"schemes": ("rope", "rope")}, ValueError, "schemes"),
        ({"seeds": ()}, ValueError, "seeds"),
        ({"seeds": (0, -1)}, ValueError, "seeds"),
        ({"seeds": (0, 1.5)}, TypeError, "seeds"),
        ({"seeds": (1, 1)}, ValueError, "seeds"),
        ({"seeds": 3}, TypeError, "seeds"),
        ({"train_len": 2}, ValueError, "train_len"),
        ({"train_len": 32.0}, TypeError, "train_len"),
        ({"eval_multiples": (2, 4)}, ValueError, "eval_multiples"),
        ({"eval_multiples": (1, 0)}, ValueError, "eval_multiples"),
        ({"eval_multiples": (1, -2)}, ValueError, "eval_multiples"),
        ({"eval_multiples": (1, 4, 2)}, ValueError, "eval_multiples"),
        ({"eval_multiples": (1, 2.0)}, TypeError, "eval_multiples"),
        ({"eval_tokens": 0}, ValueError, "eval_tokens"),
        ({"steps": 0}, ValueError, "steps"),
        ({"batch": 0}, ValueError, "batch"),
        ({"lr": float("nan")}, ValueError, "lr"),
        ({"lr": 0.0}, ValueError, "lr"),
        ({"lr": "0.01"}, TypeError, "lr"),
        ({"warmup": -1}, ValueError, "warmup"),
        ({"clip": float("inf")}, ValueError, "clip"),
        ({"clip": -1.0}, ValueError, "clip"),
        ({"n_symbols": 1}, ValueError, "n_symbols"),
        ({"concentration": 0.0}, ValueError, "concentration"),
        ({"chain_seed": -1}, ValueError, "chain_seed"),
        ({"d_model": 30}, ValueError, "d_model"),
        ({"n_heads": 0}, ValueError, "n_heads"),
        ({"d_ff": 0}, ValueError, "d_ff"),
        ({"rope_base": 1.0}, ValueError, "rope_base"),
        ({"rope_base": float("nan")}, ValueError, "rope_base"),
        ({"workers": 0}, ValueError, "workers"),
        ({"dtype": "float16"}, ValueError, "dtype"),
        ({"dtype": np.float32}, ValueError, "dtype"),
    ],
)
def test_bad_configuration_is_rejected(kwargs, exc, name):
    with pytest.raises(exc, match=rf"^{name}: "):
        ExperimentConfig(**kwargs)


def test_learning_rate_warms_up_linearly_then_decays_as_a_cosine_to_zero():
    config = ExperimentConfig(steps=110, warmup=10, lr=0.02)
    lrs = np.array([learning_rate(t, config) for t in range(1, 111)])
    np.testing.assert_allclose(lrs[:10], 0.02 * np.arange(1, 11) / 10, rtol=1e-15)
    assert lrs[9] == 0.02 and lrs[-1] == 0.0  # the peak at the end of warm-up, zero at the last step
    assert learning_rate(60, config) == pytest.approx(0.01, rel=1e-12)  # half-way through the decay
    assert np.all(np.diff(lrs[9:]) < 0)
    assert learning_rate(1, ExperimentConfig(steps=5, warmup=0, lr=0.1)) == pytest.approx(
        0.05 * (1 + np.cos(np.pi / 5)), rel=1e-12)
    with pytest.raises(ValueError, match=r"^step: "):
        learning_rate(0, config)
    with pytest.raises(TypeError, match=r"^step: "):
        learning_rate(1.0, config)


def test_lists_are_accepted_as_tuples():
    config = ExperimentConfig(schemes=["rope"], seeds=[0], eval_multiples=[1, 2])
    assert config.schemes == ("rope",) and config.seeds == (0,) and config.eval_multiples == (1, 2)


def _cli(tmp_path, *args):
    import subprocess
    import sys

    out = tmp_path / "res"
    proc = subprocess.run([sys.executable, "-m", "posenc.experiment", "--out", str(out), *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    return proc, out


@pytest.mark.parametrize(
    "args, option",
    [
        (["--multiples", "1,0"], "--multiples"),
        (["--multiples", "1,-2"], "--multiples"),
        (["--multiples", "2,4"], "--multiples"),
        (["--multiples", "1,4,2"], "--multiples"),
        (["--multiples", "1,two"], "--multiples"),
        (["--schemes", ","], "--schemes"),
        (["--schemes", "rope,"], "--schemes"),
        (["--schemes", "xpos"], "--schemes"),
        (["--schemes", "rope,rope"], "--schemes"),
        (["--seeds", "0"], "--seeds"),
        (["--seeds", "x"], "--seeds"),
        (["--train-len", "2"], "--train-len"),
        (["--train-len", "3.5"], "--train-len"),
        (["--eval-tokens", "-5"], "--eval-tokens"),
        (["--steps", "0"], "--steps"),
        (["--workers", "0"], "--workers"),
        (["--dtype", "float16"], "--dtype"),
        (["--bogus"], "--bogus"),
    ],
)
def test_command_line_rejects_bad_input_in_one_line_and_writes_nothing(tmp_path, args, option):
    proc, out = _cli(tmp_path, *args)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("python -m posenc.experiment: error: ") and option in lines[0]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not out.exists() and os.listdir(tmp_path) == []


def test_command_line_rejects_an_output_path_that_is_a_file(tmp_path):
    (tmp_path / "res").write_text("not a directory")
    proc, _ = _cli(tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "--out" in proc.stderr
    assert (tmp_path / "res").read_text() == "not a directory"


def test_command_line_without_matplotlib_skips_the_figure(tmp_path):
    import subprocess
    import sys

    # A module finder that refuses matplotlib, as on an installation without it.
    blocker = tmp_path / "block" / "sitecustomize.py"
    blocker.parent.mkdir()
    blocker.write_text(
        "import sys\n"
        "class _NoMatplotlib:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'matplotlib' or name.startswith('matplotlib.'):\n"
        "            raise ImportError('no matplotlib here')\n"
        "sys.meta_path.insert(0, _NoMatplotlib())\n"
    )
    out = tmp_path / "res"
    env = {**os.environ, "PYTHONPATH": str(blocker.parent)}
    proc = subprocess.run(
        [sys.executable, "-m", "posenc.experiment", "--out", str(out), "--schemes", "nope", "--seeds", "1",
         "--train-len", "8", "--multiples", "1,2", "--eval-tokens", "32", "--steps", "2", "--workers", "1"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "matplotlib is not installed" in proc.stderr
    assert sorted(os.listdir(out)) == ["results.csv", "summary.csv"]


def test_command_line_help_shows_every_default():
    import subprocess
    import sys

    text = subprocess.run([sys.executable, "-m", "posenc.experiment", "--help"], capture_output=True, text=True,
                          check=True).stdout
    import re

    entries = re.split(r"\n  (?=-)", text.split("options:", 1)[1])  # one entry per option
    for option in ("--schemes", "--seeds", "--train-len", "--multiples", "--eval-tokens", "--steps", "--workers",
                   "--dtype"):
        (entry,) = [e for e in entries if e.startswith(option + " ")]
        assert "(default:" in " ".join(entry.split()), option
    assert "matplotlib" in text


def test_run_experiment_rejects_other_types():
    with pytest.raises(TypeError, match="config"):
        run_experiment({"steps": 1})


def test_command_line_help_runs_cleanly():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "posenc.experiment", "--help"], capture_output=True, text=True,
                         check=True)
    assert "usage: python -m posenc.experiment" in out.stdout
    assert out.stderr == ""  # no RuntimeWarning about a module imported before it ran


def test_loss_within_the_trained_window():
    rows = run_experiment(TINY)
    for r in rows:
        if r["multiple"] == 1:
            assert r["loss_within"] == pytest.approx(r["loss_all"], rel=1e-12)
        else:  # the whole-sequence loss is a weighted mean of the two parts
            lo, hi = sorted((r["loss_within"], r["loss_beyond"]))
            assert lo - 1e-12 <= r["loss_all"] <= hi + 1e-12
    summary = summarize(rows)
    s = summary[0]
    sel = [r["loss_within"] for r in rows if r["scheme"] == s["scheme"] and r["eval_len"] == s["eval_len"]]
    assert s["loss_within_mean"] == pytest.approx(np.mean(sel))
