"""The version from posenc.__version__, and the PDF in the download menu: no Sphinx or theme option reads either.

- The version is written once, as ``posenc.__version__``: this extension sets Sphinx's
  ``version``/``release`` from it (the HTML's page titles and the PDF's title page) and
  the MyST substitution ``{{ book_version }}`` that the intro page shows.
- ``{{ pdf_download }}`` on the intro page is a ``{download}`` link to the PDF that
  ``make pdf`` writes (``_build/latex/book.pdf``) when that file exists, and a sentence
  saying how to build it when it does not (a download link to a missing file would be a
  build warning). The same PDF is added to every page's download menu, next to ``.md``
  and ``.ipynb``; the theme's own ``.pdf`` entry (the browser's print dialog, for one
  page) stays.

So an HTML build made after ``make pdf`` offers the PDF (the release workflow builds in
that order); one made without it does not, and says so.
"""

from __future__ import annotations

import pathlib

PDF = pathlib.Path("_build") / "latex" / "book.pdf"


def pdf_path(app) -> pathlib.Path:
    return pathlib.Path(app.srcdir) / PDF


def _version(app, config):
    import posenc

    config.version = config.release = posenc.__version__


def _substitutions(app):
    import posenc

    config = app.config
    subs = dict(getattr(config, "myst_substitutions", {}) or {})
    subs["book_version"] = posenc.__version__
    if app.builder.format == "html" and pdf_path(app).is_file():
        subs["pdf_download"] = f"{{download}}`Download the whole book as a PDF </{PDF.as_posix()}>`"
    else:
        subs["pdf_download"] = "The whole book is also made as a PDF by `make pdf`."
    config.myst_substitutions = subs


def _menu(app, pagename, templatename, context, doctree):
    if app.builder.format != "html":
        return
    target = pdf_path(app).resolve()
    dest = next(
        (d for f, (_, d) in app.env.dlfiles.items() if (pathlib.Path(app.srcdir) / f).resolve() == target), None
    )
    if dest is None:
        return
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            button["buttons"].append(
                {
                    "type": "link",
                    "url": f'{context["pathto"]("_downloads", 1)}/{dest}',
                    "text": "book .pdf",
                    "tooltip": "Download the whole book as a PDF",
                    "icon": "fas fa-book",
                    "label": "download-book-pdf-button",
                }
            )


def setup(app):
    app.connect("config-inited", _version)
    # before MyST reads its configuration (builder-inited, priority 500)
    app.connect("builder-inited", _substitutions, priority=100)
    # after sphinx-book-theme's header buttons (priority 501)
    app.connect("html-page-context", _menu, priority=502)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
