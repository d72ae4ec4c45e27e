"""graphmem's small LLM interface over graphiti-core's clients: one structured question at a
time, answered as a pydantic model, with a bounded retry and the provider's token counts.

graphiti-core's own ``generate_response`` retries for minutes (exponential waits of 5 to 120
seconds); graphmem calls the client's request method directly, with the SDK's retries off,
and retries an invalid or failed answer ``retries`` times after 0.5, 1, 2 ... seconds. The
calls run on one event loop in a thread of their own, so that :class:`~graphmem.client.Memory`
(sync) and :class:`~graphmem.client.AsyncMemory` (on any loop) share a client safely.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from graphmem import telemetry
from graphmem.errors import (
    LLMError,
    LLMRefusedError,
    LLMResponseError,
    LLMUnavailableError,
)
from graphmem.llm.providers import LLMSpec, build_client, spec_from_settings
from graphmem.models import describe_validation_error
from graphmem.models.consolidation import LLMUsage

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

#: Seconds before the first retry; each retry waits twice as long as the one before.
FIRST_WAIT = 0.5


@dataclass(frozen=True)
class Answer:
    """A model's answer: the parsed value, its raw text, the calls' usage, and the attempts."""

    value: Any
    raw: str
    usage: LLMUsage
    attempts: int


class _Invalid(Exception):
    """The answer was not what was asked for (retried)."""


class _Transient(Exception):
    """A failure that a retry may cure (a 5xx, a rate limit, an empty answer)."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error))
        self.error = error


#: The responses of the request under way in this task: each call of :meth:`LLM._ask` runs
#: as a task of its own, so concurrent calls never count each other's tokens.
_RESPONSES: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "graphmem_llm_responses", default=None
)


