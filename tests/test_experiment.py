"""posenc.experiment: deterministic, the same serial and parallel, and the command line works."""

import csv
import os

import numpy as np
import pytest

from posenc.experiment import ExperimentConfig, main, run_experiment, summarize

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
    "kwargs, name",
    [({"schemes": ("xpos",)}, "schemes"), ({"eval_multiples": (2, 4)}, "eval_multiples"), ({"seeds": ()}, "seeds"),
     ({"train_len": 2}, "train_len")],
)
def test_bad_configuration_is_rejected(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ExperimentConfig(**kwargs)


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
