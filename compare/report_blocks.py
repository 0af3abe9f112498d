"""The blocks of a comparison report and their two renderings.

A report is built once as a sequence of blocks (headings, paragraphs,
tables, figures, ready-made fragments, and parts computed later) and
rendered twice: Markdown linking the figures' files, and standalone HTML
embedding them.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .report_figures import PAGE_PX
from .tables import _html_table, _md_table, _slug

__all__ = [
    "Figure",
    "Heading",
    "Later",
    "Para",
    "Raw",
    "Report",
    "Table",
    "render_html",
    "render_markdown",
]


# ----------------------------------------------------------------------
# Blocks
# ----------------------------------------------------------------------
@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    text: str


@dataclass
class Table:
    frame: pd.DataFrame
    caption: str = ""
    digits: int = 3


@dataclass
class Figure:
    path: Path
    caption: str


@dataclass
class Raw:
    """Ready-made fragments: one for the HTML, one for the Markdown."""

    html: str
    markdown: str


@dataclass
class Later:
    """A part computed after the report's outline, maybe in another
    process: ``make()`` returns the blocks that take its place."""

    make: object
    cost: float = 1.0


@dataclass
class Report:
    out: Path
    blocks: list = field(default_factory=list)

    def later(self, make, cost: float = 1.0):
        self.blocks.append(Later(make, cost))

    def later_figure(self, draw, caption):
        """A figure drawn later: ``draw()`` returns its path or None."""

        def make():
            path = draw()
            return [Figure(Path(path), caption)] if path is not None else []

        self.later(make)

    def h(self, level, text):
        self.blocks.append(Heading(level, text))

    def p(self, text):
        self.blocks.append(Para(text))

    def table(self, frame, caption="", digits=3):
        self.blocks.append(Table(frame, caption, digits))

    def raw(self, html_text, markdown_text):
        self.blocks.append(Raw(html_text, markdown_text))

    def figure(self, path, caption):
        if path is not None:
            self.blocks.append(Figure(Path(path), caption))


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:{page}px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:0.6em 0 1.2em;font-size:0.85em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f0f0f0}
td:first-child,th:first-child{text-align:left}
caption{caption-side:top;text-align:left;font-weight:600;padding:2px 0}
tr.bad td{background:#fde8e8}
tr.na td{background:#f4f4f4;color:#666}
figure{margin:0.5em 0 1.5em}
figure img{max-width:100%}
figcaption{font-size:0.85em;color:#555}
.scroll{overflow-x:auto}
nav ul{list-style:none;padding-left:0;columns:2;font-size:0.9em}
nav li.l3{padding-left:1.5em}
h2{border-bottom:1px solid #ddd;padding-bottom:0.2em;margin-top:1.6em}
.eqs{border-left:3px solid #d0d8e8;padding:0 0.8em;margin:0.8em 0;overflow-x:auto}
.eqs h5{margin:0.3em 0}
p.form{font-size:0.85em;color:#444}
.structure{display:flex;gap:1em;align-items:flex-start}
svg.spy{flex:none}
.side-by-side{display:grid;gap:1.2em;
grid-template-columns:repeat(auto-fit,minmax(min(100%,26em),1fr))}
.side-by-side>div{min-width:0}
.pub{border:1px solid #ccc;padding:0.4em 0.8em;margin:0.5em 0;overflow-x:auto}
math{font-family:"STIX Two Math","Latin Modern Math","DejaVu Math TeX Gyre",
"Cambria Math",math}
.pub.misprint .printed{background:#fde8e8;border:1px dashed #c33;padding:0 0.4em}
.flag{background:#c33;color:#fff;border-radius:3px;padding:0 0.4em;font-size:0.8em}
p.note{font-size:0.85em;color:#333}
details{margin:0.3em 0}
summary{cursor:pointer;color:#1f4e99}
"""


def render_markdown(rep: Report) -> str:
    parts = []
    for b in rep.blocks:
        if isinstance(b, Heading):
            parts.append("#" * b.level + " " + b.text)
        elif isinstance(b, Para):
            parts.append(b.text)
        elif isinstance(b, Table):
            parts.append(_md_table(b.frame, b.digits))
        elif isinstance(b, Raw):
            parts.append(b.markdown)
        elif isinstance(b, Figure):
            rel = b.path.relative_to(rep.out).as_posix()
            parts.append(f"![{b.caption}]({rel})\n\n*{b.caption}*")
    return "\n\n".join(parts) + "\n"


def render_html(rep: Report) -> str:
    title = next((b.text for b in rep.blocks if isinstance(b, Heading)), "Report")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS.replace('{page}', str(PAGE_PX))}</style>",
        "</head><body>",
    ]
    # A contents list: the report of a full run is long.
    toc = ["<nav><ul>"]
    for b in rep.blocks:
        if isinstance(b, Heading) and b.level in (2, 3):
            toc.append(
                f'<li class="l{b.level}"><a href="#{_slug(b.text)}">'
                f"{html.escape(b.text)}</a></li>"
            )
    toc.append("</ul></nav>")
    seen_h1 = False
    for b in rep.blocks:
        if isinstance(b, Heading):
            anchor = f' id="{_slug(b.text)}"' if b.level in (2, 3) else ""
            parts.append(f"<h{b.level}{anchor}>{html.escape(b.text)}</h{b.level}>")
            if b.level == 1 and not seen_h1:
                parts.extend(toc)
                seen_h1 = True
        elif isinstance(b, Para):
            parts.append(f"<p>{html.escape(b.text)}</p>")
        elif isinstance(b, Table):
            parts.append(_html_table(b.frame, b.caption, b.digits))
        elif isinstance(b, Raw):
            parts.append(b.html)
        elif isinstance(b, Figure):
            data = base64.b64encode(b.path.read_bytes()).decode("ascii")
            cap = html.escape(b.caption)
            parts.append(
                f'<figure><img alt="{cap}" src="data:image/png;base64,'
                f'{data}"><figcaption>{cap}</figcaption></figure>'
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
