"""Ending signals that unwind instead of killing, so that clean-up code runs."""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

#: Signals that end a run by default: a supervisor's stop, a timeout, a closed terminal.
_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class EndingSignals:
    """While active, SIGTERM and SIGHUP raise :class:`SystemExit` (status 128 + the signal).

    Python's default for them ends the process on the spot, so ``finally`` blocks would not
    run: a throwaway server (in a session of its own) would outlive its run, with its data, and
    a re-embedding run would keep its claim until its lease ran out.
    Once :meth:`defer` is called (the clean-up has begun), a signal no longer interrupts; it
    ends the process when the clean-up is over. A signal the application already handles or
    ignores (``nohup``) is left alone, and so is every signal outside the main thread, where
    handlers cannot be set.

    With ``at_once=False`` a signal, Ctrl-C (SIGINT) included, only asks to stop: the run stops
    when it next calls :meth:`check`, between two transactions. An exception raised at any
    point could leave the database driver's connection half-read, and the clean-up that
    follows needs that driver. A second signal stops the run at once.
    """

    def __init__(self, *, at_once: bool = True) -> None:
        self._at_once = at_once
        self._previous: dict[signal.Signals, Any] = {}
        self._deferring = False
        self._raised = False
        self._pending: int | None = None

    def __enter__(self) -> EndingSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in _ENDING_SIGNALS:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    self._previous[signum] = signal.signal(signum, self._received)
            if not self._at_once and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._received)
        return self

    def _received(self, signum: int, _frame: FrameType | None) -> None:
        if self._pending is None:
            self._pending = signum
            if self._at_once and not self._deferring:
                self._raised = True
                raise SystemExit(128 + signum)
        elif not self._at_once and not self._deferring and not self._raised:
            self._raised = True  # asked twice: stop now
            raise SystemExit(128 + signum)

    def check(self) -> None:
        """Stops the run (:class:`SystemExit`, status 128 + the signal) if a signal asked it
        to: the point where an ``at_once=False`` run may stop."""
        if self._pending is not None and not self._raised and not self._deferring:
            self._raised = True
            raise SystemExit(128 + self._pending)

    def defer(self) -> None:
        self._deferring = True

    def __exit__(self, *_exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if self._pending is not None and not self._raised:
            raise SystemExit(128 + self._pending)
