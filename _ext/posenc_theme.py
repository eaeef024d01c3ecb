"""Small fixes to the theme's defaults, for a console free of errors.

pydata-sphinx-theme 0.15.4 (under sphinx-book-theme 1.1.4) reads the colour mode from
``localStorage`` and falls back to the template variable ``default_mode`` (set through
``html_context``; it is not a theme option), which Jupyter Book 1 leaves empty. On a reader's first visit the mode is then ``""`` and the theme logs
``Got invalid theme mode: . Resetting to auto.`` as a console error on every page.
Setting ``default_mode`` to ``"auto"`` (follow the reader's system setting, which is what
the theme falls back to anyway) removes the error and changes nothing else.
"""

from __future__ import annotations


def _theme_defaults(app, config):
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


def setup(app):
    app.connect("config-inited", _theme_defaults)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
