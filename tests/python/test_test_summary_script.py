"""scripts/test-summary: counts passed, failed and skipped ctest tests from its JUnit file and groups the skipped
ones by the reason their GTEST_SKIP gave."""
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / 'scripts' / 'test-summary'

JUNIT = '''<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="5" failures="1" skipped="3">
  <testcase name="A.Passes" status="run"><system-out>[       OK ] A.Passes (0 ms)</system-out></testcase>
  <testcase name="A.Fails" status="fail"><failure message="Failed"/><system-out>boom</system-out></testcase>
  <testcase name="G.One" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] G.One
/src/t.cpp:69: Skipped
no usable CUDA device (cudaErrorNoDevice)

[  SKIPPED ] G.One (0 ms)</system-out></testcase>
  <testcase name="G.Two" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>/src/t.cpp:74: Skipped
no usable CUDA device (cudaErrorNoDevice)
</system-out></testcase>
  <testcase name="R.Root" status="notrun"><skipped message="x"/><system-out>/src/j.cpp:218: Skipped
root ignores directory permissions
</system-out></testcase>
</testsuite>
'''


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_counts_and_groups_skip_reasons(tmp_path):
    path = tmp_path / 'ctest.xml'
    path.write_text(JUNIT)
    out = run(str(path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == 'ctest: 5 tests: 1 passed, 1 failed, 3 skipped'
    assert '  failed: A.Fails' in lines
    assert '  skipped 2: no usable CUDA device (cudaErrorNoDevice)' in lines
    assert '  skipped 1: root ignores directory permissions' in lines


def test_an_unreadable_file_is_a_usage_error_naming_it(tmp_path):
    bad = tmp_path / 'broken.xml'
    bad.write_text('<testsuite')
    out = run(str(bad))
    assert out.returncode == 2
    assert out.stderr.startswith('test-summary: JUNIT_XML:') and 'broken.xml' in out.stderr
    assert run(str(tmp_path / 'missing.xml')).returncode == 2
    assert run().returncode == 2
