r"""Small plots as inline SVG, drawn here so that a report needs no plotting
library, script or font: a histogram (:func:`histogram_svg`), curves (:func:`lines_svg`), measured
against predicted (:func:`parity_svg`) and a ROC curve (:func:`roc_svg`,
with :func:`roc_curve`)."""
from __future__ import annotations

import html
import math
from typing import NamedTuple, Optional, Sequence

import numpy as np

__all__ = ['Axis', 'histogram_svg', 'lines_svg', 'nice_axis', 'parity_svg',
           'roc_curve', 'roc_svg']

_W, _H = 420, 280          # Plot size in pixels.
_L, _R, _T, _B = 52, 12, 12, 40  # Margins: left, right, top, bottom.


class Axis(NamedTuple):
    r"""An axis: the range it spans and the values it marks
    (:func:`nice_axis`)."""
    low: float
    high: float
    ticks: list[float]


#: The steps of :func:`nice_axis` within a power of ten.
_STEPS = (1, 2, 5)


def nice_axis(low: float, high: float, max_intervals: int = 5,
              min_step: float = 0.0) -> Axis:
    r"""An axis that spans :obj:`[low, high]`, widened to whole multiples
    of its tick step: the smallest step of 1, 2 or 5 times a power of ten
    that needs at most :obj:`max_intervals` intervals, *e.g.* 0 to 35
    epochs: 0, 10, 20, 30, 40. Equal ends are widened by 0.5 each way.

    Args:
        low (float): The smallest value shown (finite).
        high (float): The largest value shown (finite).
        max_intervals (int, optional): Most intervals between ticks.
            (default: :obj:`5`)
        min_step (float, optional): The smallest step, *e.g.* :obj:`1` for
            counts. (default: :obj:`0.0`)
    """
    if high - low < 1e-12:
        low, high = low - 0.5, high + 0.5
    power = math.floor(math.log10(max((high - low) / max_intervals,
                                      min_step)))
    for exponent in (power, power + 1):
        for unit in _STEPS:
            step = unit * 10.0 ** exponent
            if step < min_step:
                continue
            first = math.floor(low / step + 1e-9)
            last = math.ceil(high / step - 1e-9)
            if last - first <= max_intervals:
                digits = max(0, -exponent)
                ticks = [round(k * step, digits) + 0.0
                         for k in range(first, last + 1)]
                return Axis(ticks[0], ticks[-1], ticks)
    raise AssertionError('unreachable: 10 times the step always fits')


def _label(value: float, axis: Axis) -> str:
    r"""A tick's text, with as many decimals as the axis' step needs."""
    step = axis.ticks[1] - axis.ticks[0]
    digits = max(0, -math.floor(math.log10(step) + 1e-9))
    return f'{value:.{digits}f}'


def _frame(x_axis: Axis, y_axis: Axis, x_label: str, y_label: str,
           body: str, title: str) -> str:
    r"""The axes, ticks and labels around :obj:`body` (already in pixel
    coordinates)."""
    parts = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" '
             f'width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
             f'role="img"><title>{html.escape(title)}</title>',
             f'<rect x="{_L}" y="{_T}" width="{_W - _L - _R}" '
             f'height="{_H - _T - _B}" fill="none" stroke="#888"/>']
    for fx in x_axis.ticks:
        parts.append(f'<text class="x-tick" x="{_px(fx, x_axis):.1f}" '
                     f'y="{_H - _B + 14}" text-anchor="middle">'
                     f'{_label(fx, x_axis)}</text>')
    for fy in y_axis.ticks:
        parts.append(f'<text class="y-tick" x="{_L - 4}" '
                     f'y="{_py(fy, y_axis) + 4:.1f}" text-anchor="end">'
                     f'{_label(fy, y_axis)}</text>')
    parts.append(f'<text x="{(_L + _W - _R) / 2}" y="{_H - 6}" '
                 f'text-anchor="middle">{html.escape(x_label)}</text>')
    parts.append(f'<text x="12" y="{(_T + _H - _B) / 2}" text-anchor='
                 f'"middle" transform="rotate(-90 12 {(_T + _H - _B) / 2})">'
                 f'{html.escape(y_label)}</text>')
    return ''.join(parts) + body + '</svg>'


