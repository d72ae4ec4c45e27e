"""Erased words on the local server's disk: `graphmem forget --verify --physical` finds them in
the transaction log after a forget, and in the store's freed records through any number of
checkpoints while the server is quiet; in no file once later writes have reused the freed
records and the log has rotated past them and a checkpoint has pruned it (a server with a short
bound: 128k logs, a checkpoint a second)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from graphmem.client import Memory
from graphmem.embed.embedder import Embedder
from graphmem.servers.physical import find_words
from graphmem.servers.scratch import scratch_neo4j
from graphmem.settings import GraphmemSettings

SECRET = "The user's safe deposit box number is 4417-0091 at the Lisbon branch."
#: The store file of texts longer than a property record holds.
STRINGS = "databases/neo4j/neostore.propertystore.db.strings"
#: Seconds of quiet after the forget: five checkpoints of the test server.
QUIET_SECONDS = 5


def _verify(env: dict[str, str], erased: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "graphmem", "forget", "--verify", erased, "--text", SECRET,
         "--physical", "--ns", "physical", "--json"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_erased_words_leave_the_disk_within_the_bound(
    test_settings: GraphmemSettings, embedder: Embedder
) -> None:
    short_bound = test_settings.model_copy(
        update={"local_neo4j_tx_log_size": "128k", "local_neo4j_checkpoint_seconds": 1}
    )
    with scratch_neo4j(short_bound, heap="512m", pagecache="128m", say=lambda _: None) as (
        settings,
        target,
    ):
        env = {
            **os.environ,
            "GRAPHMEM_NEO4J_URI": "local",
            "GRAPHMEM_LOCAL_NEO4J_HOME": str(settings.local_neo4j_home),
            "GRAPHMEM_LOCAL_NEO4J_PORT": str(settings.local_neo4j_port),
        }
        data = settings.local_home / "data"
        with Memory(settings, target=target, embedder=embedder, ns="physical") as memory:
            fact = memory.remember(SECRET)
            memory.forget([fact.id], reason="privacy request")
            # The graph holds no trace of it; the transaction log still does (and the store
            # file, until a checkpoint writes the freed record).
            status, report = _verify(env, fact.id)
            assert status == 1, report
            assert report["findings"] == []
            kinds = {f["kind"] for f in report["physical"]}
            assert "transaction log" in kinds and kinds <= {"transaction log", "store"}, kinds
            # A quiet server: checkpoints come and go (one a second), and the freed records
            # keep their bytes, words included, in the store file.
            time.sleep(QUIET_SECONDS)
            status, report = _verify(env, fact.id)
            assert status == 1, report
            stores = [f for f in report["physical"] if f["kind"] == "store"]
            assert [f["path"] for f in stores] == [STRINGS], report["physical"]
            # Other writes fill the log past its rotation size; the next checkpoint prunes it.
            filler = [f"Unrelated note number {i}: " + "lorem ipsum " * 40 for i in range(300)]
            memory.remember_many(filler)
            deadline = time.monotonic() + 60
            while find_words(data, [SECRET]) and time.monotonic() < deadline:
                memory.remember(f"one more note at {time.monotonic()}")
                time.sleep(1)
        status, report = _verify(env, fact.id)
        assert status == 0, report
        assert report["physical"] == []
