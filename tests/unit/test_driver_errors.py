"""Driver errors map to graphmem's error tree, saying what is known about the write."""

from __future__ import annotations

import time

import pytest
from neo4j.exceptions import (
    AuthError,
    ClientError,
    IncompleteCommit,
    Neo4jError,
    ResultFailedError,
    ServiceUnavailable,
    TransientError,
)

from graphmem.errors import (
    CommitUnknownError,
    DatabaseError,
    Neo4jUnavailableError,
    TransactionTimeoutError,
    TransientDatabaseError,
)
from graphmem.store.db import driver_errors, map_driver_error, passing_over


def _server_error(cls: type[Neo4jError], code: str, message: str) -> Neo4jError:
    return cls._hydrate_neo4j(code=code, message=message)


def test_a_lost_commit_says_the_write_may_have_been_applied() -> None:
    error = map_driver_error(IncompleteCommit("Failed to read from defunct connection"))
    assert isinstance(error, CommitUnknownError) and isinstance(error, Neo4jUnavailableError)
    assert "may or may not have been applied" in str(error)


def test_unavailable_and_refused_credentials_are_unavailable() -> None:
    unavailable = map_driver_error(ServiceUnavailable("no route"))
    assert type(unavailable) is Neo4jUnavailableError
    assert type(map_driver_error(AuthError("bad password"))) is Neo4jUnavailableError


def test_transient_errors_say_the_call_may_be_retried() -> None:
    deadlock = _server_error(
        TransientError, "Neo.TransientError.Transaction.DeadlockDetected", "deadlock"
    )
    error = map_driver_error(deadlock)
    assert isinstance(error, TransientDatabaseError) and isinstance(error, DatabaseError)
    assert "DeadlockDetected" in str(error) and "may be tried again" in str(error)
    syntax = _server_error(ClientError, "Neo.ClientError.Statement.SyntaxError", "bad")
    assert type(map_driver_error(syntax)) is DatabaseError


def test_a_transaction_stopped_at_its_time_limit_is_a_timeout() -> None:
    timed_out = _server_error(
        ClientError,
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
        "The transaction has not completed within the timeout specified at its start",
    )
    error = map_driver_error(timed_out)
    assert isinstance(error, TransactionTimeoutError) and isinstance(error, DatabaseError)
    assert "nothing was written" in str(error)
    assert "time limit of 1.5 s" in str(map_driver_error(timed_out, timeout_passed=1.5))


def test_a_stopped_lock_wait_is_a_timeout_only_once_the_limit_has_passed() -> None:
    # Neo4j reports a transaction stopped while it waited for a lock the same way whether the
    # time limit, an operator or a shutdown stopped it.
    stopped = _server_error(
        ClientError, "Neo.ClientError.Transaction.LockClientStopped", "terminated"
    )
    assert type(map_driver_error(stopped)) is DatabaseError
    error = map_driver_error(stopped, timeout_passed=2.0)
    assert type(error) is TransactionTimeoutError
    assert "time limit of 2 s" in str(error) and "LockClientStopped" in str(error)


def test_driver_errors_judge_a_stopped_transaction_by_the_time_it_ran() -> None:
    stopped = _server_error(
        ClientError, "Neo.ClientError.Transaction.LockClientStopped", "terminated"
    )
    with pytest.raises(DatabaseError) as early, driver_errors(60.0):
        raise stopped  # long before the limit: an operator or a shutdown stopped it
    assert type(early.value) is DatabaseError

    def stopped_late() -> None:
        with driver_errors(0.05):
            time.sleep(0.06)
            raise stopped

    with pytest.raises(TransactionTimeoutError, match=r"time limit of 0\.05 s"):
        stopped_late()
    with pytest.raises(DatabaseError) as unlimited, driver_errors(None):
        raise stopped
    assert type(unlimited.value) is DatabaseError


def test_a_login_refused_for_too_many_wrong_passwords_is_refused_credentials() -> None:
    # After a few wrong passwords in a row Neo4j answers with a rate limit, not an AuthError:
    # it is still a refusal of the credentials (and final for wait_for_bolt), said plainly.
    from pydantic import SecretStr

    from graphmem.servers.connection import Neo4jTarget, _unavailable, credentials_refused

    target = Neo4jTarget(uri="bolt://127.0.0.1:7687", user="neo4j", password=SecretStr("x" * 8))
    limited = _server_error(
        ClientError,
        "Neo.ClientError.Security.AuthenticationRateLimit",
        "The client has provided incorrect authentication details too many times in a row.",
    )
    for cause in (limited, AuthError("The client is unauthorized due to authentication failure.")):
        error = _unavailable(target, cause)
        error.__cause__ = cause
        assert "refused the credentials of user 'neo4j'" in str(error)
        assert credentials_refused(error)
    assert "too many wrong passwords" in str(_unavailable(target, limited))
    assert not credentials_refused(Neo4jUnavailableError("no Neo4j answers"))


def test_passing_over_ends_the_block_only_on_the_codes_it_names() -> None:
    code = "Neo.ClientError.Schema.IndexWithNameAlreadyExists"
    ran = []
    with passing_over({code}):
        ran.append("before")
        raise _server_error(ClientError, code, "an index with this name already exists")
    assert ran == ["before"]
    with pytest.raises(ClientError), passing_over(()):
        raise _server_error(ClientError, code, "an index with this name already exists")
    other = "Neo.ClientError.Statement.SyntaxError"
    with pytest.raises(ClientError), passing_over({code}):
        raise _server_error(ClientError, other, "Invalid input")


def test_passing_over_reads_a_failed_result_by_the_error_that_failed_it() -> None:
    # When the work of a managed transaction fails, the driver's rollback can report the
    # failure as its result's, caused by the server's error.
    code = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
    failed = ResultFailedError(None, "The result has failed.")
    failed.__cause__ = _server_error(ClientError, code, "An equivalent index already exists")
    with passing_over({code}):
        raise failed
    with pytest.raises(ResultFailedError), passing_over({"Neo.ClientError.Other"}):
        raise failed
    with pytest.raises(ResultFailedError), passing_over({code}):
        raise ResultFailedError(None, "The result has failed.")
