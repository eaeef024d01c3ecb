"""The book's figure style: opaque white figures, pixel-doubled PNG in a notebook kernel."""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from posenc.plotting import OKABE_ITO, use_book_style  # noqa: E402


@pytest.fixture
def restore_rc():
    saved = matplotlib.rcParams.copy()
    yield
    matplotlib.rcParams.update(saved)


def test_figures_are_opaque_white(restore_rc):
    matplotlib.rcParams["figure.facecolor"] = (1, 1, 1, 0)  # as a transparent backend default would
    use_book_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    image = Image.open(buf).convert("RGBA")
    # A corner pixel lies outside the axes: it shows the figure background.
    assert image.getpixel((0, 0)) == (255, 255, 255, 255)
    assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"] == list(OKABE_ITO[:4])


def test_retina_png_in_a_kernel(restore_rc):
    """In IPython, a figure is sent at twice its pixel size, with its 1x size as metadata."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_cell("import matplotlib.pyplot as plt", silent=True)
        use_book_style()
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        data, metadata = shell.display_formatter.format(fig)
        plt.close(fig)
    finally:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("png")
        InteractiveShell.clear_instance()
    image = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
    width, height = metadata["image/png"]["width"], metadata["image/png"]["height"]
    # Pixel-doubled, up to the one pixel that rounding the tight bounding box may add.
    assert abs(image.size[0] - 2 * width) <= 1 and abs(image.size[1] - 2 * height) <= 1
    assert width > 400  # the 1x size at 110 dpi, not a thumbnail


def test_no_kernel_no_change_of_formats(restore_rc):
    """Outside IPython, use_book_style only sets rcParams (scripts and tests are unaffected)."""
    from IPython import get_ipython

    assert get_ipython() is None
    use_book_style()  # must not raise
