"""No network, for every source a model comes from: a refused connection, a reset one, a server that never answers
and a host name that does not resolve each end in one AlbertError line naming the reference, the host and the ways
out (connect; ALBERT_OFFLINE=1 only when the cache holds the model; a local model), in Python and on a command line
(exit 2, nothing written, in seconds). Every server is on 127.0.0.1 (tests/hub_server.py); DNS fails at the resolver
(socket.getaddrinfo), so no query leaves the machine."""

import os
import socket
import subprocess
import sys
import time

import pytest

from tests.helpers import ROOT, WEIGHT_FIXTURES
from tests.hub_server import Failing, Hub, refusing_port

ENDPOINTS = ("HF_ENDPOINT", "ALBERT_RELEASE_ENDPOINT", "ALBERT_TFHUB_ENDPOINT", "ALBERT_KAGGLE_ENDPOINT")
WAYS_OUT = "connect to the network and run again, or pass a local model directory, archive or file"
NO_HOST = "models.invalid"
SOURCES = [  # (source, reference, as the line names it, the cache it would be in: under tmp_path)
    ("Hugging Face id", "albert/albert-base-v2", "albert/albert-base-v2", "the Hugging Face cache ({tmp}/hf)"),
    ("release name", "albert_base_v2",
     "albert_base_v2 (https://storage.googleapis.com/albert_models/albert_base_v2.tar.gz)", "the cache ({tmp}/albert/urls)"),
    ("TF Hub name", "albert_en_base", "albert_en_base (https://tfhub.dev/tensorflow/albert_en_base/3)",
     "the cache ({tmp}/albert/tfhub)"),
    ("Kaggle name", "albert_base_en_uncased",
     "albert_base_en_uncased (kaggle://keras/albert/keras/albert_base_en_uncased/5)",
     "the cache ({tmp}/albert/kaggle/keras/albert/keras/albert_base_en_uncased)"),
    ("plain URL", "{url}/models/mine.tar.gz", "{url}/models/mine.tar.gz", "the cache ({tmp}/albert/urls)"),
]
FAILURES = [  # (failure, what the line says went wrong)
    ("refused", "connection refused"),
    ("reset", "the connection was reset"),
    ("timeout", "no answer in 0.5 s"),
    ("DNS", "DNS: the host name does not resolve"),
]


