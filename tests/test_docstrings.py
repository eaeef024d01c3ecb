"""posenc's docstrings: no control characters, and math that the book's renderer can typeset.

The API page renders every public docstring (autodoc), and the build typesets its
``:math:`` roles and ``.. math::`` blocks (Temml, _ext/posenc_mathml.py). A backslash in a docstring that is not a raw
string is an escape: ``"\\theta"`` becomes a TAB followed by ``heta`` and ``"\\nu"`` a
newline followed by ``u``, which breaks the formula silently (issue 19 found TABs in
``apply_rope_2d``). These tests fail on each such defect:

- no docstring contains a control character other than a newline;
- every docstring whose source literal contains a backslash is a raw string, so the text
  the reader sees is the text the author typed;
- every formula has balanced braces, paired ``\\left``/``\\right`` and
  ``\\begin``/``\\end``, and uses only TeX commands from a fixed list (a misspelt or
  mangled command fails here, before the build: Temml would stop it there).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import unicodedata
from pathlib import Path

import pytest

import posenc

# TeX commands of LaTeX and amsmath that Temml typesets, restricted to those a docstring of
# this package may reasonably use. Add to the list deliberately.
TEX_COMMANDS = set("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi
pi rho varrho sigma tau phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega
sum prod int frac dfrac tfrac sqrt exp log ln sin cos tan arg max min sup inf lim det dim
cdot cdots ldots dots times div pm mp le leq ge geq ne neq approx equiv sim propto in notin
subset subseteq cup cap setminus mid to mapsto rightarrow leftarrow Rightarrow infty partial nabla
left right bigl bigr Bigl Bigr biggl biggr big Big langle rangle lfloor rfloor lceil rceil
lvert rvert lVert rVert vert Vert
mathbb mathrm mathbf mathcal mathit operatorname text texttt textrm boldsymbol
overline bar hat tilde vec dot underline top
quad qquad begin end
""".split())

ROLE = re.compile(r":math:`([^`]*)`")
BLOCK = re.compile(r"^([ \t]*)\.\. math::([^\n]*)\n((?:[ \t]*\n|\1[ \t]+[^\n]*\n?)*)", re.M)


def _modules():
    yield posenc
    for info in pkgutil.walk_packages(posenc.__path__, "posenc."):
        yield importlib.import_module(info.name)


def _docstrings():
    """(qualified name, docstring) of every module, class, function and method of posenc."""
    seen = set()
    for mod in _modules():
        if mod.__doc__:
            yield mod.__name__, mod.__doc__
        for name, obj in vars(mod).items():
            if getattr(obj, "__module__", None) != mod.__name__ or id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isfunction(obj) and obj.__doc__:
                yield f"{mod.__name__}.{name}", obj.__doc__
            elif inspect.isclass(obj):
                if obj.__doc__:
                    yield f"{mod.__name__}.{name}", obj.__doc__
                for attr, member in vars(obj).items():
                    func = getattr(member, "__func__", member)
                    func = getattr(func, "fget", func)
                    if callable(func) and getattr(func, "__doc__", None):
                        yield f"{mod.__name__}.{name}.{attr}", func.__doc__


def _formulas(doc: str):
    yield from ROLE.findall(doc)
    for _, same_line, body in BLOCK.findall(doc):
        yield same_line + "\n" + body  # the directive's argument and its indented content


def math_problems(tex: str) -> list[str]:
    """What is wrong with one formula (empty if nothing): the checks the renderer would fail on."""
    problems = []
    bad = [c for c in tex if unicodedata.category(c) == "Cc" and c != "\n"]
    if bad:
        problems.append(f"control characters {bad!r}")
    if not tex.strip():
        problems.append("empty formula")
    depth = 0
    for i, c in enumerate(tex):
        if c in "{}" and i and tex[i - 1] == "\\":
            continue  # \{ and \} are literal braces
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            problems.append("unbalanced '}'")
            break
    if depth > 0:
        problems.append("unbalanced '{'")
    commands = re.findall(r"\\([A-Za-z]+)", tex)
    unknown = sorted(set(commands) - TEX_COMMANDS)
    if unknown:
        problems.append(f"unknown commands {unknown}")
    if commands.count("left") != commands.count("right"):
        problems.append("\\left without \\right (or the reverse)")
    if sorted(re.findall(r"\\begin\{(\w+\*?)\}", tex)) != sorted(re.findall(r"\\end\{(\w+\*?)\}", tex)):
        problems.append("\\begin/\\end mismatch")
    return problems


DOCSTRINGS = list(_docstrings())


def test_docstrings_found():
    names = [name for name, _ in DOCSTRINGS]
    assert "posenc.rope.apply_rope_2d" in names and len(names) > 50
    assert sum(1 for _, doc in DOCSTRINGS for _ in _formulas(doc)) > 50


@pytest.mark.parametrize("name, doc", DOCSTRINGS, ids=[n for n, _ in DOCSTRINGS])
def test_no_control_characters(name, doc):
    bad = sorted({repr(c) for c in doc if unicodedata.category(c) == "Cc" and c != "\n"})
    assert not bad, f"{name}: control characters {bad} (a backslash escape in a non-raw docstring?)"


@pytest.mark.parametrize("name, doc", DOCSTRINGS, ids=[n for n, _ in DOCSTRINGS])
def test_math_is_valid(name, doc):
    for tex in _formulas(doc):
        assert not math_problems(tex), f"{name}: {tex!r}: {math_problems(tex)}"


def _docstring_literals():
    root = Path(posenc.__file__).parent
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                        and isinstance(body[0].value.value, str):
                    yield f"{path.name}:{body[0].lineno}", ast.get_source_segment(source, body[0].value)


@pytest.mark.parametrize("where, literal", list(_docstring_literals()))
def test_backslashes_only_in_raw_docstrings(where, literal):
    prefix = re.match(r"[A-Za-z]*", literal).group(0).lower()
    if "r" not in prefix:  # outside a raw string, only the escaped backslash "\\\\" is safe
        assert "\\" not in literal.replace("\\\\", ""), f"{where}: an escape in a non-raw docstring; use r\"\"\"...\"\"\""


@pytest.mark.parametrize("tex, problem", [
    ("\theta_t = \text{base}^{-4t/d}", "control characters"),  # the apply_rope_2d defect
    (r"\theta_t = \tetx{base}", "unknown commands"),
    (r"\frac{1}{2", "unbalanced '{'"),
    (r"\left( x", "\\left without"),
    ("   ", "empty formula"),
])
def test_checker_catches(tex, problem):
    assert any(p.startswith(problem) for p in math_problems(tex))
    assert not math_problems(r"\theta_t = \text{base}^{-4t/d}, \ \left\{ x \right\}")
