"""Let sphinx-codeautolink 0.19.0 read pages with sphinx-exercise's untitled sections: its own code crashes on them.

sphinx-codeautolink (pinned in requirements.txt) links posenc's names in the chapters' code
cells to their entries in api.md. While it reads a page it keeps a stack of section titles
(for the "examples" tables the book does not use): ``visit_title`` pushes a title and
``depart_section`` pops one. sphinx-exercise writes each exercise's and solution's body as a
``section`` with no title (``exercise-content``, ``solution-content``), so on the first
chapter with an exercise the pop finds the stack empty and the build stops with
``IndexError: pop from empty list``. No option of the extension avoids it (the stack is
kept whatever the configuration), and the sections are sphinx-exercise's markup, so this
extension makes ``depart_section`` pop only for a section that has a title, i.e. one whose
title was pushed; everything else is the library's own code.
``tests/test_site_config.py`` checks that the crash still happens without this (remove
the file when an upgrade fixes it) and not with it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx_codeautolink.extension.block import CodeBlockAnalyser

_depart_section = CodeBlockAnalyser.depart_section


def depart_section(self, node) -> None:
    if any(isinstance(child, nodes.title) for child in node.children):
        _depart_section(self, node)


def setup(app):
    app.setup_extension("sphinx_codeautolink")
    CodeBlockAnalyser.depart_section = depart_section
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
