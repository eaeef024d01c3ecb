"""The site's figure PNGs: a 256-colour palette (a third of their weight, the same picture), loaded lazily.

Matplotlib writes each figure as a 24-bit RGBA PNG (pixel-doubled: 220 dpi, see
``posenc.plotting.use_book_style``). A chart of a few line colours, text and a colour map
uses at most a few thousand distinct colours, almost all of them the anti-aliased edges
between two colours; stored as an adaptive 256-colour palette (Pillow's maximum-coverage
quantizer, no dithering, so no noise is added) the same picture takes about 40% of the bytes. On a chapter
with many figures that is half a megabyte of the reader's first visit (the browser test's
budget is 3 MB per page, tests/test_site.py).

At the end of an HTML build, each PNG in the site's ``_images`` is rewritten in palette form
only if it is opaque (a transparent PNG is left as it is), the palette form is smaller, and
it is faithful: every colour that covers :data:`AREA` pixels or more (a line, a patch of a
heat map, a step of a colour bar: not an isolated anti-aliased edge pixel) moves by at most
:data:`MAX_ERROR` on each channel (of 255), and the mean change per channel over the image
stays below :data:`MAX_MEAN_ERROR`. A picture the palette cannot hold (a photograph, a
smooth gradient over a large area) keeps its 24-bit form. The notebooks offered for download and
the PDF keep Matplotlib's PNGs; the result is deterministic (same input, same bytes).

Every content image of the HTML pages (an ``<img>`` Sphinx writes for an image node: the
figures) is written with ``loading="lazy"`` and ``decoding="async"`` (:func:`lazy_img`): a
chapter's figures are far below its first screen, and were fetched before the first paint
(175 kB on chapter 4). So that nothing moves when one arrives, each also carries ``width``
and ``height`` attributes, its size as displayed: the ``width``/``height`` that
MyST-NB gives the image node (half the pixel-doubled PNG's size; Docutils writes them only as
an inline ``style``), or else the image file's own size in pixels. The browser reserves the
box from them (with ``custom.css``'s ``max-width: 100%; height: auto``, at the same aspect
ratio on a narrow screen). The theme writes no logo or other image in the first screen; the
browser test checks every content image for these attributes.
"""

from __future__ import annotations

import io
import pathlib
import re

#: A colour covering this many pixels or more ...
AREA = 16
#: ... moves by at most this much on each channel (0-255).
MAX_ERROR = 12
#: The largest mean change per channel and pixel (0-255) allowed over the image.
MAX_MEAN_ERROR = 0.5


def palette_png(data: bytes) -> bytes | None:
    """``data`` (a PNG) as a 256-colour palette PNG, or None when that is not smaller or not faithful."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.load()
        if image.mode == "P":
            return None  # already a palette image
        if "A" in image.getbands() and image.getchannel("A").getextrema() != (255, 255):
            return None  # transparent somewhere: left as it is
        rgb = image.convert("RGB")
    quantized = rgb.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    before = np.asarray(rgb, dtype=np.int32)
    diff = np.abs(before - np.asarray(quantized.convert("RGB"), dtype=np.int32))
    if diff.mean() > MAX_MEAN_ERROR:
        return None
    # Without dithering every pixel of one colour gets the same palette entry, so the error is
    # per colour: the colours moved by more than MAX_ERROR must each cover fewer than AREA pixels.
    colour = (before[..., 0] << 16 | before[..., 1] << 8 | before[..., 2]).ravel()
    moved = np.unique(colour[diff.max(axis=2).ravel() > MAX_ERROR])
    if moved.size:
        _, area = np.unique(colour[np.isin(colour, moved, kind="table")], return_counts=True)
        if area.max() >= AREA:
            return None
    out = io.BytesIO()
    quantized.save(out, format="PNG", compress_level=9)
    return out.getvalue() if out.tell() < len(data) else None


def _pixels(length) -> int | None:
    """``"716px"`` or ``"716"`` (a Docutils length) as 716; None for another unit (``50%``, ``3em``)."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(px)?\s*", str(length or ""))
    return round(float(match.group(1))) if match else None


def lazy_img(tag: str, width: int | None, height: int | None) -> str:
    """An ``<img ...>`` tag with ``loading="lazy"``, ``decoding="async"`` and, when known, its size.

    Attributes the tag already has are not written twice.
    """
    if not tag.lstrip().startswith("<img "):
        raise ValueError(f"lazy_img: tag={tag[:40]!r}, expected an <img ...> tag")
    extra = {"loading": "lazy", "decoding": "async"}
    if width and height:
        extra.update(width=str(width), height=str(height))
    attrs = "".join(f' {k}="{v}"' for k, v in extra.items() if not re.search(rf"\s{k}=", tag))
    return tag.replace("<img ", f"<img{attrs} ", 1)


def display_size(translator, node) -> tuple[int | None, int | None]:
    """The image's size as displayed, in CSS pixels: the node's width and height, else the file's."""
    width, height = _pixels(node.get("width")), _pixels(node.get("height"))
    if width and height:
        return width, height
    import imagesize

    uri = node.get("uri", "")
    path = pathlib.Path(translator.builder.srcdir) / uri
    if "://" in uri or not path.is_file():
        return None, None
    size = imagesize.get(str(path))
    return size if size[0] > 0 and size[1] > 0 else (None, None)


def visit_image(self, node):
    """The translator's own ``<img>``, with :func:`lazy_img`'s attributes added."""
    start = len(self.body)
    type(self).visit_image(self, node)
    for i in range(start, len(self.body)):
        if self.body[i].lstrip().startswith("<img "):
            self.body[i] = lazy_img(self.body[i], *display_size(self, node))


def depart_image(self, node):
    type(self).depart_image(self, node)


def _shrink_images(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted((pathlib.Path(app.outdir) / "_images").glob("*.png")):
        smaller = palette_png(path.read_bytes())
        if smaller is not None:
            path.write_bytes(smaller)


def setup(app):
    from docutils import nodes

    app.add_node(nodes.image, override=True, html=(visit_image, depart_image))
    app.connect("build-finished", _shrink_images)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
