"""Drop the theme's Font Awesome font preloads, console errors from ``file://``: no theme option removes them.

pydata-sphinx-theme 0.15.4 (under sphinx-book-theme 1.1.4) writes into every page ``<link
rel="preload" as="font" crossorigin ...>`` for Font Awesome's three web fonts, from a macro
(``head_pre_icons`` in its ``webpack-macros.html``) that no theme option turns off and that
only a copy of the theme's ``css`` block in a template override could leave out. A preload
with ``crossorigin`` is a CORS request, which a page opened from disk (``file://``, no
origin) cannot make: Chrome logs two console errors per font on every page. The icons do
not need these fonts (the theme draws them as SVG with Font Awesome's script), and a
preload is only a hint, so after the build these three tags are removed from the pages;
nothing else is touched.

(The theme's colour mode on a first visit, which Jupyter Book leaves empty, is set in
``_config.yml`` with the theme's documented ``html_context: default_mode``.)
"""

from __future__ import annotations

import pathlib
import re

#: Exactly the theme's preload tags for Font Awesome's web fonts (one per line in the page).
FONT_PRELOAD = re.compile(
    r'^[ \t]*<link rel="preload" as="font" type="font/woff2" crossorigin '
    r'href="(?:[^"]*/)?_static/vendor/fontawesome/[0-9.]+/webfonts/fa-[a-z0-9-]+\.woff2" />[ \t]*\n',
    re.M,
)


def drop_font_preloads(html: str) -> str:
    return FONT_PRELOAD.sub("", html)


def _drop_font_preloads(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = pathlib.Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in ("_static", "_sources"):
            continue  # the theme's own template files, not pages
        text = page.read_text(encoding="utf-8")
        new = drop_font_preloads(text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    # Before sphinx-codeautolink (priority 500) rewrites the chapters through BeautifulSoup,
    # which writes these tags in another form (``crossorigin=""``, ``/>``).
    app.connect("build-finished", _drop_font_preloads, priority=400)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
