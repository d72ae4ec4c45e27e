"""A local OpenAI-compatible server that replays scripted answers, for tests of the LLM paths
(graphmem's own, an application's, the consolidation benchmark's): no network, no key.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 and answers each request with what its
``respond`` callable returns for the request's JSON body: a dict (sent as the JSON content),
a string (sent as it is, so malformed JSON can be scripted), or ``(status, text)`` for an HTTP
error. Token usage is reported: prompt tokens counted as words and punctuation marks.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


class StubLLMServer:
    """The server, started on a free port of 127.0.0.1 as a context manager."""

    def __init__(self, respond: Responder, *, model: str = "stub-model") -> None:
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

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