@pytest.fixture()
def failing(request, tmp_path, monkeypatch):
    """Every hub pointed at a server that fails one way; returns its URL."""
    server = None
    if request.param == "refused":
        url = f"http://127.0.0.1:{refusing_port()}"
    elif request.param == "DNS":
        url, real = f"http://{NO_HOST}", socket.getaddrinfo

        def getaddrinfo(host, *args, **kwargs):
            if host == NO_HOST:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return real(host, *args, **kwargs)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    else:
        server = Failing("silent" if request.param == "timeout" else "reset")
        url = server.url
    for name in ENDPOINTS:
        monkeypatch.setenv(name, url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("ALBERT_CACHE", str(tmp_path / "albert"))
    monkeypatch.setenv("ALBERT_DOWNLOAD_TIMEOUT", "0.5")
    monkeypatch.setenv("ALBERT_NOPROGRESS", "1")
    for name in ("ALBERT_OFFLINE", "HF_HUB_OFFLINE", "TFHUB_CACHE_DIR", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    yield url
    if server:
        server.stop()


def files_in(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, names in os.walk(folder) for f in names
                  if not f.endswith(".lock"))


@pytest.mark.parametrize("failing,why", FAILURES, ids=[f[0] for f in FAILURES], indirect=["failing"])
@pytest.mark.parametrize("source,reference,shown,cache", SOURCES, ids=[s[0] for s in SOURCES])
def test_each_source_and_failure_is_one_line_naming_the_model_the_host_and_the_ways_out(
        failing, why, source, reference, shown, cache, tmp_path):
    from albert.ground.errors import AlbertError
    from albert.hub.resolve import resolve

    host = failing[len("http://"):]
    started = time.monotonic()
    with pytest.raises(AlbertError) as raised:
        resolve(reference.format(url=failing))
    seconds = time.monotonic() - started
    where = cache.format(tmp=tmp_path)
    assert str(raised.value) == (f"{shown.format(url=failing)}: cannot be downloaded from {host} ({why}); {WAYS_OUT}; "
                                 f"ALBERT_OFFLINE=1 cannot help: it is not in {where}")
    assert seconds < 0.5 + 5, seconds  # one timeout at most, no retries
    assert files_in(tmp_path) == []


@pytest.mark.parametrize("failing", ["refused"], indirect=True)
def test_from_pretrained_with_no_network_is_one_albert_error(failing, tmp_path):
    import albert

    with pytest.raises(albert.AlbertError) as raised:
        albert.AlbertClassifier.from_pretrained("albert/albert-base-v2")
    assert str(raised.value) == (f"albert/albert-base-v2: cannot be downloaded from {failing[len('http://'):]} "
                                 f"(connection refused); {WAYS_OUT}; ALBERT_OFFLINE=1 cannot help: it is not in the "
                                 f"Hugging Face cache ({tmp_path}/hf)")


def test_a_cached_repo_with_no_network_points_to_offline_mode_which_serves_it(tmp_path, monkeypatch):
    """Downloaded once; then the Hub refuses connections: the line offers ALBERT_OFFLINE=1 (the cache holds it),
    and with it the same snapshot comes back without a connection."""
    from albert.ground.errors import AlbertError
    from albert.hub.resolve import resolve

    hub = Hub(lifetime=120)
    hub.add_hf("albert/tiny-classifier", os.path.join(WEIGHT_FIXTURES, "hf_classifier"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    for name in ("ALBERT_OFFLINE", "HF_HUB_OFFLINE", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    try:
        online = resolve("albert/tiny-classifier")
    finally:
        hub.stop()
    port = refusing_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(AlbertError) as raised:
        resolve("albert/tiny-classifier")
    assert str(raised.value) == (f"albert/tiny-classifier: cannot be downloaded from 127.0.0.1:{port} (connection "
                                 f"refused); {WAYS_OUT}; or set ALBERT_OFFLINE=1 to use the copy in the Hugging Face "
                                 f"cache ({tmp_path}/hf)")
    monkeypatch.setenv("ALBERT_OFFLINE", "1")
    assert resolve("albert/tiny-classifier") == online


def test_the_timeout_setting_is_checked():
    env = dict(os.environ, PYTHONPATH=ROOT, ALBERT_DOWNLOAD_TIMEOUT="soon")
    script = ("from albert.hub import network\n"
              "try:\n    network.timeout()\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60).stdout
    assert out.strip() == ("AlbertError ALBERT_DOWNLOAD_TIMEOUT='soon': not a number of seconds; set it to a positive "
                           "number (default 60) or unset it")


COLA = "gj04\t1\t\tThe sailors rode the breeze clear of the rocks.\ngj04\t0\t*\tThe more we study verbs, the crazier.\n"
COMMANDS = [  # (case, failure, command line after the script, the reference as the line names it)
    ("run_classifier.py, Hugging Face id, refused", "refused",
     ["run_classifier.py", "--task_name=cola", "--do_train", "--data_dir={tmp}/glue", "--output_dir={tmp}/out",
      "--init_checkpoint=albert/albert-base-v2"], "albert/albert-base-v2", "the Hugging Face cache ({tmp}/hf)"),
    ("export_to_tfhub.py, release name, timeout", "timeout",
     ["export_to_tfhub.py", "--albert_directory=albert_base_v2", "--export_path={tmp}/out"],
     "albert_base_v2 (https://storage.googleapis.com/albert_models/albert_base_v2.tar.gz)",
     "the cache ({tmp}/albert/urls)"),
]


@pytest.mark.parametrize("case,kind,argv,shown,cache", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_command_with_no_network_exits_2_with_one_line_and_writes_nothing(case, kind, argv, shown, cache, tmp_path):
    server = Failing("silent") if kind == "timeout" else None
    url = server.url if server else f"http://127.0.0.1:{refusing_port()}"
    (tmp_path / "glue").mkdir()
    (tmp_path / "glue" / "train.tsv").write_text(COLA)
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", HF_HUB_CACHE=str(tmp_path / "hf"),
               ALBERT_CACHE=str(tmp_path / "albert"), ALBERT_DOWNLOAD_TIMEOUT="1", ALBERT_NOPROGRESS="1",
               **{name: url for name in ENDPOINTS})
    for name in ("ALBERT_OFFLINE", "HF_HUB_OFFLINE", "TFHUB_CACHE_DIR", "HF_TOKEN"):
        env.pop(name, None)
    script, *flags = argv
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, os.path.join(ROOT, script)] + [f.format(tmp=tmp_path) for f in flags],
                                capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    finally:
        if server:
            server.stop()
    seconds = time.monotonic() - started
    why = "no answer in 1 s" if kind == "timeout" else "connection refused"
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.strip().splitlines() == [
        f"{script}: error: {shown}: cannot be downloaded from {url[len('http://'):]} ({why}); {WAYS_OUT}; "
        f"ALBERT_OFFLINE=1 cannot help: it is not in {cache.format(tmp=tmp_path)}"], result.stderr[-3000:]
    assert files_in(tmp_path) == ["glue/train.tsv"]  # nothing written: no output folder, no cache entry
    assert not (tmp_path / "out").exists()
    print(f"{case}: exit {result.returncode} in {seconds:.1f} s")
    assert seconds < 30, seconds  # the interpreter's start and one 1 s timeout, not a minute of retries
