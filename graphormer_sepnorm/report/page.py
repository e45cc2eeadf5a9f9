r"""The HTML page of a report: one self-contained file (inline CSS and
script, no network, no external fonts), with a table of molecules that
sorts by a click on its header and filters as one types
(:func:`render_page`, :func:`molecule_table`).

Everything that comes from the user (SMILES, column names, messages,
configuration) passes through :func:`esc`; the page embeds no JSON and
builds no HTML in its script, which only reorders and hides rows.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

__all__ = ['esc', 'number', 'Column', 'Row', 'molecule_table',
           'render_page', 'TABLE_ID']

#: The id of the molecule table (the browser test clicks its headers).
TABLE_ID = 'molecules'

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em;
color:#222;max-width:1400px}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em}
.note{color:#555;max-width:60em}.plots{display:flex;flex-wrap:wrap;gap:1em}
.plot text{font-size:11px;fill:#333}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:middle}
th[data-sort]{cursor:pointer;background:#f2f4f8;user-select:none}
th[aria-sort=ascending]::after{content:' \\25B2'}
th[aria-sort=descending]::after{content:' \\25BC'}
td.smiles{font-family:monospace;max-width:26em;word-break:break-all}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.err{color:#a12;max-width:30em}td.mol svg{display:block}
.drawing{content-visibility:auto;contain-intrinsic-size:220px 160px}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px}
dl.facts dt{color:#555}dl.facts dd{margin:0}
pre{background:#f6f6f6;padding:.8em;overflow:auto;max-height:30em}
.legend span{display:inline-block;width:1em;height:1em;vertical-align:middle;
margin:0 .3em 0 1em;border:1px solid #999}
#controls{margin:.6em 0}#controls input{width:22em}
"""

_SCRIPT = """
(function () {
  var table = document.getElementById('%(table)s');
  if (!table) { return; }
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  var filter = document.getElementById('filter');
  var group = document.getElementById('group');
  var shown = document.getElementById('shown');
  function key(row, i, numeric) {
    var cell = row.cells[i];
    var value = cell.getAttribute('data-value');
    if (value === null) { value = cell.textContent; }
    if (!numeric) { return value.toLowerCase(); }
    var x = parseFloat(value);
    return isNaN(x) ? null : x;
  }
  function sortBy(i) {
    var numeric = heads[i].getAttribute('data-sort') === 'num';
    var ascending = heads[i].getAttribute('aria-sort') !== 'ascending';
    var rows = Array.prototype.slice.call(body.rows).map(function (row, k) {
      return [key(row, i, numeric), k, row];
    });
    rows.sort(function (a, b) {
      if (a[0] === b[0]) { return a[1] - b[1]; }
      if (a[0] === null) { return 1; }
      if (b[0] === null) { return -1; }
      var order = a[0] < b[0] ? -1 : 1;
      return ascending ? order : -order;
    });
    for (var h = 0; h < heads.length; h++) { heads[h].removeAttribute('aria-sort'); }
    heads[i].setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    rows.forEach(function (entry) { body.appendChild(entry[2]); });
  }
  Array.prototype.forEach.call(heads, function (head, i) {
    if (head.hasAttribute('data-sort')) {
      head.addEventListener('click', function () { sortBy(i); });
    }
  });
  function applyFilter() {
    var text = filter ? filter.value.toLowerCase() : '';
    var wanted = group ? group.value : '';
    var count = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var groups = (row.getAttribute('data-group') || '').split(' ');
      var visible = (!wanted || groups.indexOf(wanted) >= 0) &&
        (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    if (shown) { shown.textContent = count + ' of ' + body.rows.length + ' rows shown'; }
  }
  if (filter) { filter.addEventListener('input', applyFilter); }
  if (group) { group.addEventListener('change', applyFilter); }
  applyFilter();
})();
""" % {'table': TABLE_ID}


def esc(value: object) -> str:
    r""":obj:`value` as text safe inside HTML elements and quoted
    attributes (:func:`html.escape`, quotes included)."""
    return html.escape(str(value), quote=True)


def number(value: Optional[float], digits: int = 4) -> str:
    r""":obj:`value` for the eye: :obj:`digits` significant digits, empty
    for :obj:`None` or NaN."""
    if value is None or not math.isfinite(value):
        return ''
    return f'{value:.{digits}g}'


@dataclass
class Column:
    r"""A column of :func:`molecule_table`.

    Attributes:
        name (str): Its header (escaped when drawn).
        sort (str, optional): :obj:`"num"` or :obj:`"text"` if a click on
            the header sorts by it, :obj:`None` if not.
        css (str): The class of its cells (:obj:`num`, :obj:`smiles`,
            :obj:`err`, :obj:`mol`).
        title (str): Tooltip of the header.
    """
    name: str
    sort: Optional[str] = 'num'
    css: str = 'num'
    title: str = ''


@dataclass
class Row:
    r"""A row of :func:`molecule_table`.

    Attributes:
        cells (list of str): One HTML fragment per column, already safe
            (escape text with :func:`esc`).
        values (list of str or None): The sort key of each cell (a full
            precision number), or :obj:`None` to sort by its text.
        groups (list of str): The groups the row belongs to (the filter's
            choices, e.g. :obj:`top`, :obj:`sample`, :obj:`failed`).
    """
    cells: list[str]
    values: list[Optional[str]]
    groups: list[str] = field(default_factory=list)


def molecule_table(columns: Sequence[Column], rows: Sequence[Row],
                   groups: Sequence[tuple[str, str]] = ()) -> str:
    r"""The sortable, filterable table of :obj:`rows`, with a text filter
    and, if :obj:`groups` (value, label) are given, a choice of group."""
    choice = ''
    if groups:
        options = ''.join(f'<option value="{esc(value)}">{esc(label)}'
                          f'</option>' for value, label in groups)
        choice = (f' <select id="group"><option value="">all rows</option>'
                  f'{options}</select>')
    head = ''.join(f'<th{_attr("data-sort", c.sort)}'
                   f'{_attr("title", c.title or None)}>{esc(c.name)}</th>'
                   for c in columns)
    lines = []
    for row in rows:
        cells = ''.join(f'<td class="{c.css}"{_attr("data-value", v)}>'
                        f'{cell}</td>'
                        for c, cell, v in zip(columns, row.cells, row.values))
        lines.append(f'<tr data-group="{esc(" ".join(row.groups))}">{cells}'
                     f'</tr>')
    return (f'<div id="controls"><input id="filter" type="search" '
            f'placeholder="filter: SMILES, value, message">{choice} '
            f'<span id="shown"></span></div>'
            f'<table id="{TABLE_ID}"><thead><tr>{head}</tr></thead><tbody>'
            + '\n'.join(lines) + '</tbody></table>')


def _attr(name: str, value: Optional[str]) -> str:
    return '' if value is None else f' {name}="{esc(value)}"'


def render_page(title: str, sections: Sequence[tuple[str, str]],
                intro: str = '') -> str:
    r"""The whole page: :obj:`title` (escaped), :obj:`intro` (safe HTML)
    and each section as (heading, safe HTML), with the inline style and the
    table's script."""
    body = ''.join(f'<section><h2>{esc(heading)}</h2>{content}</section>'
                   for heading, content in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width">'
            f'<title>{esc(title)}</title><style>{_CSS}</style></head>'
            f'<body><h1>{esc(title)}</h1>{intro}{body}'
            f'<script>{_SCRIPT}</script></body></html>\n')