class _Recorder:
    """A proxy of an LLM SDK's client that keeps every response its awaited methods return
    (in the calling task's list), so that their token usage and raw text can be read
    whatever the provider."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if inspect.ismethod(value) or inspect.isfunction(value):

            def call(*args: Any, **kwargs: Any) -> Any:
                result = value(*args, **kwargs)
                if not inspect.isawaitable(result):
                    return result

                async def kept() -> Any:
                    response = await result
                    seen = _RESPONSES.get()
                    if seen is not None:
                        seen.append(response)
                    return response

                return kept()

            return call
        module = type(value).__module__ or ""
        if module.split(".")[0] in ("openai", "anthropic", "groq", "google"):
            return _Recorder(value)
        return value


def _usage(response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    if usage is not None:
        prompt = getattr(usage, "prompt_tokens", None) or getattr(usage, "input_tokens", 0)
        completion = getattr(usage, "completion_tokens", None) or getattr(usage, "output_tokens", 0)
        return int(prompt or 0), int(completion or 0)
    meta = getattr(response, "usage_metadata", None)
    if meta is not None:
        return int(meta.prompt_token_count or 0), int(meta.candidates_token_count or 0)
    return 0, 0


def _raw_text(response: Any) -> str | None:
    try:
        choices = getattr(response, "choices", None)
        if choices:
            return str(choices[0].message.content or "")
        for name in ("output_text", "text"):
            text = getattr(response, name, None)
            if isinstance(text, str):
                return text
        content = getattr(response, "content", None)
        if isinstance(content, list):
            return json.dumps(
                [getattr(b, "input", None) or getattr(b, "text", "") for b in content]
            )
    except Exception:
        return None
    return None


class _Loop:
    """An event loop in a daemon thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, daemon=True, name="graphmem-llm"
        )
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        """Stops the loop once the requests under way are cancelled (their callers get a
        CancelledError rather than wait forever)."""

        def stop() -> None:
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.call_soon(self.loop.stop)

        self.loop.call_soon_threadsafe(stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            self.loop.close()


class LLM:
    """One configured LLM: ``ask`` a structured question, get a pydantic answer."""

    def __init__(self, spec: LLMSpec, *, retries: int = 2, client: Any = None) -> None:
        self.spec = spec
        self.retries = retries
        self._client = client if client is not None else build_client(spec)
        sdk = getattr(self._client, "client", None)
        if sdk is not None:
            self._client.client = _Recorder(sdk)
        self._loop: _Loop | None = None
        self._lock = threading.Lock()
        #: Every call's usage since this LLM was made.
        self.usage = LLMUsage()

    @classmethod
    def from_settings(cls, settings: Any) -> LLM:
        """The LLM ``GRAPHMEM_LLM`` configures (graphiti-core imported with its telemetry as
        the settings say); LLMConfigurationError when none is, or its key is missing."""
        from graphmem.llm.graphiti import import_graphiti

        spec = spec_from_settings(settings)
        import_graphiti(settings)
        return cls(spec, retries=settings.llm_retries)

    @property
    def provider(self) -> str:
        return self.spec.provider

    @property
    def model(self) -> str:
        return self.spec.model

    def ask(
        self,
        system: str,
        user: str,
        answer: type[M],
        parse: Callable[[Any], T] | None = None,
    ) -> Answer:
        """Ask, wait, and return the answer (``parse`` checks it; default: ``answer``'s
        validation). Raises an :class:`~graphmem.errors.LLMError` subclass."""
        return self._thread().run(self._ask(system, user, answer, parse))

    async def ask_async(
        self,
        system: str,
        user: str,
        answer: type[M],
        parse: Callable[[Any], T] | None = None,
    ) -> Answer:
        return await self._thread().run_async(self._ask(system, user, answer, parse))

    def close(self) -> None:
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None:
            loop.close()

    def _thread(self) -> _Loop:
        with self._lock:
            if self._loop is None:
                self._loop = _Loop()
            return self._loop

    async def _ask(
        self, system: str, user: str, answer: type[M], parse: Callable[[Any], T] | None
    ) -> Answer:
        from graphiti_core.prompts.models import Message

        schema = json.dumps(answer.model_json_schema())
        note = ""
        usage = LLMUsage()
        last: LLMError | None = None
        raw = ""
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(FIRST_WAIT * 2 ** (attempt - 1))
            messages = [
                Message(role="system", content=system),
                Message(
                    role="user",
                    content=f"{user}\n\nAnswer with one JSON object that follows this JSON "
                    f"schema, reasoning first:\n{schema}{note}",
                ),
            ]
            responses: list[Any] = []
            _RESPONSES.set(responses)
            reported = (0, 0)
            try:
                data, reported = await self._request(messages, answer)
            except _Invalid as exc:
                last = LLMResponseError(
                    f"the {self.spec.label} answer was not valid JSON: {exc}",
                    provider=self.provider,
                )
                note = f"\n\nYour previous answer could not be read ({exc}); answer with JSON only."
                data = None
            except _Transient as exc:
                last, data = exc.error, None
            finally:
                for response in responses:
                    prompt, completion = _usage(response)
                    usage = usage + LLMUsage(
                        calls=1, prompt_tokens=prompt, completion_tokens=completion
                    )
                    raw = _raw_text(response) or raw
                if not responses:  # no SDK response seen: the client's own counts, if any
                    usage = usage + LLMUsage(
                        calls=1, prompt_tokens=reported[0], completion_tokens=reported[1]
                    )
            if data is None:
                continue
            raw = raw or json.dumps(data)
            try:
                value = parse(data) if parse is not None else answer.model_validate(data)
            except (ValidationError, ValueError, TypeError) as exc:
                why = (
                    describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
                )
                last = LLMResponseError(
                    f"the {self.spec.label} answer did not fit what was asked: {why}",
                    provider=self.provider,
                )
                note = f"\n\nYour previous answer did not fit the schema ({why})."
                continue
            self.usage = self.usage + usage
            return Answer(value=value, raw=raw, usage=usage, attempts=attempt + 1)
        self.usage = self.usage + usage
        assert last is not None
        if isinstance(last, LLMResponseError):
            last.raw = raw  # type: ignore[attr-defined]
            last.usage = usage  # type: ignore[attr-defined]
        raise last

    async def _request(
        self, messages: list[Any], answer: type[BaseModel]
    ) -> tuple[Any, tuple[int, int]]:
        """One request through graphiti-core's client, its failures mapped: the parsed
        answer, and the token counts the client returned with it (graphiti-core's OpenAI,
        Anthropic and Gemini clients answer ``(dict, input_tokens, output_tokens)``; the
        generic and Groq clients the dict alone)."""
        from graphiti_core.llm_client.config import ModelSize

        try:
            with telemetry.timed(
                "llm",
                "llm",
                **{"gen_ai.system": self.spec.provider, "gen_ai.request.model": self.spec.model},
            ):
                result = await asyncio.wait_for(
                    self._client._generate_response(
                        messages, answer, self.spec.max_tokens, ModelSize.medium
                    ),
                    timeout=self.spec.timeout,
                )
        except Exception as exc:
            raise _mapped(exc, self.spec) from exc
        if isinstance(result, tuple) and len(result) == 3:
            data, prompt, completion = result
            return data, (int(prompt or 0), int(completion or 0))
        return result, (0, 0)


def _mapped(exc: BaseException, spec: LLMSpec) -> BaseException:
    """An SDK or graphiti-core failure as graphmem's error, or a retry signal."""
    where = spec.base_url or spec.provider
    name = type(exc).__name__
    status = getattr(exc, "status_code", None) or getattr(
        getattr(exc, "response", None), "status_code", None
    )
    if isinstance(exc, json.JSONDecodeError) or name in ("EmptyResponseError",):
        return _Invalid(str(exc) or name)
    if isinstance(exc, TimeoutError | asyncio.TimeoutError) or "Timeout" in name:
        return _Transient(
            LLMUnavailableError(
                f"the {spec.label} LLM at {where} did not answer within {spec.timeout:g} s "
                "(GRAPHMEM_LLM_TIMEOUT)",
                provider=spec.provider,
            )
        )
    if "Connection" in name or isinstance(exc, ConnectionError | OSError):
        return LLMUnavailableError(
            f"cannot reach the {spec.label} LLM at {where}: {str(exc).rstrip('.')}. Is the "
            "server running, and is GRAPHMEM_LLM_BASE_URL right?",
            provider=spec.provider,
        )
    if name == "RateLimitError" or status == 429:
        return _Transient(
            LLMUnavailableError(
                f"the {spec.label} LLM kept refusing for its rate limit; try again later",
                provider=spec.provider,
            )
        )
    if isinstance(status, int) and status >= 500:
        return _Transient(
            LLMUnavailableError(
                f"the {spec.label} LLM at {where} failed with HTTP {status}: {exc}",
                provider=spec.provider,
            )
        )
    if status in (401, 403):
        return LLMRefusedError(
            f"the {spec.label} LLM refused the API key (HTTP {status}): check GRAPHMEM_LLM_API_KEY",
            provider=spec.provider,
        )
    if status == 404:
        return LLMRefusedError(
            f"the {spec.label} LLM at {where} has no model {spec.model!r} (HTTP 404): check "
            "GRAPHMEM_LLM",
            provider=spec.provider,
        )
    if isinstance(status, int) or name in ("RefusalError",):
        return LLMRefusedError(
            f"the {spec.label} LLM refused the request ({name}"
            f"{f', HTTP {status}' if status else ''}): {exc}",
            provider=spec.provider,
        )
    return LLMRefusedError(
        f"the {spec.label} LLM request failed ({name}): {exc}", provider=spec.provider
    )
