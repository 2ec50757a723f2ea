"""Bar charts as SVG, drawn directly (no plotting library: a few dozen lines of markup each,
deterministic bytes, text that stays text, and nothing to import at start-up).

Every bar carries its value as a label, so a chart stays readable when an amount is tiny next to
the $10,000,000 cap (a bar a pixel high still says "$2,146.64"). Submitted text (employer names,
counties) is escaped as XML: a name is never markup.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape as _escape

from transforms.outputs import xml_safe

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")
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


def _text(x: float, y: float, s: str, *, size: int = 12, anchor: str = "start", weight: str = "normal",
          color: str = "#111") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
            f'fill="{color}" {FONT}>{escape(s)}</text>')


def _write(path: Path, width: int, height: int, body: list[str], title: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>', _text(width / 2, 24, title, size=15, anchor="middle",
                                                                               weight="bold"), *body, "</svg>"]
    path.write_text("\n".join(svg) + "\n", encoding="utf-8")
    return path


def _legend(names: list[str], x: float, y: float, extra: str | None = None) -> list[str]:
    out = []
    for i, name in enumerate(names):
        out += [f'<rect x="{x:.1f}" y="{y + 18 * i - 10:.1f}" width="12" height="12" fill="{COLORS[i % len(COLORS)]}"/>',
                _text(x + 18, y + 18 * i, name)]
    if extra:
        k = len(names)
        out += [f'<line x1="{x:.1f}" x2="{x + 12:.1f}" y1="{y + 18 * k - 4:.1f}" y2="{y + 18 * k - 4:.1f}" '
                f'stroke="{CAP_COLOR}" stroke-width="2" stroke-dasharray="5,3"/>', _text(x + 18, y + 18 * k, extra)]
    return out


def bars(path: Path, labels: list[str], series: dict[str, list[int]], title: str, *, caps: list[int] | None = None,
         horizontal: bool = False, note: list[str] | None = None) -> Path:
    """Grouped bars of money (integer cents), one group per label, each bar labelled with its
    value; ``caps``: a dashed cap mark per group (vertical charts); ``note``: a text per group
    written under its value labels (e.g. the share of the cap requested)."""
    labels = [str(x) for x in labels] or ["(none)"]
    names = list(series)
    values = {k: (list(v) or [0]) for k, v in series.items()}
    top = _nice_max(max([*[x for v in values.values() for x in v], *(caps or []), 1]) * 1.08)
    n, k = len(labels), max(len(names), 1)
    body: list[str] = []
    if horizontal:
        row = 18 * k + 14
        left, right, y0 = 250, 200, 60
        width, height = 1000, y0 + n * row + 40
        plot = width - left - right
        for i in range(6):
            gx = left + plot * i / 5
            body += [f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{y0 - 6}" y2="{y0 + n * row}" stroke="#dddddd"/>',
                     _text(gx, y0 + n * row + 16, money(int(top * i / 5)), size=10, anchor="middle")]
        for g, label in enumerate(labels):
            gy = y0 + g * row
            body.append(_text(left - 8, gy + row / 2 + 4, label[:40], anchor="end"))
            for j, name in enumerate(names):
                v = values[name][g] if g < len(values[name]) else 0
                w = max(plot * max(v, 0) / top, 1 if v else 0)
                y = gy + 7 + 18 * j
                body += [f'<rect x="{left}" y="{y:.1f}" width="{w:.1f}" height="14" fill="{COLORS[j % len(COLORS)]}"/>',
                         _text(left + w + 6, y + 11, money(v), size=11)]
        body += _legend(names, width - right + 20, y0 + 10)
        return _write(path, width, height, body, title)
    left, bottom, y0 = 110, 90 if n > 6 else 60, 50
    width = max(900, left + 40 + n * (70 * k + 30) + 180)
    height = 520
    plot_h, plot_w = height - y0 - bottom, width - left - 190
    group = plot_w / n
    bar = min(60.0, group * 0.8 / k)
    for i in range(6):
        gy = y0 + plot_h * (1 - i / 5)
        body += [f'<line x1="{left}" x2="{left + plot_w:.1f}" y1="{gy:.1f}" y2="{gy:.1f}" stroke="#dddddd"/>',
                 _text(left - 6, gy + 4, money(int(top * i / 5)), size=10, anchor="end")]
    for g, label in enumerate(labels):
        gx = left + group * g + (group - bar * k) / 2
        for j, name in enumerate(names):
            v = values[name][g] if g < len(values[name]) else 0
            h = max(plot_h * max(v, 0) / top, 1 if v else 0)
            x = gx + bar * j
            body += [f'<rect x="{x:.1f}" y="{y0 + plot_h - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" '
                     f'fill="{COLORS[j % len(COLORS)]}"/>',
                     _text(x + bar / 2, y0 + plot_h - h - 5, money(v), size=10, anchor="middle")]
        if caps is not None and g < len(caps):
            cy = y0 + plot_h * (1 - caps[g] / top)
            body.append(f'<line x1="{gx - 6:.1f}" x2="{gx + bar * k + 4:.1f}" y1="{cy:.1f}" y2="{cy:.1f}" '
                        f'stroke="{CAP_COLOR}" stroke-width="2" stroke-dasharray="5,3"/>')
        cx = left + group * g + group / 2
        if n > 6:
            body.append(f'<text x="{cx:.1f}" y="{y0 + plot_h + 14}" font-size="11" text-anchor="end" {FONT} '
                        f'transform="rotate(-30 {cx:.1f} {y0 + plot_h + 14})">{escape(label[:30])}</text>')
        else:
            body.append(_text(cx, y0 + plot_h + 18, label[:30], anchor="middle"))
        if note and g < len(note):
            body.append(_text(cx, y0 + plot_h + 36, note[g], size=11, anchor="middle", color="#444"))
    body += _legend(names, left + plot_w + 20, y0 + 20, extra=f"cap {money(max(caps))}" if caps else None)
    return _write(path, width, height, body, title)
