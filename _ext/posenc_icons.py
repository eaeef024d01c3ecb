"""Font Awesome's web fonts and stylesheet cut down to the icons the site shows (no theme option does this).

pydata-sphinx-theme 0.15.4 ships Font Awesome 6.5.2's web fonts whole: ``fa-solid-900.woff2``
(0.16 MB, about 1,400 icons) is fetched by every page, for the dozen icons of the header and
the sidebars (the menu, search, download, full screen, colour mode, contents, ...), and was
the largest single file of a chapter's first visit. This extension writes the site's WOFF2
files again with only the glyphs of the icons the site names (the solid font comes to about
2 kB), using fontTools' subsetter (fonttools and brotli pinned in requirements.txt).

Which icons: every ``fa-NAME`` class that the site's pages or its scripts (``_static``, where
the theme's JavaScript builds the colour-mode and other icons) spell out, looked up in the
theme's ``all.min.css`` (``.fa-NAME:before{content:"\\f002"}``); and every character of the
Private Use Area (where Font Awesome's icons live) that the site's other stylesheets name,
escaped or not (pydata-sphinx-theme draws the GitHub link's icon and its admonitions' icons
from CSS variables such as ``--pst-icon-github``). The fonts are cut from the
theme's own copies, not from the site's, so every build starts from the whole fonts. The
browser test (tests/test_site.py) checks the result independently: every icon the browser
draws on a page (an element whose ``::before`` uses a Font Awesome font) must have its glyph
in the font the site ships. An icon whose class a script assembles from pieces would escape
the scan here and be caught there.

The theme's stylesheet ``all.min.css`` (103 kB, render-blocking on every page) gives each of
Font Awesome's ~2,000 icon names its character with one rule, ``.fa-NAME:before{content:
"\\f002"}`` (aliases share a rule, comma-separated). The site's copy is written again
(:func:`cut_stylesheet`) with only the selectors of the names the site spells out (the same
scan of pages and scripts as above); a rule none of whose names is used is dropped, and every
other rule (the font faces, the ``fa-solid``/``fa-lg``/... classes, the variables) is kept as
it is. The browser test checks that every icon drawn on a page has its character from the
stylesheet (an icon whose rule was cut would draw nothing).

The TrueType files that ``all.min.css`` names after each WOFF2 (for browsers without WOFF2)
are left whole: no browser the site supports fetches them.
"""

from __future__ import annotations

import pathlib
import re

#: The WOFF2 files cut down (under the theme's ``vendor/fontawesome/<version>/webfonts``).
FONTS = ("fa-solid-900.woff2", "fa-regular-400.woff2", "fa-brands-400.woff2")
#: One rule of ``all.min.css`` that gives icons their character: selectors, then the code point.
RULE = re.compile(r'([^{}]+)\{content:"\\([0-9a-fA-F]{4,5})"\}')
ICON_CLASS = re.compile(r"fa-[a-z0-9]+(?:-[a-z0-9]+)*")
#: Any rule of ``all.min.css`` that gives its selectors a character, icon or not (``.fa-0:before{content:"\30"}``).
CONTENT_RULE = re.compile(r'([^{}]+)\{content:"\\([0-9a-fA-F]{1,6})"\}')
#: A selector of one icon name's character: ``.fa-NAME:before`` (or ``::before``).
ICON_SELECTOR = re.compile(r"\.(fa-[a-z0-9-]+)::?before")
#: The Private Use Area of Unicode, where Font Awesome's icons are.
PRIVATE_USE = range(0xE000, 0xF900)
CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{4,5})")


def code_points(css: str) -> dict[str, int]:
    """``fa-NAME`` -> the code point of its icon, from Font Awesome's stylesheet."""
    found = {}
    for selectors, point in RULE.findall(css):
        for selector in selectors.split(","):
            name = ICON_SELECTOR.fullmatch(selector.strip())
            if name:
                found[name.group(1)] = int(point, 16)
    return found


def stylesheet_code_points(css: str) -> set[int]:
    """The Private Use Area characters a stylesheet names, as ``\\f09b`` escapes or as themselves."""
    points = {int(h, 16) for h in CSS_ESCAPE.findall(css)} | {ord(c) for c in css}
    return {p for p in points if p in PRIVATE_USE}


