"""scripts/check-format, which scripts/run-tests runs before building, fails on a C++ file that is not
formatted as .clang-format says and passes once the file is."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'scripts' / 'check-format'

pytestmark = pytest.mark.skipif(not SCRIPT.is_file() or shutil.which('clang-format') is None
                                or shutil.which('git') is None, reason='needs the source tree, clang-format and git')


def make_tree(tmp_path, source):
    tree = tmp_path / 'tree'
    (tree / 'scripts').mkdir(parents=True)
    shutil.copy(SCRIPT, tree / 'scripts' / 'check-format')
    shutil.copy(ROOT / '.clang-format', tree / '.clang-format')
    (tree / 'a.cpp').write_text(source)
    subprocess.run(['git', 'init', '-q'], cwd=tree, check=True)
    subprocess.run(['git', 'add', '.'], cwd=tree, check=True)
    return tree


def test_a_misformatted_file_fails_and_is_named(tmp_path):
    tree = make_tree(tmp_path, 'int  main( ) {return 0;}\n')
    run = subprocess.run(['bash', str(tree / 'scripts' / 'check-format')], capture_output=True, text=True)
    assert run.returncode == 1 and 'a.cpp' in run.stderr, run.stderr


def test_fix_then_check_passes(tmp_path):
    tree = make_tree(tmp_path, 'int  main( ) {return 0;}\n')
    subprocess.run(['bash', str(tree / 'scripts' / 'check-format'), '--fix'], check=True)
    run = subprocess.run(['bash', str(tree / 'scripts' / 'check-format')], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (tree / 'a.cpp').read_text() == 'int main() {\n  return 0;\n}\n'
