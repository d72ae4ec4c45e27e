"""The operations of graphmem, stated once (:mod:`graphmem.ops.table`): each one's library
method, request and result models, HTTP route, role and MCP tool. The REST routes, the role
checks, the remote calls and the OpenAPI schema are generated from the table."""

from graphmem.ops.table import OPERATIONS, Operation, by_name, by_tool

__all__ = ["OPERATIONS", "Operation", "by_name", "by_tool"]
