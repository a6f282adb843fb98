"""The built-in default embedder (wordllama-l2-supercat) loads from the files in the wordllama wheel with the
network off: sockets and requests raise, HF_HUB_OFFLINE=1, in a fresh process (nothing loaded before). It gives
(n, 256) unit vectors in which a paraphrase scores above an unrelated text."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import json, socket, sys

def refuse(*a, **k):
    raise OSError("network is off in this test")

try:
    import requests
    requests.Session.request = refuse
except ImportError:
    pass
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

from benchwright.core.embeddings import builtin_embedder, DEFAULT_EMBEDDER_MODEL

e = builtin_embedder(DEFAULT_EMBEDDER_MODEL)
texts = ["How does Flask match an incoming URL to a view function?",
         "Which code in Flask maps a request URL onto the view that handles it?",
         "The recipe needs two eggs and a cup of sugar."]
v = e.embed(texts)
sims = (v @ v.T).tolist()
print(json.dumps({"shape": list(v.shape), "dtype": str(v.dtype), "norms": [float(x) for x in (v * v).sum(1)],
                  "sims": sims, "dims": e.dimensions, "half": list(builtin_embedder(DEFAULT_EMBEDDER_MODEL, 128).embed(texts[:1]).shape)}))
"""


def test_default_embedder_loads_offline_and_ranks_paraphrases_first(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["shape"] == [3, 256] and out["dtype"] == "float32" and out["dims"] == 256
    assert all(abs(n - 1.0) < 1e-5 for n in out["norms"])
    sims = out["sims"]
    assert sims[0][1] > sims[0][2] + 0.3 and sims[0][1] > sims[1][2] + 0.3
    assert out["half"] == [1, 128]  # Matryoshka truncation
    assert not (tmp_path / "hf").exists()  # nothing was downloaded into a cache