def cut_stylesheet(css: str, names: set[str]) -> str:
    """Font Awesome's stylesheet without the selectors of icon names not in ``names``.

    A ``.fa-NAME:before`` selector of a ``content`` rule is kept if ``NAME`` is in ``names``; a
    rule left with no selector is dropped; every other rule and selector is kept as it is.
    Each icon's character gets an empty alternative text (``content:"\\f002"/""``): an icon is
    decorative, and a screen reader would read its Private Use Area character as part of the
    name of the link or button it is drawn in ("\\uf002 Search").
    """

    def keep(match: re.Match) -> str:
        selectors = match.group(1).split(",")
        kept = [s for s in selectors if not ICON_SELECTOR.fullmatch(s.strip())
                or ICON_SELECTOR.fullmatch(s.strip()).group(1) in names]
        if not kept:
            return ""
        alt = '/""' if all(ICON_SELECTOR.fullmatch(s.strip()) for s in kept) else ""
        return f'{",".join(kept)}{{content:"\\{match.group(2)}"{alt}}}'

    return CONTENT_RULE.sub(keep, css)


def names_used(outdir: pathlib.Path, vendor: pathlib.Path) -> set[str]:
    """Every ``fa-NAME`` class the site's pages and scripts spell out, Font Awesome's own files aside."""
    static = outdir / "_static"
    found: set[str] = set()
    for path in [*outdir.rglob("*.html"), *static.rglob("*.js")]:
        if vendor not in path.parents:
            found |= set(ICON_CLASS.findall(path.read_text(encoding="utf-8", errors="replace")))
    return found


def code_points_used(outdir: pathlib.Path, vendor: pathlib.Path, icons: dict[str, int], names: set[str]) -> set[int]:
    """The code points of every icon the site names, Font Awesome's own files (``vendor``) aside.

    ``names``, the ``fa-NAME`` classes of the pages and scripts (:func:`names_used`), through
    ``icons`` (:func:`code_points`); and the Private Use Area characters of the stylesheets
    (:func:`stylesheet_code_points`).
    """
    wanted = {icons[name] for name in names if name in icons}
    for css in (outdir / "_static").rglob("*.css"):
        if vendor not in css.parents:
            wanted |= stylesheet_code_points(css.read_text(encoding="utf-8", errors="replace"))
    return wanted


def subset_font(source: pathlib.Path, target: pathlib.Path, points: set[int],
                features: tuple[str, ...] = ("*",), hinting: bool = True) -> int:
    """Write ``source`` to ``target`` (WOFF2) with only the glyphs of ``points`` it has; returns how many.

    ``features``: the OpenType layout features kept (with the glyphs they reach), all by
    default; ``hinting``: keep the TrueType hinting instructions.
    """
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = list(features)
    options.hinting = hinting
    options.name_IDs = ["*"]  # the copyright and licence records stay with the font
    font = subset.load_font(str(source), options)
    keep = sorted(points & set(font.getBestCmap()))
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=keep or [0x20])  # a font with no icon of the site stays valid
    subsetter.subset(font)
    subset.save_font(font, str(target), options)
    return len(keep)


def theme_fontawesome() -> pathlib.Path:
    """The theme's ``vendor/fontawesome/<version>`` directory (one version)."""
    import pydata_sphinx_theme

    found = sorted((pathlib.Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" /
                    "static" / "vendor" / "fontawesome").glob("*/webfonts"))
    if len(found) != 1:
        raise FileNotFoundError(f"posenc_icons: expected one Font Awesome version in pydata-sphinx-theme, found {found}")
    return found[0].parent


def _subset(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = pathlib.Path(app.outdir)
    source = theme_fontawesome()
    vendor = outdir / "_static" / "vendor" / "fontawesome"
    target = vendor / source.name
    css = (source / "css" / "all.min.css").read_text(encoding="utf-8")
    names = names_used(outdir, vendor)
    wanted = code_points_used(outdir, vendor, code_points(css), names)
    for name in FONTS:
        subset_font(source / "webfonts" / name, target / "webfonts" / name, wanted)
    (target / "css" / "all.min.css").write_text(cut_stylesheet(css, names), encoding="utf-8")


def setup(app):
    # After every extension that writes or rewrites the pages (sphinx-codeautolink: 500).
    app.connect("build-finished", _subset, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
