"""Offer each chapter's executed ``.ipynb``, its MyST resolved, in the download menu: no maintained tool gives it (measured).

Measured alternatives (issue 36; the book of 2026-11, six chapters):

- the executed notebook as MyST-NB writes it, for JupyterLab with jupyterlab-myst (pinned for
  ``make lab``): 314 ``{glue:text}`` roles show their key, most of the 237 cross-references
  (their targets are in other cells) and all 102 citations show labels with a warning mark,
  7 ``literalinclude`` directives show as directives, the 30 figure captions are not in the
  notebook at all; in any other notebook viewer (Notebook 7 without the extension, VS Code,
  Colab) all of that is raw MyST;
- sphinx-tojupyter 0.6.0 (a second Sphinx build with its ``jupyter`` builder, which executes
  every chapter again: 365 s here): glued values, numbers and citations resolved, but every
  code cell becomes a fenced Markdown block (0 code cells of chapter 4's 70, of chapter 6's
  55, even with ``jupyter_lang_synonyms = ["ipython3"]``), with no outputs and no figures;
  a notebook that cannot be run;
- this extension: the executed notebook's code cells and outputs unchanged, its Markdown
  written as the page reads, captions under their figures, a first cell that installs what
  it needs (``tests/test_local_notebooks.py`` checks each point and runs one).

sphinx-book-theme 1.1.4 lists a ``.ipynb`` entry in its download menu only when a launch
provider (Binder, JupyterHub, Colab or Thebe) is configured; the book has none (it runs
offline). This extension does the same two things the theme does then, for every page
that MyST-NB executed:

- it writes the executed notebook, outputs included, from ``_build/jupyter_execute/``
  to ``_build/html/_sources/`` (next to the page's ``.md`` source), and
- it sets ``ipynb_source`` in the page's context before the theme builds its download
  menu (the theme's handler runs at priority 501, this one at 500), so the menu offers
  ``.ipynb`` next to ``.md`` and ``.pdf``.

The copy is made for a reader, who opens it in Jupyter, not in Sphinx: its Markdown is
written as the book renders it (:func:`readable_notebook`). Glued values become the
text the page shows (MyST-NB's pasted values, taken from the page's doctree in order);
every cross-reference and citation becomes the text Sphinx resolves it to on
the page ("Theorem 2.1", "(2.3)", "Vaswani et al. (2017)"), by running the build's own
post-transforms on a copy of the page's doctree; ``(label)=`` targets become HTML
anchors; theorem-like directives, exercises and solutions get their numbered headings,
labelled equations their numbers (``\\tag``), ``literalinclude`` the included code, a
``table`` its Markdown table (``tabularcolumns``, for LaTeX, nothing), and each
figure's number and caption (kept by MyST-NB in the cell's metadata only) follow its cell. A
first code cell says what the notebook is and installs what it needs (:func:`requirement`).
A construct it cannot render stops the build, so no downloaded notebook ever shows raw MyST.

The repository's address comes from one setting, ``repository: url:`` in ``_config.yml``
(:func:`repository_url`); when it is empty, from GitHub Actions' own variables or the
clone's ``origin`` remote. With an address the header shows a repository button and the
install instructions (intro page, first cell of each notebook) use it, at the book's commit
when the remote has it; without one the intro says how to install from a clone and the
notebooks install from the clone the book was built from; no address is invented.
"""

from __future__ import annotations

import copy
import os
import pathlib
import re
import subprocess

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransformer

OUTPUT_FOLDER = "jupyter_execute"  # where MyST-NB writes executed notebooks (myst_nb.sphinx_ext)


# --------------------------------------------------------------------------- repository


def _https(remote: str) -> str:
    """``git@host:owner/name.git`` or ``https://host/owner/name.git`` as a browsable https URL."""
    remote = remote.strip()
    scp = re.match(r"^[\w.-]+@([\w.-]+):(.+)$", remote)
    if scp:
        remote = f"https://{scp.group(1)}/{scp.group(2)}"
    remote = re.sub(r"^ssh://[\w.-]+@", "https://", remote)
    if not remote.startswith("https://"):
        return ""
    return re.sub(r"\.git$", "", remote.rstrip("/"))


