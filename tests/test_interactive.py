"""posenc.interactive: states computed in Python, chosen in the browser, output exact."""

import json

import numpy as np
import pytest
from helpers import raises_named

from posenc.interactive import DIGITS, InteractiveFigure
from posenc.interactive import interactive_figure as _interactive_figure

ALT = "A test curve that changes with the state."


def interactive_figure(states, **kwargs):
    """posenc's interactive_figure with a fixed alt text, unless the test gives one."""
    return _interactive_figure(states, **{"alt": ALT, **kwargs})


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
    assert html.count("</script>") == 1  # only the closing tag of the figure's JSON
    payload = html.split('id="fig-s-json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(payload) == fig.page
    assert json.loads(fig.to_json()) == fig.figure
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
    assert 'id="fig-t-plot"' in html and 'data-posenc-figure="fig-t"' in html
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


# --------------------------------------------------------------------------- the page's native control


def _soup(html):
    bs4 = pytest.importorskip("bs4")
    return bs4.BeautifulSoup(html, "html.parser")


def test_slider_is_a_native_range_input_tied_to_its_visible_label():
    fig = interactive_figure(_states(), name="fig-t", labels=["p=0", "p=1", "p=2", "p=3"], control_label="position: ",
                             initial=1)
    soup = _soup(fig.to_html())
    control = soup.find(id="fig-t-control")
    assert control.name == "input" and control["type"] == "range"
    # one step per state: min..max by 1 covers exactly n_states values
    assert (int(control["min"]), int(control["max"]), int(control["step"])) == (0, fig.n_states - 1, 1)
    assert control["value"] == "1" and control["aria-valuetext"] == "p=1"
    assert "tabindex" not in control.attrs and "disabled" not in control.attrs
    labels = soup.find_all("label")
    assert len(labels) == 1 and labels[0]["for"] == "fig-t-control"
    assert labels[0].get_text() == "position"  # the prefix without its trailing colon
    assert not soup.find("select")


def test_dropdown_is_a_native_select_with_one_option_per_state():
    fig = interactive_figure(_states(), name="fig-d", labels=["h1", "h2", "h3", "h4"], control="dropdown",
                             control_label="head ", initial=2)
    soup = _soup(fig.to_html())
    control = soup.find(id="fig-d-control")
    assert control.name == "select"
    options = control.find_all("option")
    assert len(options) == fig.n_states == 4
    assert [o["value"] for o in options] == ["0", "1", "2", "3"]
    assert [o.get_text() for o in options] == ["h1", "h2", "h3", "h4"]
    assert [o.has_attr("selected") for o in options] == [False, False, True, False]
    assert soup.find("label", attrs={"for": "fig-d-control"}).get_text() == "head"
    assert not soup.find("input")


def test_plot_is_an_image_named_by_its_alt_text_and_a_live_status_names_the_state():
    alt = 'Bars "of" <height> & width'
    fig = interactive_figure(_states(), name="fig-t", labels=list("abcd"), control_label="k = ", alt=alt)
    soup = _soup(fig.to_html())
    plot = soup.find(id="fig-t-plot")
    assert plot["role"] == "img" and plot["aria-label"] == alt  # escaped in the HTML, intact once parsed
    assert "posenc-interactive" in plot["class"]
    status = soup.find(id="fig-t-status")
    assert status["aria-live"] == "polite"
    assert status.get_text() == "Showing k = a, state 1 of 4."
    assert fig.page["status"] == [f"Showing k = {x}, state {i + 1} of 4." for i, x in enumerate("abcd")]
    assert soup.find(id="fig-t-control")["aria-controls"] == "fig-t-plot"


@pytest.mark.parametrize("control", ["slider", "dropdown"])
def test_ids_are_unique_and_fixed_by_the_name(control):
    html = "".join(interactive_figure(_states(), name=n, labels=list("abcd"), control=control).to_html()
                   for n in ("fig-a", "fig-b"))
    ids = [tag["id"] for tag in _soup(html).find_all(id=True)]
    assert len(ids) == len(set(ids)) == 10
    assert {i for i in ids if i.startswith("fig-a")} == {f"fig-a-{k}" for k in ("figure", "plot", "control",
                                                                                    "status", "json")}
    for tag in _soup(html).find_all("label"):
        assert _soup(html).find(id=tag["for"]) is not None  # every label names a control on the page


@pytest.mark.parametrize("control, key", [("slider", "sliders"), ("dropdown", "updatemenus")])
def test_page_draws_no_plotly_control_and_switches_the_same_states(control, key):
    fig = interactive_figure(_states(), name="fig-t", labels=list("abcd"), control=control, control_label="s ")
    page = json.loads(fig.page_json())
    assert not {"sliders", "updatemenus"} & set(page["layout"])
    assert "annotations" not in page["layout"]  # the drop-down's label annotation belongs to Plotly's menu
    assert page["data"] == fig.figure["data"]
    # JupyterLab's figure keeps Plotly's own control, with the same masks the page switches
    plotly_control = fig.figure["layout"][key][0]
    steps = plotly_control.get("steps") or plotly_control.get("buttons")
    assert page["states"] == [step["args"][0] for step in steps]
    assert len(page["states"]) == len(page["status"]) == len(page["labels"]) == fig.n_states
    # no room below the page's plot is kept for a control it does not draw
    assert page["layout"]["margin"]["b"] < fig.figure["layout"]["margin"]["b"]


def test_html_holds_no_code_and_names_its_figure_for_the_books_script():
    """The figure's HTML carries data only; _ext/posenc-interactive.js finds it by its data- attributes
    (the browser tests of tests/test_site.py operate it)."""
    soup = _soup(interactive_figure(_states(), name="fig-t", labels=list("abcd"), initial=2).to_html())
    assert [script.get("type") for script in soup.find_all("script")] == ["application/json"]
    assert not any(name.startswith("on") for tag in soup.find_all(True) for name in tag.attrs)
    box = soup.find(id="fig-t-figure")
    assert (box["data-posenc-figure"], box["data-posenc-shown"]) == ("fig-t", "2")


def test_control_without_a_prefix_is_still_labelled():
    soup = _soup(interactive_figure(_states(), name="fig-t", labels=list("abcd")).to_html())
    assert soup.find("label", attrs={"for": "fig-t-control"}).get_text() == "state"


@pytest.mark.parametrize(
    "alt, exc, detail",
    [(None, TypeError, r"expected a string describing what the figure shows, got None"),
     (3, TypeError, r"expected a string .* got 3 of type int"),
     ("", ValueError, r"'' says nothing"),
     ("  . ", ValueError, r"'  \. ' says nothing")],
)
def test_alt_text_is_required_and_checked(alt, exc, detail):
    with raises_named(exc, "alt", detail):
        interactive_figure(_states(), name="fig-a", labels=list("abcd"), alt=alt)
    with pytest.raises(TypeError, match="alt"):
        _interactive_figure(_states(), name="fig-a", labels=list("abcd"))  # no default


def test_alt_text_is_stripped():
    fig = interactive_figure(_states(), name="fig-a", labels=list("abcd"), alt="  A curve.\n")
    assert fig.alt == "A curve."
