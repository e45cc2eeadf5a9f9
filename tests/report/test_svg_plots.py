"""The report's plots: tick values are nice numbers (steps of 1, 2 or 5
times a power of ten, checked against axes worked out by hand), the axis
spans the data, and a plot of several series has a legend whose colour
swatches are the colours of its lines."""
import re

import pytest

from graphormer_sepnorm.report.svg_plots import (histogram_svg, lines_svg,
                                                 nice_axis, roc_svg)

# (low, high) -> ticks, worked out by hand: the step is the smallest of
# 1, 2, 5 x 10^k that covers [low, high] with at most 5 intervals between
# multiples of the step.
HAND = [
    ((0, 35), [0, 10, 20, 30, 40]),            # 5 would need 7 intervals
    ((0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    ((-9.68, 3.45), [-10, -5, 0, 5]),          # 2 would need 7 (-10..4)
    ((0.0123, 0.0171), [0.012, 0.014, 0.016, 0.018]),  # 0.001: 6
    ((0, 0.3), [0, 0.1, 0.2, 0.3]),            # 0.05 would need 6
    ((0.49, 0.51), [0.49, 0.495, 0.5, 0.505, 0.51]),
    ((-0.004, 0.011), [-0.005, 0, 0.005, 0.01, 0.015]),
    ((2, 2), [1.5, 2, 2.5]),                   # equal ends widened by 0.5
    ((3, 4100), [0, 1000, 2000, 3000, 4000, 5000]),
]


@pytest.mark.parametrize('ends, ticks', HAND)
def test_nice_axis_by_hand(ends, ticks):
    axis = nice_axis(*ends)
    assert axis.ticks == pytest.approx(ticks, abs=1e-12)
    assert (axis.low, axis.high) == (axis.ticks[0], axis.ticks[-1])
    assert axis.low <= min(ends) and axis.high >= max(ends)


def test_nice_axis_with_a_smallest_step():
    assert nice_axis(0, 2, min_step=1).ticks == [0, 1, 2]
    assert nice_axis(0, 2).ticks == pytest.approx([0, 0.5, 1, 1.5, 2])
    assert nice_axis(0, 35, min_step=1).ticks == [0, 10, 20, 30, 40]


def ticks_of(svg, axis):
    return re.findall(rf'class="{axis}-tick"[^>]*>([^<]*)<', svg)


def test_plots_label_their_nice_ticks():
    epochs = list(range(36))
    svg = lines_svg(epochs, {'train loss': [1 / (1 + e) for e in epochs]},
                    'epoch', 'train loss')
    assert ticks_of(svg, 'x') == ['0', '10', '20', '30', '40']
    assert ticks_of(svg, 'y') == ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']
    assert 'class="legend"' not in svg  # one series: the y label names it
    roc = roc_svg([0, 1, 0, 1], [0.1, 0.9, 0.4, 0.3], 'active')
    assert ticks_of(roc, 'x') == ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']
    hist = histogram_svg([0.49, 0.5, 0.5, 0.51], 'p', bins=4)
    assert ticks_of(hist, 'x') == ['0.490', '0.495', '0.500', '0.505',
                                   '0.510']
    assert ticks_of(hist, 'y') == ['0', '1', '2']  # counts: whole steps


def test_several_series_have_a_legend_with_their_colours():
    nan = float('nan')
    svg = lines_svg([0, 1, 2], {'val mae': [3, 2, 1], 'test mae': [4, 3, 2],
                                'never scored': [nan, nan, nan]},
                    'epoch', 'mae')
    strokes = re.findall(r'<polyline[^>]*stroke="(#[0-9a-f]{6})"', svg)
    legend = svg[svg.index('class="legend"'):]
    swatches = re.findall(r'class="swatch"[^>]*fill="(#[0-9a-f]{6})"',
                          legend)
    names = re.findall(r'<text[^>]*>([^<]*)</text>', legend)
    assert len(set(strokes)) == 2 and swatches == strokes
    assert names == ['val mae', 'test mae']  # the empty series is left out
