"""posenc.book: glued values are rounded to what the text shows, and bad input is refused."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from helpers import raises_named

from posenc.book import glue, rounded


@pytest.mark.parametrize(
    "value, kwargs, expected",
    [
        (3.6108841891612475, {"decimals": 3}, 3.611),
        (np.float64(0.21283569503792046), {"decimals": 4}, 0.2128),
        (np.float32(2.5e-07), {"sig": 2}, 2.5e-07),
        (2.449e-07, {"sig": 2}, 2.4e-07),
        (47117.3, {"decimals": 0}, 47117),
        (np.int64(7), {}, 7),
        (True, {}, True),
        ("ALiBi", {}, "ALiBi"),
    ],
)
def test_rounded(value, kwargs, expected):
    out = rounded(value, **kwargs)
    assert out == expected and type(out) is type(expected)


def test_rounded_values_do_not_depend_on_the_last_bits():
    """Two floats one ulp apart (what two BLAS kernels give) glue to the same text."""
    x = 3.6108841891612475
    for neighbour in (np.nextafter(x, 0), np.nextafter(x, 10)):
        assert repr(rounded(neighbour, decimals=4)) == repr(rounded(x, decimals=4)) == "3.6109"
        assert repr(rounded(neighbour, sig=3)) == "3.61"


@pytest.mark.parametrize(
    "value, kwargs, error, name",
    [
        (0.5, {}, TypeError, "value"),
        (0.5, {"decimals": 2, "sig": 2}, TypeError, "decimals"),
        (0.5, {"decimals": -1}, ValueError, "decimals"),
        (0.5, {"decimals": 1.5}, TypeError, "decimals"),
        (0.5, {"sig": 0}, ValueError, "sig"),
        (0.5, {"sig": True}, TypeError, "sig"),
        (math.nan, {"decimals": 2}, ValueError, "value"),
        (np.arange(3.0), {"decimals": 2}, TypeError, "value"),
        (1 + 2j, {"decimals": 2}, TypeError, "value"),
    ],
)
def test_rounded_rejects_bad_input(value, kwargs, error, name):
    with raises_named(error, name):
        rounded(value, **kwargs)


@pytest.mark.parametrize("name", ["", None, 3])
def test_glue_rejects_a_bad_name(name):
    with raises_named(TypeError, "name"):
        glue(name, 1)


def test_glue_records_the_rounded_value_and_returns_none(monkeypatch):
    """The value recorded is the rounded one; nothing is returned, so a cell ending on glue shows nothing."""
    import myst_nb

    recorded = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: recorded.update({name: (value, display)}))
    assert glue("x", 0.123456, decimals=2) is None
    assert recorded == {"x": (0.12, False)}


def test_glue_runs_without_myst_nb():
    """A downloaded chapter runs where MyST-NB is not installed: glue records nothing."""
    code = (
        "import sys; sys.modules['myst_nb'] = None\n"
        "from posenc.book import glue\n"
        "print(glue('x', 2.0 / 3.0, decimals=3), sys.modules['myst_nb'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None None"


def test_show_source_shows_the_installed_code_without_its_docstring():
    import inspect

    from posenc.book import show_source
    from posenc.rope import apply_rope_complex

    shown = show_source(apply_rope_complex)
    full = inspect.getsource(apply_rope_complex)
    assert repr(shown).startswith("def apply_rope_complex(")
    assert apply_rope_complex.__doc__.strip().splitlines()[0] not in repr(shown)
    assert "    ...\n" in repr(shown)
    body = full[full.index('"""', full.index('"""') + 3) + 3:].strip("\n")
    assert repr(shown).endswith(body.rstrip())
    assert shown._repr_markdown_() == f"```python\n{repr(shown)}\n```"
    kept = show_source(apply_rope_complex, docstring=True)
    assert repr(kept) == full.rstrip("\n")


def test_show_source_dedents_a_method():
    from posenc.book import show_source
    from posenc.learned import LearnedPositionalEmbedding

    assert repr(show_source(LearnedPositionalEmbedding.forward)).startswith("def forward(self")


def test_show_source_rejects_what_has_no_source():
    from helpers import raises_named
    from posenc.book import show_source

    with raises_named(TypeError, "obj"):
        show_source(len)
    with raises_named(TypeError, "docstring"):
        show_source(show_source, docstring="no")
