"""Model references served from 127.0.0.1 by the hubs' own protocols (tests/hub_server.py): every kind downloaded
once, loaded, equal to the same weights loaded from local files, then served offline from the cache; two
processes at once; a download killed half-way; every error one line; TF Hub's cache shared with tensorflow_hub.
The models are the real hub artifacts in ../shared/hub_artifacts (a TF1 Hub module the original's export_to_tfhub.py
wrote, a Model Garden TF2 encoder) and the Hugging Face / keras-hub fixtures. How each format reads:
tests/test_hub_formats.py."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.helpers import HUB_ARTIFACTS, ROOT, WEIGHT_FIXTURES
from tests.hub_server import Hub, tar_gz, tar_gz_member

TF1 = os.path.join(HUB_ARTIFACTS, "tf1_module")
TF2 = os.path.join(HUB_ARTIFACTS, "tf2_model_garden")
WEIGHTS = WEIGHT_FIXTURES
assert os.path.isdir(HUB_ARTIFACTS), f"{HUB_ARTIFACTS}: required (CI lays ../shared beside the clone); never skipped"


def release_dir(directory):
    """The TF1 module's weights laid out as a release tarball's folder (albert_config.json, 30k-clean.*,
    model.ckpt-best.*)."""
    directory.mkdir()
    for name in ("albert_config.json", "30k-clean.model", "30k-clean.vocab"):
        shutil.copyfile(os.path.join(TF1, "module", "assets", name), directory / name)
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(os.path.join(TF1, "module", "variables", "variables" + suffix),
                        directory / f"model.ckpt-best{suffix}")
    return directory


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    work = tmp_path_factory.mktemp("hub")
    server = Hub(lifetime=900)
    server.add_hf("albert/tiny-classifier", os.path.join(WEIGHTS, "hf_classifier"))
    server.add_hf("community/tiny-classifier-pt", os.path.join(WEIGHTS, "hf_classifier_pytorch"))
    server.add_hf("community/tiny-classifier-tf", os.path.join(WEIGHTS, "tf_h5_classifier"))
    server.gated.add("albert/gated")
    for handle, archive in (("google/albert_base/3", os.path.join(TF1, "module.tar.gz")),
                            ("tensorflow/albert_en_base/3", os.path.join(TF2, "encoder.tar.gz"))):
        with open(archive, "rb") as f:
            server.add_file(f"/{handle}?tf-hub-format=compressed", f.read())
    # tfhub.dev sends the original's handles to Kaggle Models, where the same archive lives.
    kaggle_model = "/models/google/albert/tensorFlow1/base/3?tf-hub-format=compressed"
    server.files[kaggle_model] = server.files["/google/albert_base/3?tf-hub-format=compressed"]
    server.redirects["/google/albert_large/3?tf-hub-format=compressed"] = server.url + kaggle_model
    release = tar_gz(str(release_dir(work / "albert_base")), top="albert_base")
    for name in ("albert_base_v2", "albert_large_v2", "slow", "albert_xlarge_v2", "big"):
        server.add_file(f"/albert_models/{name}.tar.gz", release)
    server.slow.update({"/albert_models/slow.tar.gz", "/albert_models/albert_xlarge_v2.tar.gz"})
    server.add_file("/keras/albert/keras/albert_base_en_uncased/5",  # not the API path: the API redirects nowhere
                    b"")
    server.add_file("/api/v1/models/keras/albert/keras/albert_base_en_uncased/5/download",
                    tar_gz(os.path.join(WEIGHTS, "kh_backbone")))
    # A Model Garden TF2 checkpoint in its tarball layout (albert_config.json, bert_model.ckpt, 30k-clean.model): the
    # object-based variables of the Model Garden encoder, named as Model Garden's tarballs name their checkpoint.
    garden = work / "albert_base_garden"
    garden.mkdir()
    for name in ("albert_config.json", "30k-clean.model"):
        shutil.copyfile(os.path.join(TF1, "module", "assets", name), garden / name)
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(os.path.join(TF2, "encoder", "variables", "variables" + suffix), garden / f"bert_model.ckpt{suffix}")
    server.add_file("/tf_model_garden/nlp/albert/albert_base.tar.gz", tar_gz(str(garden), top="albert_base"))
    server.add_file("/albert_models/cut.tar.gz", release)
    server.cut.add("/albert_models/cut.tar.gz")
    server.add_file("/albert_models/garbage.tar.gz", b"this is not an archive" * 100)
    server.add_file("/google/not_a_model/1?tf-hub-format=compressed", tar_gz(os.path.join(WEIGHTS, "hf_model")))
    server.add_file("/albert_models/escape.tar.gz", tar_gz_member("../outside.txt", data=b"hi"))
    server.add_file("/albert_models/link.tar.gz", tar_gz_member("model/spiece.model", link="/etc/passwd"))
    yield server, work
    server.stop()


@pytest.fixture()
def env(hub, tmp_path, monkeypatch):
    server, _ = hub
    values = {"HF_ENDPOINT": server.url, "HF_HUB_CACHE": str(tmp_path / "hf"), "ALBERT_CACHE": str(tmp_path / "albert"),
              "ALBERT_TFHUB_ENDPOINT": server.url, "ALBERT_RELEASE_ENDPOINT": server.url,
              "ALBERT_KAGGLE_ENDPOINT": server.url, "ALBERT_PROGRESS": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    for key in ("ALBERT_OFFLINE", "HF_HUB_OFFLINE", "TFHUB_CACHE_DIR", "HF_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    return values


def encoder_outputs(reference):
    import albert

    io_batch = np.load(os.path.join(TF1, "io_module.npz"))
    model = albert.AlbertEncoder.from_pretrained(reference)
    config = model.config
    length = min(16, config.max_position_embeddings)
    out = model({"input_ids": io_batch["input_ids"][:, :length] % config.vocab_size,
                 "input_mask": io_batch["input_mask"][:, :length],
                 "segment_ids": io_batch["segment_ids"][:, :length] % config.type_vocab_size})
    return np.asarray(out["sequence_output"]), np.asarray(out["pooled_output"]), model


REFERENCES = [  # (kind, reference, the same weights as local files)
    ("TF Hub TF1 handle", "https://tfhub.dev/google/albert_base/3", os.path.join(TF1, "module")),
    ("TF Hub TF2 handle", "https://tfhub.dev/tensorflow/albert_en_base/3", os.path.join(TF2, "encoder")),
    ("TF Hub handle redirected to Kaggle", "https://tfhub.dev/google/albert_large/3", os.path.join(TF1, "module")),
    ("Kaggle Models URL", "https://www.kaggle.com/models/google/albert/tensorFlow1/base/3", os.path.join(TF1, "module")),
    ("tarball URL", "{url}/albert_models/albert_large_v2.tar.gz", os.path.join(TF1, "module")),
    ("short name", "albert_base_v2", os.path.join(TF1, "module")),
    ("Model Garden tarball URL", "{url}/tf_model_garden/nlp/albert/albert_base.tar.gz", os.path.join(TF2, "encoder")),
    ("Hugging Face id", "albert/tiny-classifier", os.path.join(WEIGHTS, "hf_classifier")),
    ("Hugging Face hf://", "hf://albert/tiny-classifier@main", os.path.join(WEIGHTS, "hf_classifier")),
    ("Hugging Face, pytorch_model.bin only", "community/tiny-classifier-pt", os.path.join(WEIGHTS, "hf_classifier")),
    ("Hugging Face, tf_model.h5 only", "community/tiny-classifier-tf", os.path.join(WEIGHTS, "tf_h5_classifier")),
    ("keras-hub preset", "albert_base_en_uncased", os.path.join(WEIGHTS, "kh_backbone")),
    ("archive", os.path.join(TF1, "module.tar.gz"), os.path.join(TF1, "module")),
    ("local path", os.path.join(TF2, "encoder"), os.path.join(TF2, "encoder")),
]


@pytest.mark.parametrize("kind,reference,local", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_every_reference_kind_downloads_once_loads_and_works_offline(hub, env, kind, reference, local, capfd,
                                                                     monkeypatch):
    server, _ = hub
    reference = reference.format(url=server.url)
    before = len(server.log)
    sequence, pooled, model = encoder_outputs(reference)
    downloads = [entry for entry in server.log[before:] if entry[0] == "GET" and "/api/models/" not in entry[1]
                 and "/api/agent" not in entry[1] and entry[1] not in server.redirects]
    expected_sequence, expected_pooled, _ = encoder_outputs(local)
    np.testing.assert_array_equal(sequence, expected_sequence)
    np.testing.assert_array_equal(pooled, expected_pooled)
    remote = kind not in ("archive", "local path")
    assert bool(downloads) == remote, downloads
    progress = capfd.readouterr().err
    if remote and "Hugging Face" not in kind:
        assert "/s, done" in progress
        assert len(downloads) == 1  # the progress bar's last line; one download
    print(f"{kind}: {reference} -> {len(model.load_report.loaded)} variables, {len(downloads)} download(s); "
          f"sequence_output equal to the local load")
    monkeypatch.setenv("ALBERT_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = len(server.log)
    offline_sequence, _, _ = encoder_outputs(reference)
    np.testing.assert_array_equal(offline_sequence, expected_sequence)
    assert server.log[before:] == []  # offline: nothing asked of the server


def fetch_in_process(reference, env_values, tmp_path, name):
    script = ("import sys, json, numpy as np, albert\n"
              "m = albert.AlbertEncoder.from_pretrained(sys.argv[1])\n"
              "print(json.dumps(float(np.asarray(m.embeddings.word_embeddings).sum())))\n")
    return subprocess.Popen([sys.executable, "-c", script, reference], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, **env_values, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"))


@pytest.mark.slow
def test_two_processes_download_a_name_once_and_both_load(hub, env):
    server, _ = hub
    before = server.count("/albert_models/albert_xlarge_v2.tar.gz")
    processes = [fetch_in_process("albert_xlarge_v2", env, None, i) for i in range(2)]
    results = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [r[1][-2000:] for r in results]
    assert results[0][0] == results[1][0]  # the same weights
    assert server.count("/albert_models/albert_xlarge_v2.tar.gz") - before == 1  # one download


def test_a_full_disk_is_one_line_and_leaves_nothing(hub, env, tmp_path):
    """The cache's file system fills up mid-download (a file size limit stands in for a full disk: the write fails
    the same way); the run ends in one line, and no partial file is left to trust."""
    server, _ = hub
    script = ("import resource, signal, sys\n"
              "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (50000, 50000))\n"
              "from albert.ground.errors import AlbertError\n"
              "from albert.hub.resolve import resolve\n"
              "try:\n    resolve(sys.argv[1])\nexcept AlbertError as e:\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", script, f"{server.url}/albert_models/big.tar.gz"],
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, **env, PYTHONPATH=ROOT))
    line = result.stdout.strip()
    assert line.startswith(f"{env['ALBERT_CACHE']}/urls: disk full while downloading {server.url}/albert_models/"
                           "big.tar.gz (File too large); free space or set ALBERT_CACHE to a larger disk"), result
    assert [f for _, _, files in os.walk(env["ALBERT_CACHE"]) for f in files if not f.endswith(".lock")] == []


@pytest.mark.slow
def test_a_download_killed_half_way_resumes(hub, env):
    server, _ = hub
    url = f"{server.url}/albert_models/slow.tar.gz"
    process = fetch_in_process(url, env, None, 0)
    part = None
    deadline = time.time() + 120
    while time.time() < deadline and part is None:
        for folder, _, files in os.walk(env["ALBERT_CACHE"]):
            part = next((os.path.join(folder, f) for f in files if f.endswith(".part")), None)
            if part and os.path.getsize(part) > 20000:
                break
            part = None
        time.sleep(0.05)
    assert part is not None, "no partial download seen"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    have = os.path.getsize(part)
    again = fetch_in_process(url, env, None, 1)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-2000:]
    assert not os.path.exists(part)
    ranged = [entry for entry in server.range_log if entry[0] == "/albert_models/slow.tar.gz"]
    assert ranged
    assert ranged[-1][1] == f"bytes={have}-"  # resumed where the killed run stopped


ERRORS = [
    ("unknown name", "albert_bse_v2", "albert_bse_v2: not a file or directory, and not a known model name (closest "
                                      "known names: albert_base_v2"),
    ("no such repo (404)", "albert/no-such-model", "albert/no-such-model: no such Hugging Face repo at {url} (HTTP 404)"),
    ("gated repo (401)", "albert/gated", "albert/gated: a gated or private Hugging Face repo (HTTP 401/403); accept its "
                                         "terms on the Hub and set HF_TOKEN"),
    ("no such file (404)", "{url}/albert_models/missing.tar.gz", "{url}/albert_models/missing.tar.gz: not found "
                                                                 "(HTTP 404)"),
    ("no network", "http://127.0.0.1:9/albert_models/x.tar.gz", "http://127.0.0.1:9/albert_models/x.tar.gz: cannot be "
                                                                "downloaded from 127.0.0.1:9 (connection refused)"),
    ("truncated download", "{url}/albert_models/cut.tar.gz", "{url}/albert_models/cut.tar.gz: the download "),
    ("corrupt archive", "{url}/albert_models/garbage.tar.gz", ": not a readable tar archive ("),
    ("no module at the URL", "{url}/google/not_a_model/1", "{url}/google/not_a_model/1: serves no TF Hub module"),
    ("member outside the archive", "{url}/albert_models/escape.tar.gz", "member ../outside.txt points outside the "
                                                                        "archive; refused, nothing extracted"),
    ("link in the archive", "{url}/albert_models/link.tar.gz", "member model/spiece.model is a link (/etc/passwd); "
                                                               "refused, nothing extracted"),
    ("offline, not cached", "albert_xxlarge_v1", "albert_xxlarge_v1 (https://storage.googleapis.com/albert_models/"
                                                 "albert_xxlarge_v1.tar.gz): not in the cache"),
    ("bad Kaggle handle", "kaggle://keras/albert", "kaggle://keras/albert: a Kaggle model handle is"),
]


@pytest.mark.parametrize("case,reference,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_one_line_and_leave_nothing_in_the_cache(hub, env, monkeypatch, case, reference, message):
    from albert.ground.errors import AlbertError
    from albert.hub.resolve import resolve

    server, _ = hub
    if case.startswith("offline"):
        monkeypatch.setenv("ALBERT_OFFLINE", "1")
    with pytest.raises(AlbertError) as raised:
        resolve(reference.format(url=server.url))
    text = str(raised.value)
    assert "\n" not in text and message.format(url=server.url) in text, text
    cache = env["ALBERT_CACHE"]
    # Left: at most the lock beside an entry and a .part to resume; no entry, no archive, no temporary folder.
    kept = [os.path.join(d, f) for d, _, files in os.walk(cache) for f in files if not f.endswith((".lock", ".part"))]
    kept += [os.path.join(cache, kind, entry) for kind in ("urls", "tfhub", "archives")
             for entry in (os.listdir(os.path.join(cache, kind)) if os.path.isdir(os.path.join(cache, kind)) else [])
             if not entry.endswith((".lock", ".part"))]
    assert kept == [], kept
    assert not os.path.exists(os.path.join(os.path.dirname(cache), "outside.txt"))


def test_cli_one_line_exit_2_for_a_reference_that_does_not_resolve(env, tmp_path):
    env_values = dict(os.environ, **env, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, os.path.join(ROOT, "export_to_tfhub.py"), "--albert_directory=albert_bse_v2",
                             f"--export_path={tmp_path}/out"], capture_output=True, text=True, env=env_values,
                            timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("export_to_tfhub.py: error: albert_bse_v2: not a file")
    assert not (tmp_path / "out").exists()


def test_tfhub_cache_dir_is_shared_with_tensorflow_hub(tmp_path):
    """With TFHUB_CACHE_DIR set, a TF Hub handle lands where tensorflow_hub looks for it: tensorflow_hub's own
    resolver then finds the module there (it could not download it: tfhub.dev cannot be reached from here)."""
    server = Hub(lifetime=300)
    with open(os.path.join(TF2, "encoder.tar.gz"), "rb") as f:
        server.add_file("/tensorflow/albert_en_base/3?tf-hub-format=compressed", f.read())
    script = ("import json\n"
              "from albert.hub.resolve import resolve\n"
              "ours = resolve('https://tfhub.dev/tensorflow/albert_en_base/3')\n"
              "import tensorflow_hub\n"
              "theirs = tensorflow_hub.resolve('https://tfhub.dev/tensorflow/albert_en_base/3')\n"
              "print(json.dumps({'ours': ours, 'theirs': theirs}))\n")
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", TFHUB_CACHE_DIR=str(tmp_path / "tfhub"),
               ALBERT_CACHE=str(tmp_path / "albert"), ALBERT_TFHUB_ENDPOINT=server.url)
    try:
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["ours"] == got["theirs"]
    assert got["ours"].startswith(str(tmp_path / "tfhub"))
    assert os.path.isfile(got["ours"] + ".descriptor")


def test_the_model_names_are_one_literal_table_and_the_docs_list_it():
    """44 names, each written once in albert/hub/names.py (a maintainer greps `albert_base_v2` and finds its row),
    and docs/weights.md holds exactly that table."""
    from albert.hub import names

    assert len(names.TABLE) == len(names.NAMES) == 44  # 4 sizes x (2 tarballs, zh, 4 TF1 Hub, TF2, keras-hub, 2 HF)
    with open(os.path.join(ROOT, "albert", "hub", "names.py"), encoding="utf-8") as f:
        source = f.read()
    assert all(source.count(f'("{name}", ') == 1 for name in names.NAMES)
    assert names.NAMES["albert_base_v2"] == "https://storage.googleapis.com/albert_models/albert_base_v2.tar.gz"
    assert names.NAMES["albert_xxlarge"] == "https://tfhub.dev/google/albert_xxlarge/3"
    assert names.FAMILIES["albert_en_large"] == "model_garden"
    with open(os.path.join(ROOT, "docs", "weights.md"), encoding="utf-8") as f:
        assert names.markdown() in f.read()
