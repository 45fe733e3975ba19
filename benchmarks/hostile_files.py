"""Peak memory of a process reading a hostile model file, beside the same reader on a clean file (issue: files from
strangers; docs/failure-behaviour.md). Each case runs in a fresh process that reads one file with the library's
reader and reports its outcome (the first words of its one line, or "loaded") and its peak RSS (ru_maxrss).

    python benchmarks/hostile_files.py            # prints the markdown table of docs/failure-behaviour.md
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.hostile_files import torch_file  # noqa: E402

WEIGHTS = os.path.join(ROOT, "tests", "fixtures", "weights")
SPM = os.path.join(os.path.dirname(ROOT), "shared", "albert_30k_clean", "30k-clean.model")
READ = {
    "torch": "from albert.weights import torch_pickle; torch_pickle.load(PATH)",
    "h5": "from albert.weights.keras_hub import read_h5; read_h5(PATH)",
    "pretrained": "import albert; albert.AlbertEncoder.from_pretrained(PATH)",
    "spm": "from albert.text.tokenization import load_sentencepiece; load_sentencepiece(PATH)",
    "archive": "from albert.hub.archives import unpack; unpack(PATH, PATH + '.unpacked')",
}
CHILD = """
import resource, sys
PATH = sys.argv[1]
try:
    {read}
    outcome = "loaded"
except Exception as e:
    outcome = type(e).__name__ + ": " + str(e).split(": ", 1)[-1][:70]
print(outcome)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def cases(directory: str) -> list:
    """(reader, case, path) for each clean file and its hostile twin."""
    import h5py
    import numpy as np

    out = [("torch", "clean: hf_classifier_pytorch/pytorch_model.bin",
            os.path.join(WEIGHTS, "hf_classifier_pytorch", "pytorch_model.bin"))]
    floats = np.arange(4, dtype="<f4").tobytes()
    out.append(("torch", "4,096 floats claimed over a storage of 1",
                torch_file(os.path.join(directory, "bounds.bin"), {"w": ("0", 0, (4096,), (1,))},
                           {"0": (1, floats[:4])})))
    out.append(("torch", "50,000,000 x 50,000,000 claimed (stride 0)",
                torch_file(os.path.join(directory, "huge.bin"), {"w": ("0", 0, (50_000_000,) * 2, (0, 0))},
                           {"0": (4, floats)})))
    clean_h5 = os.path.join(WEIGHTS, "kh_backbone", "model.weights.h5")
    out.append(("h5", "clean: kh_backbone/model.weights.h5", clean_h5))
    bomb = os.path.join(directory, "bomb.weights.h5")
    with h5py.File(clean_h5, "r") as old, h5py.File(bomb, "w") as new:
        def copy(name, obj):
            if isinstance(obj, h5py.Dataset):
                if name == "layers/reversible_embedding/vars/0":
                    new.create_dataset(name, shape=(12000, 100000), dtype="<f4", chunks=(100, 1000))
                else:
                    new.create_dataset(name, data=obj[()])
        old.visititems(copy)
    out.append(("h5", "embedding declares [12000, 100000] (4.8 GB), never written", bomb))
    out.append(("pretrained", "clean: hf_classifier (Hugging Face directory)", os.path.join(WEIGHTS, "hf_classifier")))
    big = os.path.join(directory, "config_bomb")
    shutil.copytree(os.path.join(WEIGHTS, "hf_classifier"), big)
    config = json.load(open(os.path.join(big, "config.json")))
    config["intermediate_size"] = 2_000_000_000
    json.dump(config, open(os.path.join(big, "config.json"), "w"))
    out.append(("pretrained", "config.json: intermediate_size 2,000,000,000", big))
    out.append(("spm", "clean: 30k-clean.model", SPM))
    cut = os.path.join(directory, "cut.model")
    with open(SPM, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:100_000])
    out.append(("spm", "30k-clean.model cut at 100,000 bytes", cut))
    import io
    import tarfile

    for name, size in (("clean: 1 MiB of weights", 1 << 20), ("256 MiB of zeros in a small .tar.gz", 256 << 20)):
        path = os.path.join(directory, f"{size}.tar.gz")
        rng = np.random.default_rng(0)
        data = rng.bytes(size) if size == 1 << 20 else bytes(size)
        with tarfile.open(path, "w:gz") as tar:
            info = tarfile.TarInfo("model/weights.bin")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        out.append(("archive", name, path))
    return out


def measure(reader: str, path: str) -> tuple:
    code = CHILD.format(read=READ[reader])
    result = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3"))
    lines = result.stdout.strip().splitlines()
    if result.returncode or len(lines) < 2:
        return f"crashed (exit {result.returncode})", None
    return lines[-2], int(lines[-1]) / 1024


def main():
    print("| reader | file | outcome | peak RSS (MiB) |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for reader, case, path in cases(directory):
            outcome, peak = measure(reader, path)
            print(f"| {reader} | {case} | {outcome} | {peak:,.0f} |" if peak else f"| {reader} | {case} | {outcome} | |",
                  flush=True)


if __name__ == "__main__":
    main()
