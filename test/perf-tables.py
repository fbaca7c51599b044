#!/usr/bin/env python3
"""The tables of every run of test/bench-orders.sh from the raw results, and
a check of the README's figures against them (python3, standard library
only).

  test/perf-tables.py            prints, as Markdown, one table per run of
                                 test/bench-orders.sh (the files of
                                 test/results/ whose tables read
                                 "ORDER BY ... native ms gpusort ms ratio")
  test/perf-tables.py --check    exits 1 when a figure of the README's
                                 "What to expect" section is in none of the
                                 result files its line names
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
RESULTS = os.path.join(ROOT, 'test', 'results')
README = os.path.join(ROOT, 'README.md')
ROW = re.compile(r'^(.*\S)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+x)\s*$')


def bench_orders_tables(path):
    """[(notes, rows)] of a bench-orders result file; rows: (order, native, gpusort, ratio)."""
    tables, notes, rows = [], [], None
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('ORDER BY ') and line.rstrip().endswith('ratio'):
                rows = []
                tables.append((notes, rows))
                notes = []
            elif line.startswith('#'):
                rows = None
                notes.append(line.lstrip('# ').rstrip())
            elif rows is not None and ROW.match(line):
                rows.append(ROW.match(line).groups())
            elif line.strip() == '':
                rows = None
    return [t for t in tables if t[1]]


def generated():
    out = []
    for name in sorted(os.listdir(RESULTS)):
        path = os.path.join(RESULTS, name)
        if not name.endswith('.txt') or not os.path.isfile(path):
            continue
        tables = bench_orders_tables(path)
        if not tables:
            continue
        out.append('#### `test/results/%s`' % name)
        out.append('')
        for notes, rows in tables:
            for n in notes:
                out.append('> ' + n.replace('|', '\\|') + '  ')
            if notes:
                out.append('')
            out.append('| ORDER BY | native ms | gpusort ms | ratio |')
            out.append('| --- | ---: | ---: | ---: |')
            for order, native, gpusort, ratio in rows:
                out.append('| `%s` | %s | %s | %s |' % (order.replace('|', '\\|'), native, gpusort, ratio))
            out.append('')
    return '\n'.join(out)


NUMBER = re.compile(r'(?<![\w.])\d[\d,]*(?:\.\d+)?x?(?![\w])')
CITED = re.compile(r'test/results/([\w.+-]+)')


def check_readme():
    """Every figure of a line of the README's What to expect section is in a file that the line names."""
    with open(README, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'^## What to expect\n(.*?)^## ', text, re.S | re.M)
    if not m:
        print('README.md: no "What to expect" section')
        return False
    ok = True
    for line in m.group(1).splitlines():
        files = CITED.findall(line)
        if not files or not line.startswith('|'):
            continue
        # the figures: numbers in the line outside code and outside the file names
        bare = CITED.sub('', re.sub(r'`[^`]*`', '', line))
        contents = ''
        for name in files:
            path = os.path.join(RESULTS, name)
            if not os.path.isfile(path):
                print('README.md: %s is not in test/results/' % name)
                ok = False
                continue
            with open(path, encoding='utf-8') as f:
                contents += f.read()
        for num in NUMBER.findall(bare):
            if num.rstrip('x') in ('1', '2', '3', '4', '5', '6', '7', '8', '9', '10'):
                continue
            bare_num = num.replace(',', '')
            if not any(n in contents for n in (num, bare_num, bare_num.rstrip('x'))):
                print('README.md: %s is in none of %s' % (num, ', '.join(files)))
                ok = False
    return ok


if __name__ == '__main__':
    if '--check' in sys.argv[1:]:
        sys.exit(0 if check_readme() else 1)
    sys.stdout.write(generated())
