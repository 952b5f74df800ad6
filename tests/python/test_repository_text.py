"""The text a reader meets (README, docs, comments in the code) describes the product as it is: no results folders,
no session or call numbers, no dates as provenance, no documents outside the repository. History lives in git and
CHANGELOG.md; measured figures in docs/performance.md and the reports under bench/reports/."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Where the reader's text lives; bench/reports (whose JSON names commits and dates on purpose), tests and the
# CHANGELOG are left out.
PLACES = ('README.md', 'docs', 'src', 'include', 'device', 'tools', 'python', 'scripts')
SUFFIXES = {'.md', '.cpp', '.hpp', '.cuh', '.cu', '.py', '.h', ''}
RULES = {
    'a results folder': re.compile(r'bench/results'),
    'a session number': re.compile(r'\b[Ss]ession[ -]\d+'),
    'a date as provenance': re.compile(r'\b20\d\d-[01]\d-[0-3]\d(?!T\d)'),  # ISO timestamps in format examples pass
    'a document outside the repository': re.compile(r'anchors/h200|SPEC\.md|\bseed 00\d|\.\./shared/'),
}


def texts():
    for place in PLACES:
        path = ROOT / place
        files = [path] if path.is_file() else sorted(p for p in path.rglob('*') if p.is_file())
        for f in files:
            if f.suffix in SUFFIXES and '__pycache__' not in f.parts and not f.name.startswith('_C.'):
                yield f


def test_the_rules_catch_what_they_name():
    assert RULES['a results folder'].search('see bench/results/2026-12-01-s7/')
    assert RULES['a session number'].search('(session 13)') and not RULES['a session number'].search('sessions')
    assert RULES['a date as provenance'].search('measured 2026-12-01') and \
        not RULES['a date as provenance'].search('e.g. 2026-11-30T12:00:00Z')
    assert RULES['a document outside the repository'].search('(anchors/h200.md)')


@pytest.mark.skipif(not (ROOT / 'docs').is_dir(), reason='needs the source tree (the installed package has no docs)')
def test_readme_docs_and_code_say_how_things_are_not_where_they_were_measured():
    found = []
    for f in texts():
        try:
            lines = f.read_text(encoding='utf-8').splitlines()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(lines, 1):
            for what, rule in RULES.items():
                if rule.search(line):
                    found.append(f'{f.relative_to(ROOT)}:{number}: {what}: {line.strip()[:120]}')
    assert not found, '\n'.join(found)