def repository_url(configured: str, srcdir, environ=os.environ) -> str:
    """The repository's browsable address, or ``""`` when none is known.

    In order: the ``repository: url:`` setting of ``_config.yml`` (``configured``); GitHub
    Actions' ``GITHUB_SERVER_URL``/``GITHUB_REPOSITORY``; the ``origin`` remote of the clone
    in ``srcdir`` (ssh forms turned into https). Nothing else: no address is guessed.
    """
    if configured:
        return configured.rstrip("/")
    server, repo = environ.get("GITHUB_SERVER_URL", ""), environ.get("GITHUB_REPOSITORY", "")
    if server and repo:
        return f"{server.rstrip('/')}/{repo}"
    try:
        remote = subprocess.run(
            ["git", "remote", "get-url", "origin"], cwd=srcdir, capture_output=True, text=True, check=False
        ).stdout
    except OSError:
        return ""
    return _https(remote) if remote.strip() else ""


def published_commit(srcdir, environ=os.environ) -> str:
    """The commit the book is built from, when the repository's remote has it; else ``""``.

    GitHub Actions' ``GITHUB_SHA`` (a pushed commit); otherwise the clone's ``HEAD`` if a
    remote-tracking branch contains it (as of the last fetch: nothing is asked of the network).
    """
    if environ.get("GITHUB_SHA"):
        return environ["GITHUB_SHA"]

    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=srcdir, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""

    head = git("rev-parse", "HEAD")
    return head if head and git("branch", "-r", "--contains", head) else ""


def requirement(url: str, commit: str, srcdir) -> str:
    """``posenc[book]`` as pip installs it from anywhere: the repository at the book's commit, or this clone.

    PyPI has no ``posenc`` (the release workflow publishes it there; until then its name must
    not be pointed at). With a repository address and a commit its remote has, the requirement
    is that commit of the repository; otherwise it is the folder of the clone the book was built
    from (a local build: its reader is on the same machine).
    """
    if url and commit:
        return f"posenc[book] @ git+{url}@{commit}"
    return f"posenc[book] @ {pathlib.Path(srcdir).resolve().as_uri()}"


def install_command(url: str, commit: str = "") -> str:
    """The intro page's command that installs ``posenc`` and what the chapters import."""
    if url:
        return f'pip install "posenc[book] @ git+{url}' + (f"@{commit}" if commit else "") + '"'
    return 'pip install ".[book]"'


def how_to_run(url: str, commit: str = "") -> str:
    """Markdown: how to get the chapters running, for the intro page (``{{ how_to_run }}``)."""
    if url:
        where = f"The book's source is at <{url}>."
        clone = f"git clone {url} posenc-book && cd posenc-book"
    else:
        where = (
            "This copy of the book was built without a recorded repository address: use the clone or "
            "archive of the book's source that you got it from (its top folder holds `Makefile` and `_config.yml`)."
        )
        clone = "cd posenc-book   # the folder of your clone or unpacked archive"
    return (
        f"{where}\n\n"
        "To run a downloaded notebook (`.ipynb`), install `posenc` with what the chapters import "
        "(Matplotlib, Plotly for the interactive figures in JupyterLab, a Jupyter kernel) into a fresh "
        "virtual environment with Python 3.11 or later"
        + (":" if url else ", from that folder:")
        + "\n\n```bash\n"
        f"{install_command(url, commit)}\n"
        "jupyter execute --inplace 02_sinusoidal.ipynb   # or open it in JupyterLab: pip install jupyterlab\n"
        "```\n\n"
        "To build the book or work on the chapters, with Python 3.11 and `make`:\n\n"
        "```bash\n"
        f"{clone}\n"
        "make book      # creates .venv, installs the pinned stack, executes and builds the HTML\n"
        "make lab       # JupyterLab on chapters/: double-click a chapter to open it as a notebook\n"
        "```\n"
    )


def _configure_repository(app, config):
    options = dict(config.html_theme_options or {})
    url = repository_url(options.get("repository_url", ""), app.srcdir)
    options["repository_url"] = url
    if url:
        options["use_repository_button"] = True
    config.html_theme_options = options
    config.posenc_repository_url = url
    commit = published_commit(app.srcdir) if url else ""
    config.posenc_requirement = requirement(url, commit, app.srcdir)
    subs = dict(config.myst_substitutions or {})
    subs.setdefault("how_to_run", how_to_run(url, commit))
    config.myst_substitutions = subs


