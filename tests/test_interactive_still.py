"""An interactive figure carries a still PNG of the state it shows first (the PDF's image)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from posenc.interactive import interactive_figure

matplotlib = pytest.importorskip("matplotlib")


def _fig(initial=0, control="slider"):
    x = np.arange(10)
    states = [[{"x": x, "y": np.full(10, float(s)), "name": "level", "mode": "lines"}] for s in range(3)]
    return interactive_figure(states, name="fig-still", labels=["a", "b", "c"], alt="A level line.", control=control,
                              control_label="state ", y_range=(-0.5, 2.5), initial=initial)


def _pixels(png: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return imread(io.BytesIO(png), format="png")


def test_bundle_has_a_png_next_to_html_and_plotly():
    bundle = _fig()._repr_mimebundle_()
    assert {"text/html", "application/vnd.plotly.v1+json", "image/png", "text/plain"} <= set(bundle)
    assert bundle["image/png"].startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("control", ["slider", "dropdown"])
def test_the_still_draws_the_initial_state(control):
    # The curve is a horizontal line at y = initial: its row of blue pixels moves with it.
    rows = []
    for initial in range(3):
        img = _pixels(_fig(initial, control).to_png())
        blue = (img[..., 2] > 0.5) & (img[..., 0] < 0.2) & (img[..., 1] < 0.6)
        ys = np.nonzero(blue.any(axis=1))[0]
        assert ys.size, f"no curve drawn for initial={initial}"
        rows.append(ys.mean())
    assert rows[0] > rows[1] > rows[2], rows  # higher value, higher on the image (smaller row)


def test_the_still_is_deterministic():
    assert _fig(1).to_png() == _fig(1).to_png()


def test_the_note_names_the_state_shown():
    from posenc.interactive import _state_note

    assert _state_note(_fig(2).figure["layout"]) == "Shown: state c (the HTML version offers 3 states on a slider)"
    assert _state_note(_fig(1, "dropdown").figure["layout"]) == (
        "Shown: state b (the HTML version offers 3 states on a menu)"
    )


def test_the_still_leaves_the_kernel_alone_and_is_quiet():
    # Under the book's style (constrained layout on) drawing the still warns about nothing,
    # and it neither changes the backend nor leaves a pyplot figure behind: a chapter's
    # next plt figure must still be shown.
    import warnings

    import matplotlib.pyplot as plt

    from posenc.plotting import use_book_style

    use_book_style()
    backend, before = matplotlib.get_backend(), plt.get_fignums()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _fig(1)._repr_mimebundle_()
    assert matplotlib.get_backend() == backend and plt.get_fignums() == before
