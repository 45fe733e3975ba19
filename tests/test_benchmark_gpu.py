"""benchmarks/gpu.sh on this machine without a GPU: it says the GPU rows are skipped, runs the CPU check through
the same code (the project's pretraining loop, fine-tuning on real SST-2 with buckets and fixed padding) and prints
the one table, so that the script a lent GPU machine runs first keeps working."""

import json
import os
import subprocess

import pytest

from tests.helpers import ROOT, shared_directory


@pytest.mark.slow
def test_gpu_sh_skips_the_gpu_rows_and_prints_the_table_on_a_cpu(tmp_path):
    result = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "gpu.sh"), "--precisions", "fp32",
                             "--xla", "off,on", "--json", str(tmp_path / "gpu.json"),
                             "--glue_dir", os.path.join(shared_directory(), "glue_real"),
                             "--spm_model_file", os.path.join(shared_directory(), "albert_30k_clean",
                                                              "30k-clean.model")],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("no GPU on this machine: the GPU rows are skipped.")
    header = lines.index("| device | job | T | batch | precision | XLA | rate | MFU | peak MiB |")
    table = [line.split(" | ") for line in lines[header + 2:]]
    assert [(row[1], row[4], row[5]) for row in table] == [
        ("pretraining step", "fp32", "off"), ("pretraining step", "fp32", "on"),
        ("fine-tuning SST-2, buckets", "fp32", "off"), ("fine-tuning SST-2, fixed", "fp32", "off")]
    assert all(row[0] == "| cpu-check" for row in table)
    assert "(no GPU); cpu-check; matmul ceilings: fp32 " in lines[header - 1]
    written = json.loads((tmp_path / "gpu.json").read_text())
    assert written["mode"] == "cpu-check"
    assert len(written["rows"]) == 4
    assert all(row["rate"].split()[0].replace(",", "").replace(".", "").isdigit() for row in written["rows"])
    assert all(row["peak_mib"] > 0 for row in written["rows"])