# --------------------------------------------------------------------------- references


def _rendered(node: nodes.Node) -> str:
    """A resolved reference as Markdown text: code stays code, the rest is plain text."""
    text = node.astext()
    if next(iter(node.findall(nodes.literal)), None) is not None:
        return f"`{text}`"
    return text


def resolved_references(app, docname: str, extra=()) -> dict:
    """Every cross-reference of a page, resolved as the page shows it.

    Takes a fresh copy of the page's doctree (references still pending), puts each
    ``pending_xref`` in a marker node, adds the references in ``extra`` (``(domain,
    type, target)`` triples for numbered headings), and runs the build's post-transforms
    on it (the same that resolve the HTML page). Returns ``{(domain, type, target,
    explicit title or None): text}``.
    """
    env = app.env
    doctree = env.get_doctree(docname)
    extras = nodes.paragraph()
    for domain, typ, target in extra:
        pending = addnodes.pending_xref(
            "", nodes.inline(target, target), refdomain=domain, reftype=typ, reftarget=target,
            refexplicit=False, refwarn=True, refdoc=docname,
        )
        extras += pending
    doctree += extras
    markers = []
    for pending in list(doctree.findall(addnodes.pending_xref)):
        key = (
            pending.get("refdomain") or "",
            pending.get("reftype") or "",
            pending.get("reftarget") or "",
            pending.astext() if pending.get("refexplicit") else None,
        )
        marker = nodes.inline()
        pending.replace_self(marker)
        marker += pending
        markers.append((key, marker))
    backup = copy.copy(env.temp_data)
    try:
        env.temp_data["docname"] = docname
        transformer = SphinxTransformer(doctree)
        transformer.set_environment(env)
        transformer.add_transforms(app.registry.get_post_transforms())
        transformer.apply_transforms()
    finally:
        env.temp_data = backup
    return {key: _rendered(marker) for key, marker in markers}


# MyST role -> (Sphinx domain, reference type) of the pending_xref it creates.
ROLES = {
    "ref": ("std", "ref"), "numref": ("std", "numref"), "doc": ("std", "doc"), "term": ("std", "term"),
    "eq": ("math", "eq"), "prf:ref": ("prf", "ref"), "cite:p": ("cite", "p"), "cite:t": ("cite", "t"),
    "func": ("py", "func"), "py:func": ("py", "func"), "mod": ("py", "mod"), "py:mod": ("py", "mod"),
    "class": ("py", "class"), "py:class": ("py", "class"),
}
ROLE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<content>[^`]*)`")
EXPLICIT = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
LABEL = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$")
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z:-]+)\}\s*(?P<arg>.*)$")
PROOF_TYPES = {"theorem", "lemma", "proposition", "corollary", "definition", "remark", "example",
               "conjecture", "axiom", "criterion", "observation", "property", "assumption",
               "notation", "algorithm"}


