"""The prediction report as a file: what it shows for ordinary and bad
inputs (empty, all failing, one atom, 300 atoms, HTML in the SMILES), read
back with Python's HTML parser; the top K and the sample against a sort done
here; the command line's --report. The page in a browser:
test_browser.py."""
import html.parser
import random
import subprocess
import sys

import pytest

from graphormer_sepnorm.report.prediction_report import (
    ReportMolecule, ReportOptions, molecules_from_csv,
    write_prediction_report)

from conftest import REPO
from report_helpers import counting_predictor  # noqa: F401

HOSTILE = ['<script>window.pwned=1</script>',
           '"><img src=x onerror="window.pwned=1">',
           "C'><svg onload=window.pwned=1>"]


class _Scan(html.parser.HTMLParser):
    """The elements, rows and handlers of a page."""
    def __init__(self):
        super().__init__()
        self.tags, self.rows, self.handlers, self._row = [], [], [], None
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith('on')]
        if tag == 'tr' and dict(attrs).get('data-group') is not None:
            self._row = dict(attrs)['data-group']
            self.rows.append([self._row, []])
        if tag == 'td' and self._row is not None:
            self.rows[-1][1].append('')
        if tag == 'script':
            self.scripts += 1

    def handle_data(self, data):
        if self._row is not None and self.rows[-1][1]:
            self.rows[-1][1][-1] += data

    def handle_endtag(self, tag):
        if tag == 'tr':
            self._row = None


def scan(path) -> _Scan:
    parser = _Scan()
    parser.feed(path.read_text(encoding='utf-8'))
    return parser


def molecules(smiles, values=None):
    return [ReportMolecule(k, s, [v], [], None if v is not None else 'no')
            for k, (s, v) in enumerate(zip(smiles, values or
                                           [1.0] * len(smiles)), 1)]


def test_top_and_sample_against_a_sort(tmp_path):
    rng = random.Random(0)
    values = [rng.gauss(0, 1) for _ in range(3000)]
    rows = molecules(['CCO'] * 3000, values)
    path = tmp_path / 'r.html'
    assert write_prediction_report(path, rows, ['prediction'],
                                   options=ReportOptions(top=7, sample=20,
                                                         steps=0)) == 3000
    page = scan(path)
    top = [cells for groups, cells in page.rows if 'top' in groups.split()]
    best = sorted(range(3000), key=lambda k: -values[k])[:7]
    # Cells: label, input row number (1-based), drawing, SMILES, value.
    assert [int(cells[1]) - 1 for cells in top] == best
    assert [cells[0].split(',')[0] for cells in top] == \
        [f'top #{k}' for k in range(1, 8)]
    sampled = [int(cells[1]) for groups, cells in page.rows
               if 'sample' in groups.split()]
    assert len(set(sampled)) == 20 and sampled == sorted(sampled)
    assert page.handlers == [] and page.scripts == 1


def test_ascending_ranks_lowest_first(tmp_path):
    rows = molecules(['C', 'CC', 'CCC', 'CCCC'], [3.0, -1.0, 2.0, -5.0])
    path = tmp_path / 'r.html'
    write_prediction_report(path, rows, ['p'], options=ReportOptions(
        top=2, sample=0, ascending=True, steps=0))
    text = path.read_text()
    assert text.index('>CCCC<') < text.index('>CC<')
    assert '>CCC<' not in text and '>C<' not in text


@pytest.mark.parametrize('smiles', [[], ['nonsense', 'C1CC']])
def test_empty_and_all_failing(tmp_path, smiles):
    path = tmp_path / 'r.html'
    rows = molecules(smiles, [None] * len(smiles))
    write_prediction_report(path, rows, ['prediction'])
    text = path.read_text()
    assert 'No molecule was predicted' in text
    assert f'{len(smiles)} molecules: 0 predicted, {len(smiles)} failed' \
        in text
    assert len(scan(path).rows) == len(smiles)


def test_bad_molecules_with_the_model(tmp_path, counting_predictor):  # noqa: F811,E501
    big = 'C' * 300
    smiles = ['N', big, 'CCN'] + HOSTILE
    predictions = counting_predictor.predict(smiles)
    rows = [ReportMolecule(k, p.smiles, [p.value], [], p.error)
            for k, p in enumerate(predictions, 1)]
    path = tmp_path / 'r.html'
    write_prediction_report(path, rows, ['prediction'], counting_predictor)
    page = scan(path)
    text = path.read_text()
    assert page.handlers == [] and page.scripts == 1
    for hostile in HOSTILE:
        assert hostile not in text
    assert 'window.pwned' in text  # shown, escaped
    # N and CCN predicted and drawn; the 300-atom one drawn among failures.
    assert page.tags.count('svg') >= 3 + 1
    assert 'more than the maximum of max_nodes=40' in text
    assert '6 molecules: 2 predicted, 4 failed' in text


def test_csv_round_trip(tmp_path):
    path = tmp_path / 'out.csv'
    path.write_text('smiles,logp,prediction,prediction_std,error\n'
                    'CCO,1.5,2.0,0.1,\nbad,,,,"no, really"\n')
    rows = list(molecules_from_csv(path, 'smiles', 1, with_std=True,
                                   target_column='logp'))
    assert rows[0] == ReportMolecule(1, 'CCO', [2.0], [0.1], None, 1.5)
    assert rows[1] == ReportMolecule(2, 'bad', [None], [None], 'no, really',
                                     None)


def test_cli_report(tmp_path, counting_predictor):  # noqa: F811
    from graphormer_sepnorm.checkpoint import save_model
    ckpt = tmp_path / 'model.safetensors'
    save_model(ckpt, counting_predictor.model, counting_predictor.card)
    data = tmp_path / 'in.csv'
    data.write_text('smiles,count\nCCN,1\nNCCN,2\nCCC,0\n"<b>x</b>",1\n')
    result = subprocess.run(
        [sys.executable, str(REPO / 'scripts' / 'predict.py'),
         '--checkpoint', str(ckpt), '--input', str(data), '--output',
         str(tmp_path / 'out.csv'), '--report', str(tmp_path / 'r.html'),
         '--report-target', 'count', '--num-workers', '0', '--quiet'],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / 'r.html').read_text()
    assert '4 molecules: 3 predicted, 1 failed' in text
    assert 'MAE' in text and 'measured count' in text
    assert '&lt;b&gt;x&lt;/b&gt;' in text
    refused = subprocess.run(
        [sys.executable, str(REPO / 'scripts' / 'predict.py'),
         '--checkpoint', str(ckpt), '--input', str(data), '--report',
         str(tmp_path / 'r.html')], capture_output=True, text=True)
    assert refused.returncode == 2
    assert 'add --output' in refused.stderr
