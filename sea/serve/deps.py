"""The dependencies routes declare: the server's context and the key's principal with a
role (``Annotated`` types, so a route's signature says what it needs)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from sea.serve.auth import Principal, require
from sea.serve.context import ServeContext, context

Ctx = Annotated[ServeContext, Depends(context)]
"""The server's context."""
Reader = Annotated[Principal, Depends(require("read"))]
"""A key with the ``read`` role."""
Runner = Annotated[Principal, Depends(require("run"))]
"""A key with the ``run`` role."""
Approver = Annotated[Principal, Depends(require("approve"))]
"""A key with the ``approve`` role."""
Admin = Annotated[Principal, Depends(require("admin"))]
"""A key with the ``admin`` role."""
