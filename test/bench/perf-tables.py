#!/usr/bin/env python3
"""The tables of every run of test/bench/bench-orders.sh from the raw
results, and a check of the README's figures against them (python3,
standard library only).

  test/bench/perf-tables.py          prints, as Markdown, one table per run
                                     of test/bench/bench-orders.sh (the
                                     files of test/results/ whose tables
                                     read "ORDER BY ... native ms gpusort
                                     ms ratio")
  test/bench/perf-tables.py --check  exits 1 when a figure of the README is
                                     in none of the result files that its
                                     table row, paragraph or list item
                                     names (a time written "29.7 s" may be
                                     the files' 29714 ms, rounded half up),
                                     or a result file is named more than
                                     once in the README
"""
import decimal
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
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
# a time in seconds, "29.7 s": the files give it in ms (29714)
SECONDS = re.compile(r'(?<![\w.])(\d+\.\d+) s\b')
CITED = re.compile(r'test/results/((?:plots/)?[\w.+-]+)')


def readme_blocks(text):
    """The README's table rows, one each, and its paragraphs and list items,
    outside code blocks."""
    blocks, current, fenced = [], [], False

    def flush():
        if current:
            blocks.append(' '.join(current))
            current.clear()

    for line in text.splitlines():
        if line.startswith('```'):
            flush()
            fenced = not fenced
        elif fenced:
            continue
        elif line.startswith('|'):
            flush()
            blocks.append(line)
        elif not line.strip():
            flush()
        else:
            if re.match(r'\s*(- |\d+\. )', line):
                flush()
            current.append(line)
    flush()
    return blocks


def check_readme():
    """Every figure of a README table row, paragraph or list item that names
    results files is in one of those files (a time written "29.7 s" may be
    the files' 29714 ms); each results file is named once in the README."""
    with open(README, encoding='utf-8') as f:
        text = f.read()
    ok = True
    names = CITED.findall(text)
    for name in sorted(set(names)):
        if names.count(name) > 1:
            print('README.md: %s is named %d times' % (name, names.count(name)))
            ok = False
    for block in readme_blocks(text):
        files = CITED.findall(block)
        if not files:
            continue
        # the figures: numbers outside code, link targets and the file names
        bare = CITED.sub('', re.sub(r'`[^`]*`', '', block))
        seconds = set(SECONDS.findall(bare))
        contents = ''
        for name in files:
            path = os.path.join(RESULTS, name)
            if not os.path.isfile(path):
                print('README.md: %s is not in test/results/' % name)
                ok = False
                continue
            if name.startswith('plots/'):
                continue
            with open(path, encoding='utf-8') as f:
                contents += f.read()
        ms = [decimal.Decimal(v)
              for v in re.findall(r'(?<![\w.])\d+(?:\.\d+)?(?![\w.])', contents)]
        for num in NUMBER.findall(bare):
            if num.rstrip('x') in ('1', '2', '3', '4', '5', '6', '7', '8', '9', '10'):
                continue
            bare_num = num.replace(',', '')
            if any(re.search(r'(?<![\d.])%s(?![\d])' % re.escape(n), contents)
                   for n in (num, bare_num, bare_num.rstrip('x'))):
                continue
            if num in seconds and rounds_to(decimal.Decimal(num), ms):
                continue
            print('README.md: %s is in none of %s' % (num, ', '.join(files)))
            ok = False
    return ok


def rounds_to(seconds, ms):
    """Is a time of ms, in seconds, rounded half up to the decimals of
    seconds, equal to it?"""
    step = decimal.Decimal(1).scaleb(seconds.as_tuple().exponent)
    return any((v / 1000).quantize(step, rounding=decimal.ROUND_HALF_UP) == seconds
               for v in ms)


if __name__ == '__main__':
    if '--check' in sys.argv[1:]:
        sys.exit(0 if check_readme() else 1)
    sys.stdout.write(generated())
