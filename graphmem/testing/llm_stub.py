"""A local OpenAI-compatible server that replays scripted answers, for tests of the LLM paths
(graphmem's own, an application's, the consolidation benchmark's): no network, no key.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 and answers each request with what its
``respond`` callable returns for the request's JSON body: a dict (sent as the JSON content),
a string (sent as it is, so malformed JSON can be scripted), or ``(status, text)`` for an HTTP
error. Token usage is reported: prompt tokens counted as words and punctuation marks.

As a command, it replays a JSON file of answers (see :func:`scripted`) until stopped, so that
graphmem's LLM paths can be tried without a hosted LLM::

    python -m graphmem.testing.llm_stub --answers answers.json --port 8399
    GRAPHMEM_LLM=openai-compatible:stub GRAPHMEM_LLM_BASE_URL=http://127.0.0.1:8399/v1 \
        graphmem consolidate --force --summaries
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from graphmem._text import rough_tokens

Reply = dict[str, Any] | str | tuple[int, str]
Responder = Callable[[dict[str, Any]], Reply]


def count_tokens(text: str) -> int:
    """Words and punctuation marks: close to what a BPE tokenizer bills for English."""
    return rough_tokens(text)


def prompt_of(body: dict[str, Any]) -> str:
    """The request's messages as one text."""
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))


def replay(answers: Iterable[Reply]) -> Responder:
    """A responder that gives ``answers`` in order, then fails with HTTP 500."""
    queue = list(answers)
    lock = threading.Lock()

    def respond(_: dict[str, Any]) -> Reply:
        with lock:
            return queue.pop(0) if queue else (500, "no scripted answer left")

    return respond


def scripted(entries: Sequence[Any]) -> Responder:
    """A responder for a list of answers as a JSON file holds them: an entry
    ``{"when": TEXT, "answer": ANSWER}`` answers every request whose messages contain TEXT
    (the first such entry wins; ``""`` matches every request); any other entry is an answer
    given once, in order, to a request no ``when`` matched. An answer is a JSON object (sent
    as the JSON content) or a string (sent as it is). With nothing left: HTTP 500."""
    rules: list[tuple[str, Reply]] = []
    once: list[Reply] = []
    for entry in entries:
        if isinstance(entry, dict) and set(entry) == {"when", "answer"}:
            rules.append((str(entry["when"]), entry["answer"]))
        elif isinstance(entry, dict | str):
            once.append(entry)
        else:
            raise ValueError(f"an answer is a JSON object or a string, not {entry!r}")
    queued = replay(once)

    def respond(body: dict[str, Any]) -> Reply:
        prompt = prompt_of(body)
        for when, answer in rules:
            if when in prompt:
                return answer
        return queued(body)

    return respond


class StubLLMServer:
    """The server, started on ``port`` of 127.0.0.1 (a free one by default) as a context
    manager."""

    def __init__(self, respond: Responder, *, model: str = "stub-model", port: int = 0) -> None:
        self.respond = respond
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.prompt_tokens = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                stub.requests.append(body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = stub.respond(body)
                if isinstance(reply, tuple):
                    status, text = reply
                    self._send(status, {"error": {"message": text, "type": "stub_error"}})
                    return
                content = reply if isinstance(reply, str) else json.dumps(reply)
                prompt = count_tokens(prompt_of(body))
                stub.prompt_tokens += prompt
                completion = count_tokens(content)
                self._send(
                    200,
                    {
                        "id": f"stub-{len(stub.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", stub.model),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                        },
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> StubLLMServer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m graphmem.testing.llm_stub --answers FILE [--port N]``: serve the answers of
    FILE (a JSON list, see :func:`scripted`) until Ctrl-C or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m graphmem.testing.llm_stub",
        description="An OpenAI-compatible endpoint on 127.0.0.1 that replays scripted answers.",
    )
    parser.add_argument("--answers", required=True, type=Path, help="a JSON list of answers")
    parser.add_argument("--port", type=int, default=8399, help="the port (default 8399)")
    args = parser.parse_args(argv)
    try:
        entries = json.loads(args.answers.read_text(encoding="utf-8"))
        if not isinstance(entries, list):
            raise ValueError("the answers file must hold a JSON list")
        respond = scripted(entries)
    except (OSError, ValueError) as exc:
        parser.error(f"{args.answers}: {exc}")
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with StubLLMServer(respond, port=args.port) as stub:
        print(f"stub LLM at {stub.base_url} (model name: any; Ctrl-C stops it)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stopped.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
