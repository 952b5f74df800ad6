"""scripts/peer-bench (scripts/run-main's DeepGEMM comparison): what it refuses before building or installing
anything, each with a message naming what is wrong and exit status 2. Its GPU run is python -m deep_gemm.bench's."""
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'scripts' / 'peer-bench'


def run(*args, **env):
    return subprocess.run(['bash', str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60,
                          env={'PATH': '/usr/bin:/bin', **env})


def test_a_folder_without_deepgemm_is_refused(tmp_path):
    for folder in ('', tmp_path / 'missing', tmp_path):
        proc = run(folder) if folder != '' else run()
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("peer-bench: DEEPGEMM_DIR: expected a folder holding DeepGEMM's deep_gemm"), \
            proc.stderr


def test_an_interpreter_without_torch_is_refused(tmp_path):
    (tmp_path / 'deep_gemm').mkdir()
    (tmp_path / 'deep_gemm' / '__init__.py').write_text('')
    proc = run(tmp_path, PYTHON='/bin/false')
    assert proc.returncode == 2
    assert proc.stderr.startswith('peer-bench: PYTHON: expected an interpreter with torch'), proc.stderr