class Renderer:
    """Writes one page's Markdown cells as the book renders them."""

    def __init__(self, app, docname: str, labels: dict):
        self.app, self.docname = app, docname
        self.refs = resolved_references(app, docname, extra=labels.values())
        self.labels = labels
        # MyST-NB pastes each {glue:text} as an inline node of class "pasted-text", in the
        # order of the roles (it drops the glue records from the executed notebook).
        doctree = app.env.get_doctree(docname)
        self.pasted = [n.astext() for n in doctree.findall(nodes.inline) if "pasted-text" in n["classes"]]
        self.n_pasted = 0

    def finish(self):
        if self.n_pasted != len(self.pasted):
            self.fail(f"{self.n_pasted} {{glue:text}} roles in the notebook, {len(self.pasted)} pasted on the page")

    def fail(self, message: str):
        raise ExtensionError(f"posenc_notebooks: {self.docname}: {message}")

    # inline ------------------------------------------------------------------------------
    def role(self, match: re.Match) -> str:
        role, content = match["role"], match["content"]
        if role == "glue:text":
            if self.n_pasted >= len(self.pasted):
                self.fail(f"more {{glue:text}} roles than pasted values on the page (at {match[0]!r})")
            self.n_pasted += 1
            return self.pasted[self.n_pasted - 1]
        if role == "math":
            return f"${content}$"
        if role not in ROLES:
            self.fail(f"cannot render the role {match[0]!r} for a notebook")
        domain, typ = ROLES[role]
        explicit = EXPLICIT.match(content)
        target, title = (explicit["target"], explicit["title"]) if explicit else (content, None)
        if role in ("func", "py:func", "mod", "py:mod", "class", "py:class"):
            target = target.lstrip("~.")
        candidates = [
            text for (d, t, tgt, ttl), text in self.refs.items()
            if d == domain and t == typ and tgt.lower() == target.lower()
            and (title is None or ttl is None or ttl == title)
        ]
        if not candidates:
            self.fail(f"the reference {match[0]!r} is not on the page as Sphinx resolved it")
        return candidates[0]

    def inline(self, text: str) -> str:
        return ROLE.sub(self.role, text)

    def numbered(self, label: str) -> str:
        return self.refs[self.labels[label] + (None,)]

    # blocks ------------------------------------------------------------------------------
    def directive(self, name: str, arg: str, options: dict, body: str) -> str:
        body = self.markdown(body).strip("\n")
        arg = self.inline(arg.strip())
        label = options.get("label", "")
        if name.startswith("prf:"):
            kind = name[4:]
            if kind == "proof":
                return f"*Proof.* {body}\n\n∎"
            if kind not in PROOF_TYPES:
                self.fail(f"unknown directive {name!r}")
            head = self.numbered(label) if label else kind.title()
            head += f" ({arg})" if arg else ""
            return "\n".join(["> " + line if line else ">" for line in f"**{head}.**\n\n{body}".split("\n")])
        if name == "math":
            tag = self.numbered(label).strip("()") if label else ""
            math = body if (r"\\" not in body or r"\begin" in body) else f"\\begin{{split}}\n{body}\n\\end{{split}}"
            anchor = f'<a id="{label}"></a>\n\n' if label else ""
            return f"{anchor}$$\n{math}" + (f"\n\\tag{{{tag}}}" if tag else "") + "\n$$"
        if name == "exercise":
            head = self.numbered(label) if label else "Exercise"
            head += f" ({arg})" if arg else ""
            anchor = f'<a id="{label}"></a>\n\n' if label else ""
            return f"{anchor}**{head}.** {body}"
        if name in ("solution", "solution-start"):
            exercise = arg.strip()
            if exercise not in self.labels:
                self.fail(f"{name} refers to an unknown exercise {exercise!r}")
            return f"**Solution to {self.numbered(exercise)}.**" + (f" {body}" if body else "")
        if name == "solution-end":
            return ""
        if name == "dropdown":
            summary = re.sub(r"`([^`]*)`", r"<code>\1</code>", arg)
            return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
        if name == "tabularcolumns":  # the columns of the next table in LaTeX only
            return ""
        if name == "table" and not arg:  # a Markdown table given options (a class) only
            return body
        if name == "literalinclude":
            from sphinx.directives.code import LiteralInclude, LiteralIncludeReader

            source = (pathlib.Path(self.app.srcdir) / self.docname).parent / arg
            # The option values as the directive converts them (dedent an int, flags None).
            spec = LiteralInclude.option_spec
            opts = {k: spec[k](v or None) for k, v in options.items()
                    if k not in ("language", "caption", "name", "class")}
            code, _ = LiteralIncludeReader(str(source.resolve()), opts, self.app.config).read()
            return f"```{options.get('language', 'python')}\n{code.rstrip()}\n```"
        self.fail(f"cannot render the directive {name!r} for a notebook")

    def markdown(self, text: str) -> str:
        lines, out, i = text.split("\n"), [], 0
        while i < len(lines):
            line = lines[i]
            label = LABEL.match(line)
            if label:
                # An HTML block runs to the next blank line: without one, a heading below is swallowed.
                out.extend([f'<a id="{label["label"]}"></a>', ""])
                i += 1
                continue
            fence = FENCE.match(line)
            if not fence:
                out.append(self.inline(line))
                i += 1
                continue
            mark, name, arg = fence["fence"], fence["name"], fence["arg"]
            i += 1
            options = {}
            while i < len(lines) and re.match(r"^:[\w-]+:", lines[i]):
                key, _, value = lines[i][1:].partition(":")
                options[key] = value.strip().strip('"')
                i += 1
            body = []
            while i < len(lines) and not re.match(rf"^{re.escape(mark[0])}{{{len(mark)}}}\s*$", lines[i]):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                self.fail(f"unclosed directive {name!r}")
            i += 1
            out.append(self.directive(name, arg, options, "\n".join(body)))
        return "\n".join(out)


