"""Bar charts as SVG, drawn directly (no plotting library: a few dozen lines of markup each,
deterministic bytes, text that stays text, and nothing to import at start-up).

Every bar carries its value as a label, so a chart stays readable when an amount is tiny next to
the $10,000,000 cap (a bar a pixel high still says "$2,146.64"). Submitted text (employer names,
counties) is escaped as XML: a name is never markup.

Legible where it is read: every chart is ``WIDTH`` pixels wide (the width of a page's text at normal
zoom: the pages show it at its own size) and no text in it is smaller than ``MIN_FONT`` pixels (about
10.5 px printed on letter paper). The legend is at the top, under the title; a label may take two
lines (``"words\n(code)"``).
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape as _escape

from transforms.outputs import xml_safe

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")
WIDTH = 900  # pixels: a page's text width at normal zoom (``_base.html.j2``: 60em)
MIN_FONT = 14  # pixels: the smallest text of a chart
TITLE_FONT = 18
CAP_COLOR = "#d62728"
FONT = 'font-family="Helvetica, Arial, sans-serif"'


def escape(text: str, entities: dict | None = None) -> str:
    """Text as SVG (XML) carries it: escaped, and what XML cannot carry as U+FFFD."""
    return _escape(xml_safe(text), entities or {})


def money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def _nice_max(v: float) -> float:
    """A round axis end at or above ``v`` (1, 2 or 5 times a power of ten)."""
    if v <= 0:
        return 1.0
    p = 10 ** len(str(int(v))) / 10
    for m in (1, 2, 5, 10):
        if m * p >= v:
            return m * p
    return 10 * p


def _text(x: float, y: float, s: str, *, size: int = MIN_FONT, anchor: str = "start", weight: str = "normal",
          color: str = "#111") -> str:
    """A text; ``s`` of several lines (``\n``) as lines one under the other."""
    lines = str(s).split("\n")
    body = escape(lines[0]) + "".join(f'<tspan x="{x:.1f}" dy="{size + 2}">{escape(ln)}</tspan>' for ln in lines[1:])
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{max(size, MIN_FONT)}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{color}" {FONT}>{body}</text>')


def _write(path: Path, width: int, height: int, body: list[str], title: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           _text(width / 2, 26, title, size=TITLE_FONT, anchor="middle", weight="bold"), *body, "</svg>"]
    path.write_text("\n".join(svg) + "\n", encoding="utf-8")
    return path


def _legend(names: list[str], x: float, y: float, extra: str | None = None) -> list[str]:
    """The series' colours and names in a row from ``x`` (and the cap's dashed line)."""
    out = []
    for i, name in enumerate(names):
        out += [f'<rect x="{x:.1f}" y="{y - 12:.1f}" width="14" height="14" fill="{COLORS[i % len(COLORS)]}"/>',
                _text(x + 20, y, name)]
        x += 40 + 8 * len(name)
    if extra:
        out += [f'<line x1="{x:.1f}" x2="{x + 16:.1f}" y1="{y - 5:.1f}" y2="{y - 5:.1f}" '
                f'stroke="{CAP_COLOR}" stroke-width="2" stroke-dasharray="5,3"/>', _text(x + 22, y, extra)]
    return out


def bars(path: Path, labels: list[str], series: dict[str, list[int]], title: str, *, caps: list[int] | None = None,
         horizontal: bool = False, note: list[str] | None = None) -> Path:
    """Grouped bars of money (integer cents), one group per label, each bar labelled with its
    value; ``caps``: a dashed cap mark per group (vertical charts); ``note``: a text per group
    written under its value labels (e.g. the share of the cap requested). ``WIDTH`` wide."""
    labels = [str(x) for x in labels] or ["(none)"]
    names = list(series)
    values = {k: (list(v) or [0]) for k, v in series.items()}
    top = _nice_max(max([*[x for v in values.values() for x in v], *(caps or []), 1]) * 1.08)
    if horizontal:
        return _horizontal(path, labels, names, values, top, title)
    return _vertical(path, labels, names, values, top, title, caps, note)


def _horizontal(path: Path, labels: list[str], names: list[str], values: dict, top: float, title: str) -> Path:
    n, k = len(labels), max(len(names), 1)
    row = 20 * k + 14
    left, right, y0 = 330, 100, 76
    width, height = WIDTH, y0 + n * row + 40
    plot = width - left - right
    body: list[str] = _legend(names, left, 54)
    for i in range(6):
        gx = left + plot * i / 5
        body += [f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{y0 - 6}" y2="{y0 + n * row}" stroke="#dddddd"/>',
                 _text(gx, y0 + n * row + 20, money(int(top * i / 5)), anchor="middle")]
    for g, label in enumerate(labels):
        gy = y0 + g * row
        body.append(_text(left - 8, gy + row / 2 + 5, label[:42], anchor="end"))
        for j, name in enumerate(names):
            v = values[name][g] if g < len(values[name]) else 0
            w = max(plot * max(v, 0) / top, 1 if v else 0)
            y = gy + 7 + 20 * j
            body += [f'<rect x="{left}" y="{y:.1f}" width="{w:.1f}" height="16" fill="{COLORS[j % len(COLORS)]}"/>',
                     _text(left + w + 6, y + 13, money(v))]
    return _write(path, width, height, body, title)


def _vertical(path: Path, labels: list[str], names: list[str], values: dict, top: float, title: str,
              caps: list[int] | None, note: list[str] | None) -> Path:
    n, k = len(labels), max(len(names), 1)
    two_lines = any("\n" in x for x in labels)
    left, y0 = 120, 80
    bottom = 110 if n > 6 else 70 + (18 if two_lines else 0) + (20 if note else 0)
    width, height = WIDTH, 520
    plot_h, plot_w = height - y0 - bottom, width - left - 20
    group = plot_w / n
    gap = 16  # between the bars of a group: their value labels side by side
    bar = max(8.0, min(60.0, group * 0.85 / k - gap))
    body: list[str] = _legend(names, left, 56, extra=f"cap {money(max(caps))}" if caps else None)
    for i in range(6):
        gy = y0 + plot_h * (1 - i / 5)
        body += [f'<line x1="{left}" x2="{left + plot_w:.1f}" y1="{gy:.1f}" y2="{gy:.1f}" stroke="#dddddd"/>',
                 _text(left - 6, gy + 5, money(int(top * i / 5)), anchor="end")]
    for g, label in enumerate(labels):
        span = bar * k + gap * (k - 1)
        gx = left + group * g + (group - span) / 2
        for j, name in enumerate(names):
            v = values[name][g] if g < len(values[name]) else 0
            h = max(plot_h * max(v, 0) / top, 1 if v else 0)
            x = gx + (bar + gap) * j
            body += [f'<rect x="{x:.1f}" y="{y0 + plot_h - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                     f'fill="{COLORS[j % len(COLORS)]}"/>',
                     _text(x + bar / 2, y0 + plot_h - h - 6, money(v), anchor="middle")]
        if caps is not None and g < len(caps):
            cy = y0 + plot_h * (1 - caps[g] / top)
            body.append(f'<line x1="{gx - 6:.1f}" x2="{gx + span + 6:.1f}" y1="{cy:.1f}" y2="{cy:.1f}" '
                        f'stroke="{CAP_COLOR}" stroke-width="2" stroke-dasharray="5,3"/>')
        cx = left + group * g + group / 2
        if n > 6:
            body.append(f'<text x="{cx:.1f}" y="{y0 + plot_h + 18}" font-size="{MIN_FONT}" text-anchor="end" {FONT} '
                        f'transform="rotate(-30 {cx:.1f} {y0 + plot_h + 18})">{escape(label.split(chr(10))[0][:30])}</text>')
        else:
            body.append(_text(cx, y0 + plot_h + 22, label[:60], anchor="middle"))
        if note and g < len(note):
            body.append(_text(cx, height - 12, note[g], anchor="middle", color="#444"))
    return _write(path, width, height, body, title)
