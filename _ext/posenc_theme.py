"""Small fixes to the theme, for a console free of errors, served or opened from disk.

pydata-sphinx-theme 0.15.4 (under sphinx-book-theme 1.1.4) reads the colour mode from
``localStorage`` and falls back to the template variable ``default_mode`` (set through
``html_context``; it is not a theme option), which Jupyter Book 1 leaves empty. On a reader's first visit the mode is then ``""`` and the theme logs
``Got invalid theme mode: . Resetting to auto.`` as a console error on every page.
Setting ``default_mode`` to ``"auto"`` (follow the reader's system setting, which is what
the theme falls back to anyway) removes the error and changes nothing else.

pydata-sphinx-theme also writes into every page ``<link rel="preload" as="font"
crossorigin ...>`` for Font Awesome's three web fonts. A preload with ``crossorigin`` is a
CORS request, which a page opened from disk (``file://``, no origin) cannot make: Chrome
logs two console errors per font on every page. The icons do not need these fonts (the
theme draws them as SVG with Font Awesome's script), and a preload is only a hint, so
after the build these three tags are removed from the pages; nothing else is touched.

The icons themselves: the theme loads Font Awesome twice over, its CSS with web fonts
(``all.min.css``, 0.1 MB) and its JavaScript (``all.min.js``, 1.49 MB on every page, the
heaviest file most pages load), which replaces each ``<i class="fa-...">`` with an inline
SVG drawn from the 2,000 icons it carries. The CSS alone draws the same icons from the
web fonts, fetched only when a page shows an icon of that style (the header's icons are
all solid: ``fa-solid-900.woff2``, 0.16 MB). So the script tag is removed from every page
and the script from the site (a page that still named it would then log a failed load,
which the browser test reports); the stylesheet and fonts stay as the theme ships them.
"""

from __future__ import annotations

import pathlib
import re
import shutil

#: Exactly the theme's preload tags for Font Awesome's web fonts (one per line in the page).
FONT_PRELOAD = re.compile(
    r'^[ \t]*<link rel="preload" as="font" type="font/woff2" crossorigin '
    r'href="(?:[^"]*/)?_static/vendor/fontawesome/[0-9.]+/webfonts/fa-[a-z0-9-]+\.woff2" />[ \t]*\n',
    re.M,
)


#: Exactly the theme's script tag for Font Awesome's JavaScript (one line in the page).
FA_SCRIPT = re.compile(
    r'^[ \t]*<script src="(?:[^"]*/)?_static/vendor/fontawesome/[0-9.]+/js/all\.min\.js(?:\?digest=[0-9a-f]+)?">'
    r"</script>[ \t]*\n",
    re.M,
)


def drop_font_preloads(html: str) -> str:
    return FONT_PRELOAD.sub("", html)


def drop_fontawesome_js(html: str) -> str:
    return FA_SCRIPT.sub("", html)


def _fix_pages(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = pathlib.Path(app.outdir)
    for page in outdir.rglob("*.html"):
        if page.relative_to(outdir).parts[0] in ("_static", "_sources"):
            continue  # the theme's own template files, not pages
        text = page.read_text(encoding="utf-8")
        new = drop_fontawesome_js(drop_font_preloads(text))
        if new != text:
            page.write_text(new, encoding="utf-8")
    for script_dir in (outdir / "_static" / "vendor" / "fontawesome").glob("*/js"):
        shutil.rmtree(script_dir)


def _theme_defaults(app, config):
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


def setup(app):
    app.connect("config-inited", _theme_defaults)
    app.connect("build-finished", _fix_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