def _labels(app, docname: str, nb) -> dict:
    """Labels of the page's numbered blocks -> the reference that gives their number."""
    labels = {}
    fence = None
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.split("\n"):
            match = FENCE.match(line)
            if match:
                fence = match["name"]
                if fence in ("solution", "solution-start"):
                    target = match["arg"].strip()
                    labels.setdefault(target, ("std", "numref", target))
                continue
            opt = re.match(r"^:label:\s*(\S+)", line)
            if opt and fence:
                label = opt.group(1)
                if fence.startswith("prf:"):
                    labels[label] = ("prf", "ref", label)
                elif fence == "math":
                    labels[label] = ("math", "eq", label)
                elif fence == "exercise":
                    labels[label] = ("std", "numref", label)
    return labels


def _figure(cell) -> dict:
    """A code cell's figure options (``mystnb: figure: {name, caption}``), or ``{}``."""
    return ((cell.metadata.get("mystnb") or {}).get("figure") or {}) if cell.cell_type == "code" else {}


def readable_notebook(app, docname: str, nb):
    """A copy of the executed notebook ``nb`` whose Markdown reads as the page does.

    A figure's number and caption, which the page prints under the figure and the notebook
    keeps only in the cell's metadata, follow its code cell as a Markdown cell.
    """
    nb = copy.deepcopy(nb)
    labels = _labels(app, docname, nb)
    labels.update({_figure(c)["name"]: ("std", "numref", _figure(c)["name"]) for c in nb.cells if _figure(c).get("name")})
    renderer = Renderer(app, docname, labels)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = renderer.markdown(cell.source)
        cells.append(cell)
        figure = _figure(cell)
        if figure.get("caption"):
            name = figure.get("name", "")
            head = f'<a id="{name}"></a>\n\n**{renderer.numbered(name)}.** ' if name else ""
            caption = nbformat.v4.new_markdown_cell(head + renderer.inline(" ".join(figure["caption"].split())))
            caption.metadata["tags"] = ["posenc-figure-caption"]
            cells.append(caption)
    renderer.finish()
    nb.cells = [_first_cell(app)] + cells
    for n, cell in enumerate(nb.cells):
        cell.id = f"cell-{n:03d}"  # the same on every build (new cells would get random ones)
    return nb


def _first_cell(app):
    """The notebook's first cell: what it is, and the command that installs what it needs."""
    import posenc

    title = app.config.html_title or app.config.project  # Jupyter Book sets html_title from `title:`
    cell = nbformat.v4.new_code_cell(
        f"# A chapter of the book \"{title}\" (posenc {posenc.__version__}), downloaded with its outputs.\n"
        "# To run it, run this cell first: it installs posenc at the book's version, with what the\n"
        "# chapter imports (Matplotlib, Plotly, a Jupyter kernel), into the environment of this kernel.\n"
        f'%pip install --quiet "{app.config.posenc_requirement}"'
    )
    cell.metadata["tags"] = ["posenc-download-note"]
    return cell


# --------------------------------------------------------------------------- download menu


def executed_notebook(app, pagename: str) -> pathlib.Path:
    return pathlib.Path(app.outdir).parent / OUTPUT_FOLDER / f"{pagename}.ipynb"


def _offer_notebook(app, pagename, templatename, context, doctree):
    if app.builder.format != "html" or doctree is None:
        return
    source = executed_notebook(app, pagename)
    if "kernelspec" not in app.env.metadata.get(pagename, {}) or not source.is_file():
        return
    target = pathlib.Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nb = readable_notebook(app, pagename, nbformat.read(source, as_version=4))
    nbformat.write(nb, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    app.add_config_value("posenc_repository_url", "", "html")
    app.add_config_value("posenc_requirement", "", "html")
    app.connect("config-inited", _configure_repository, priority=400)
    app.connect("html-page-context", _offer_notebook, priority=500)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
