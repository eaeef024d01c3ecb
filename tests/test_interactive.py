"""posenc.interactive: states computed in Python, chosen in the browser, output exact."""

import json

import numpy as np
import pytest
from helpers import raises_named

from posenc.interactive import DIGITS, InteractiveFigure, interactive_figure


def _states(n=4, points=5):
    x = np.arange(points)
    return [[{"x": x, "y": np.sin(x * (s + 1) / 3), "name": "curve"}, {"x": [s], "y": [1.0], "mode": "markers"}]
            for s in range(n)]


def test_one_state_visible_at_a_time_and_the_control_switches_exactly_that_state():
    fig = interactive_figure(_states(), name="fig-t", labels=list("abcd"), static=[{"x": [0, 1], "y": [0, 0]}])
    data = fig.figure["data"]
    assert len(data) == 4 * 2 + 1
    assert [t["visible"] for t in data] == [True, True] + [False] * 6 + [True]
    steps = fig.figure["layout"]["sliders"][0]["steps"]
    assert [s["label"] for s in steps] == list("abcd")
    for s, step in enumerate(steps):
        visible = step["args"][0]["visible"]
        assert visible == [k // 2 == s for k in range(8)] + [True]
        # the numbers shown in state s are the ones computed for state s
        shown = [data[k] for k in range(8) if visible[k]]
        assert np.allclose(shown[0]["y"], np.sin(np.arange(5) * (s + 1) / 3), rtol=10.0 ** (1 - DIGITS))
        assert shown[1]["x"] == [s]


def test_dropdown_control_and_initial_state():
    fig = interactive_figure(_states(3), name="fig-d", labels=["h1", "h2", "h3"], control="dropdown", initial=2)
    menu = fig.figure["layout"]["updatemenus"][0]
    assert menu["active"] == 2 and [b["label"] for b in menu["buttons"]] == ["h1", "h2", "h3"]
    assert [t["visible"] for t in fig.figure["data"]] == [False] * 4 + [True] * 2
    assert "sliders" not in fig.figure["layout"]


def test_output_is_deterministic_and_rounded():
    a = interactive_figure(_states(), name="fig-t", labels=list("abcd"))
    b = interactive_figure(_states(), name="fig-t", labels=list("abcd"))
    assert a.to_html() == b.to_html()
    # rounding to DIGITS significant digits removes the last-bit noise of a float
    noisy = [[{"x": [0, 1], "y": [0.1 + 0.2, 1 / 3 + 1e-15]}], [{"x": [0, 1], "y": [0.3, 1 / 3]}]]
    f = interactive_figure(noisy, name="fig-n", labels=["1", "2"])
    assert f.figure["data"][0]["y"] == f.figure["data"][1]["y"] == [0.3, 0.333333]


def test_html_holds_the_figure_json_and_cannot_break_out_of_its_script():
    fig = interactive_figure([[{"x": [0], "y": [1], "name": "</script><b>"}], [{"x": [0], "y": [2], "name": "x"}]],
                             name="fig-s", labels=["a", "b"])
    html = fig.to_html()
    assert html.count("</script>") == 2  # only the two closing tags of our own scripts
    payload = html.split('id="fig-s-json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(payload) == fig.figure
    bundle = fig._repr_mimebundle_()
    assert bundle["application/vnd.plotly.v1+json"] == fig.figure
    assert bundle["text/plain"] == "InteractiveFigure('fig-s', 2 states)"


def test_the_figure_is_valid_plotly():
    go = pytest.importorskip("plotly.graph_objects")
    fig = interactive_figure(_states(), name="fig-t", labels=list("abcd"), x_range=(0, 4), y_range=(-1, 1),
                             title="t", x_title="x", y_title="y")
    go.Figure(fig.figure)  # raises on any unknown property
    go.Figure(interactive_figure(_states(), name="fig-t", labels=list("abcd"), control="dropdown",
                                 control_label="head").figure)


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        ({"name": "Fig 1"}, ValueError, "name"),
        ({"name": "fig-a", "labels": ["a"]}, ValueError, "labels"),
        ({"name": "fig-a", "control": "knob"}, ValueError, "control"),
        ({"name": "fig-a", "initial": 9}, ValueError, "initial"),
        ({"name": "fig-a", "height": 10}, ValueError, "height"),
    ],
)
def test_bad_options_are_rejected_with_the_parameter_named(kwargs, exc, name):
    args = {"labels": list("abcd"), **kwargs}
    with raises_named(exc, name):
        interactive_figure(_states(), **args)


def test_bad_states_are_rejected():
    with raises_named(ValueError, "states", r".*expected at least 2"):
        interactive_figure(_states(1), name="fig-a", labels=["a"])
    with raises_named(ValueError, "states", r"states\[1\] has 1 traces"):
        interactive_figure([[{"x": [0]}, {"x": [1]}], [{"x": [0]}]], name="fig-a", labels=["a", "b"])
    with raises_named(ValueError, "states", r".*(not finite|NaN)"):
        interactive_figure([[{"y": [np.nan]}], [{"y": [0]}]], name="fig-a", labels=["a", "b"])
    with raises_named(TypeError, "states"):
        interactive_figure("ab", name="fig-a", labels=["a", "b"])
    with raises_named(TypeError, "states", r"states\[0\]\[0\]"):
        interactive_figure([[1], [2]], name="fig-a", labels=["a", "b"])


def test_returns_an_interactive_figure():
    fig = interactive_figure(_states(2), name="fig-a", labels=["a", "b"])
    assert isinstance(fig, InteractiveFigure) and fig.n_states == 2


def test_plot_id_differs_from_the_name_so_a_figure_label_can_carry_the_name():
    html = interactive_figure(_states(), name="fig-t", labels=list("abcd")).to_html()
    assert 'id="fig-t-plot"' in html and 'getElementById("fig-t-plot")' in html
    assert 'id="fig-t"' not in html


def test_dropdown_opens_upwards_and_static_heatmaps_get_no_line():
    fig = interactive_figure(_states(), name="fig-t", labels=list("abcd"), control="dropdown",
                             static=[{"type": "heatmap", "z": [[0, 1], [1, 0]]}])
    assert fig.figure["layout"]["updatemenus"][0]["direction"] == "up"
    assert "line" not in fig.figure["data"][-1]
    go = pytest.importorskip("plotly.graph_objects")
    go.Figure(fig.figure)


def test_static_traces_without_a_name_stay_out_of_the_legend():
    fig = interactive_figure(_states(), name="fig-t", labels=list("abcd"),
                             static=[{"x": [0, 1], "y": [0, 1]}, {"x": [0, 1], "y": [1, 0], "name": "ref"}])
    assert fig.figure["data"][-2]["showlegend"] is False
    assert fig.figure["data"][-1]["showlegend"] is True
