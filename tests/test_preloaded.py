"""A script run by ``tests/preloaded.py`` sees what ``python SCRIPT ARGS`` would give it, and a
forked ``fincap`` command behaves as a started program."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
from multiprocessing import forkserver
from pathlib import Path

import psutil
import pytest

from tests.preloaded import ScriptTimedOut, run_script, start_fincap

SCRIPT = textwrap.dedent(
    """
    import atexit, os, sys
    from pathlib import Path

    import helper_beside  # the script's folder is first on sys.path

    atexit.register(lambda: Path("atexit-ran").write_text("yes"))
    print(__name__, sys.argv[1:], Path.cwd().name, os.environ.get("PROBE"), helper_beside.VALUE)
    print("to stderr", file=sys.stderr)
    sys.exit(int(sys.argv[1]))
    """
)


def test_a_script_runs_as_python_would_run_it(tmp_path: Path) -> None:
    (tmp_path / "helper_beside.py").write_text("VALUE = 42\n")
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    work = tmp_path / "work"
    work.mkdir()
    ran = run_script(script, ["3", "--flag"], work, {"PROBE": "seen"}, 120)
    assert ran.returncode == 3
    assert ran.stdout == "__main__ ['3', '--flag'] work seen 42\n"
    assert ran.stderr == "to stderr\n"
    assert (work / "atexit-ran").read_text() == "yes"


def test_an_exception_fails_the_script_with_its_traceback(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("from json import no_such_name\n")
    ran = run_script(script, [], tmp_path, {}, 120)
    assert ran.returncode == 1
    assert "ImportError" in ran.stderr and "no_such_name" in ran.stderr


def hang_past_the_limit(tmp_path: Path, lines: str) -> None:
    """Run a script of ``lines`` that then says "started" and sleeps, until its 5 s limit."""
    script = tmp_path / "hangs.py"
    script.write_text(f"import time\n{lines}print('started', flush=True)\ntime.sleep(600)\n")
    with pytest.raises(ScriptTimedOut) as late:
        run_script(script, [], tmp_path, dict(os.environ), 5)
    assert late.value.stdout == "started\n", late.value.stderr


def gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"


def test_past_its_limit_a_script_is_killed_with_what_it_started(tmp_path: Path) -> None:
    hang_past_the_limit(
        tmp_path,
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '600'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n",
    )
    assert gone(int((tmp_path / "child.pid").read_text())), "the script's child outlived it"


def test_a_forked_fincap_command_answers_as_a_started_program(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text("earlier line\n")
    done = start_fincap(["--help"], dict(os.environ), log)
    assert done.wait(timeout=120) == 0 and done.returncode == 0
    text = log.read_text()
    assert text.startswith("earlier line\n") and "serve" in text  # appended, the help printed

    # A store that does not answer: the worker gives up after 2 s, with its status and message.
    unreachable = {**os.environ, "MONGODB_URI": "mongodb://127.0.0.1:9/x"}
    worker = start_fincap(["worker"], unreachable, log)
    with pytest.raises(subprocess.TimeoutExpired):
        worker.wait(timeout=0)
    assert worker.poll() is None
    assert worker.wait(timeout=120) == 1
    assert "does not answer" in log.read_text()
    worker.send_signal(signal.SIGTERM)  # gone: nothing sent, no error (as Popen)


def test_a_scripts_fincap_is_forked_by_the_same_server_and_killed_with_the_script(
    tmp_path: Path,
) -> None:
    # What a bench starts comes from the server the bench itself came from (the service
    # imported: no server of the script's own), and stays in the script's process group.
    hang_past_the_limit(
        tmp_path,
        "import os\n"
        "from pathlib import Path\n"
        "import psutil\n"
        "from tests.live import free_port\n"
        "from tests.preloaded import start_fincap\n"
        "env = {**os.environ, 'FINCAP_DATA_DIR': str(Path('data').resolve())}\n"
        "served = start_fincap(['serve', '--port', str(free_port())], env, Path('serve.log'))\n"
        "Path('serve.pid').write_text(f'{served.pid} {psutil.Process(served.pid).ppid()}')\n",
    )
    served, parent = map(int, (tmp_path / "serve.pid").read_text().split())
    assert parent == vars(forkserver._forkserver)["_forkserver_pid"]
    assert gone(served), "the script's fincap serve outlived it"
