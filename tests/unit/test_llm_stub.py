"""The stub LLM as a documented command: ``python -m graphmem.testing.llm_stub --answers FILE``
serves an OpenAI-compatible endpoint that replays the file's answers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphmem.testing.llm_stub import scripted
from tests.helpers import free_port


def _ask(prompt: str) -> dict[str, Any]:
    return {"model": "stub", "messages": [{"role": "user", "content": prompt}]}


def test_scripted_answers_match_by_text_then_come_once_in_order() -> None:
    respond = scripted(
        [
            {"when": "summary", "answer": {"summary": "S"}},
            {"first": 1},
            "second, as it is",
        ]
    )
    assert respond(_ask("write a summary")) == {"summary": "S"}
    assert respond(_ask("anything")) == {"first": 1}
    assert respond(_ask("a summary again")) == {"summary": "S"}
    assert respond(_ask("anything")) == "second, as it is"
    assert respond(_ask("anything"))[0] == 500  # type: ignore[index]
    with pytest.raises(ValueError, match="JSON object or a string"):
        scripted([3])


def test_the_command_serves_the_answers_of_a_file(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"when": "", "answer": {"operations": []}}]))
    port = free_port()
    command = [sys.executable, "-m", "graphmem.testing.llm_stub", "--answers", str(answers)]
    child = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().startswith(f"stub LLM at http://127.0.0.1:{port}/v1")
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        for _ in range(2):  # a "when" answer is given every time it matches
            answer = httpx.post(url, json=_ask("consolidate these"), timeout=30).json()
            assert json.loads(answer["choices"][0]["message"]["content"]) == {"operations": []}
    finally:
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 0
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    refused = subprocess.run([*command[:-1], str(bad)], capture_output=True, text=True)
    assert refused.returncode == 2 and "must hold a JSON list" in refused.stderr