def _px(x: float, axis: Axis) -> float:
    return _L + (x - axis.low) / (axis.high - axis.low) * (_W - _L - _R)


def _py(y: float, axis: Axis) -> float:
    return _H - _B - (y - axis.low) / (axis.high - axis.low) * (_H - _T - _B)


def _tick(value: float) -> str:
    return f'{value:.3g}'


def _axis(values: np.ndarray) -> Axis:
    r"""The :func:`nice_axis` of finite :obj:`values`."""
    return nice_axis(float(values.min()), float(values.max()))


def histogram_svg(values: Sequence[float], label: str,
                  bins: int = 40) -> Optional[str]:
    r"""The distribution of :obj:`values` (finite ones) as a histogram;
    :obj:`None` if there are none.

    Args:
        values (list of float): The values.
        label (str): What they are (the x axis).
        bins (int, optional): Number of bars. (default: :obj:`40`)
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    # numpy widens equal ends by 0.5 each way, as nice_axis does.
    counts, edges = np.histogram(values, bins=bins)
    x_range = nice_axis(float(edges[0]), float(edges[-1]))
    y_range = nice_axis(0.0, float(max(counts.max(), 1)), min_step=1)
    bars = ''.join(
        f'<rect x="{_px(a, x_range):.1f}" y="{_py(c, y_range):.1f}" '
        f'width="{max(_px(b, x_range) - _px(a, x_range) - 1, 1):.1f}" '
        f'height="{_py(0, y_range) - _py(c, y_range):.1f}" fill="#4a7bd0">'
        f'<title>{_tick(a)} to {_tick(b)}: {c}</title></rect>'
        for a, b, c in zip(edges[:-1], edges[1:], counts.tolist()) if c)
    return _frame(x_range, y_range, label, 'molecules', bars,
                  f'Distribution of {label} ({values.size:,} molecules)')


def parity_svg(measured: Sequence[float], predicted: Sequence[float],
               measured_label: str, predicted_label: str,
               max_points: int = 5000) -> Optional[str]:
    r"""Predicted against measured, one dot per molecule (at most
    :obj:`max_points`, evenly spaced in the input order), with the line
    where they are equal; :obj:`None` without a finite pair.

    Args:
        measured (list of float): The targets.
        predicted (list of float): The predictions, in the same order.
        measured_label (str): The x axis.
        predicted_label (str): The y axis.
        max_points (int, optional): Dots drawn at most. (default: :obj:`5000`)
    """
    x = np.asarray(measured, dtype=np.float64)
    y = np.asarray(predicted, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size == 0:
        return None
    if x.size > max_points:
        pick = np.linspace(0, x.size - 1, max_points).astype(np.int64)
        x, y = x[pick], y[pick]
    both = _axis(np.concatenate([x, y]))
    low, high = (_px(both.low, both), _py(both.low, both)), \
        (_px(both.high, both), _py(both.high, both))
    body = (f'<line x1="{low[0]:.1f}" y1="{low[1]:.1f}" x2="{high[0]:.1f}" '
            f'y2="{high[1]:.1f}" stroke="#aaa" stroke-dasharray="4 3"/>')
    body += ''.join(f'<circle cx="{_px(a, both):.1f}" cy="{_py(b, both):.1f}"'
                    f' r="2" fill="#4a7bd0" fill-opacity="0.6"/>'
                    for a, b in zip(x.tolist(), y.tolist()))
    return _frame(both, both, f'measured {measured_label}',
                  f'predicted {predicted_label}', body,
                  f'{predicted_label} against {measured_label}')


def roc_curve(labels: Sequence[float], scores: Sequence[float]
              ) -> Optional[tuple[np.ndarray, np.ndarray, float]]:
    r"""The ROC curve of :obj:`scores` for the 0/1 :obj:`labels` (pairs
    with a missing value left out): false and true positive rates at every
    threshold, and the area under it (ties counted half); :obj:`None` if
    one class is missing."""
    y = np.asarray(labels, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    keep = np.isfinite(y) & np.isfinite(s)
    y, s = y[keep] > 0.5, s[keep]
    positives, negatives = int(y.sum()), int((~y).sum())
    if positives == 0 or negatives == 0:
        return None
    order = np.argsort(-s, kind='stable')
    s, y = s[order], y[order]
    # One point per distinct score: the last index of each run of ties.
    last = np.r_[np.nonzero(np.diff(s))[0], s.size - 1]
    tpr = np.r_[0.0, np.cumsum(y)[last] / positives]
    fpr = np.r_[0.0, np.cumsum(~y)[last] / negatives]
    auc = float(np.trapezoid(tpr, fpr))
    return fpr, tpr, auc


def roc_svg(labels: Sequence[float], scores: Sequence[float],
            label: str) -> Optional[str]:
    r"""The ROC curve (see :func:`roc_curve`) with its area in the title;
    :obj:`None` if one class is missing."""
    curve = roc_curve(labels, scores)
    if curve is None:
        return None
    fpr, tpr, auc = curve
    unit = nice_axis(0.0, 1.0)
    points = ' '.join(f'{_px(a, unit):.1f},{_py(b, unit):.1f}'
                      for a, b in zip(fpr.tolist(), tpr.tolist()))
    body = (f'<line x1="{_px(0, unit)}" y1="{_py(0, unit)}" '
            f'x2="{_px(1, unit)}" y2="{_py(1, unit)}" stroke="#aaa" '
            f'stroke-dasharray="4 3"/><polyline points="{points}" '
            f'fill="none" stroke="#d0433a" stroke-width="2"/>')
    return _frame(unit, unit, 'false positive rate', 'true positive rate',
                  body, f'ROC curve of {label}: area {auc:.4f}')


#: Colours of the series of :func:`lines_svg`, in order.
_COLORS = ('#4a7bd0', '#d0433a', '#3a9d5d', '#8a5cc2')


def lines_svg(x: Sequence[float], series: dict[str, Sequence[float]],
              x_label: str, y_label: str) -> Optional[str]:
    r"""One line per entry of :obj:`series` (name to one value per
    :obj:`x`; NaN values are left out), with a legend; :obj:`None` if no
    value is finite.

    Args:
        x (list of float): The x of every point (e.g. epochs).
        series (dict): The lines.
        x_label (str): The x axis.
        y_label (str): The y axis.
    """
    xs = np.asarray(x, dtype=np.float64)
    lines = {name: (_COLORS[k % len(_COLORS)], np.asarray(ys, np.float64))
             for k, (name, ys) in enumerate(series.items())}
    # Series without a finite value are neither drawn nor in the legend.
    lines = {name: (color, ys) for name, (color, ys) in lines.items()
             if np.isfinite(ys).any()}
    if xs.size == 0 or not lines:
        return None
    x_range = _axis(xs)
    y_range = _axis(np.concatenate([ys[np.isfinite(ys)]
                                    for _, ys in lines.values()]))
    body = ''
    for color, ys in lines.values():
        keep = np.isfinite(ys)
        points = ' '.join(f'{_px(a, x_range):.1f},{_py(b, y_range):.1f}'
                          for a, b in zip(xs[keep].tolist(),
                                          ys[keep].tolist()))
        body += (f'<polyline points="{points}" fill="none" '
                 f'stroke="{color}" stroke-width="1.5"/>')
    if len(lines) > 1:
        body += _legend({name: color for name, (color, _) in lines.items()})
    return _frame(x_range, y_range, x_label, y_label, body,
                  f'{y_label} by {x_label}')


def _legend(colors: dict[str, str]) -> str:
    r"""A legend in the top right corner: per series, a swatch of its
    colour and its name."""
    width = 30 + 7 * max(len(name) for name in colors)
    left, top = _W - _R - 6 - width, _T + 6
    parts = [f'<g class="legend"><rect x="{left}" y="{top}" '
             f'width="{width}" height="{8 + 16 * len(colors)}" '
             f'fill="#fff" fill-opacity="0.85" stroke="#ccc"/>']
    for k, (name, color) in enumerate(colors.items()):
        y = top + 12 + 16 * k
        parts.append(f'<rect class="swatch" x="{left + 6}" y="{y - 4}" '
                     f'width="14" height="4" fill="{color}"/>'
                     f'<text x="{left + 24}" y="{y + 1}">'
                     f'{html.escape(name)}</text>')
    return ''.join(parts) + '</g>'
