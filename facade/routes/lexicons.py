"""``/v1/lexicons``: an account's pronunciation lexicons (W3C PLS 1.0), named and versioned.

- ``PUT /v1/lexicons/{name}``: the body is the PLS document; it is read before it is stored
  (a malformed one is a 400 naming the line) and becomes the name's next version.
  ``?default=true|false`` marks the lexicon as one the account's requests use when they name
  none; without it a new version keeps the previous one's mark.
- ``GET /v1/lexicons``: the newest version of each, without content.
- ``GET /v1/lexicons/{name}``: one version (``?version=N``, else the newest), with its content.
- ``DELETE /v1/lexicons/{name}``: every version.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from facade import errors as e
from facade.deps import Principal, PrincipalDep, ServicesDep, session_for
from facade.parts import Part
from scheduler.lexicons import check_name, describe, store_version
from store.db import lexicons as repo

router = APIRouter()
NEEDS: Final = frozenset({Part.AUTHENTICATOR, Part.DATABASE})  # facade.parts: checked before serving


def _account(principal: Principal) -> uuid.UUID:
    if principal.account_id is None:
        raise e.ApiError(403, e.FORBIDDEN)
    return principal.account_id


def _flag(value: str | None) -> bool | None:
    if value is None:
        return None
    if value.lower() not in ("true", "false"):
        raise e.ApiError(400, 'default must be "true" or "false"')
    return value.lower() == "true"


@router.put("/v1/lexicons/{name}", response_model=None)
async def put_lexicon(name: str, request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    account_id = _account(principal)
    is_default = _flag(request.query_params.get("default"))
    raw = await request.body()
    if not raw.strip():
        raise e.ApiError(400, e.BODY_REQUIRED)
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise e.ApiError(400, "a lexicon must be UTF-8") from None

    def work() -> dict[str, Any]:
        with session_for(services) as session:
            row = store_version(session=session, account_id=account_id, name=name, content=content,
                                limits=services.speech.lexicon_limits, is_default=is_default)
            return describe(row)

    return JSONResponse(await services.offload(work), status_code=201)


@router.get("/v1/lexicons", response_model=None)
async def list_lexicons(services: ServicesDep, principal: PrincipalDep) -> Response:
    account_id = _account(principal)

    def work() -> list[dict[str, Any]]:
        with session_for(services) as session:
            return [describe(row) for row in repo.latest_versions(session=session, account_id=account_id)]

    return JSONResponse({"lexicons": await services.offload(work)})


@router.get("/v1/lexicons/{name}", response_model=None)
async def get_lexicon(name: str, request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    account_id = _account(principal)
    check_name(name)
    raw_version = request.query_params.get("version")
    if raw_version is not None and not raw_version.isdigit():
        raise e.ApiError(400, "version must be a positive whole number")
    version = int(raw_version) if raw_version is not None else None

    def work() -> dict[str, Any]:
        with session_for(services) as session:
            row = repo.get_version(session=session, account_id=account_id, name=name, version=version)
            return describe(row, with_content=True)

    return JSONResponse(await services.offload(work))


@router.delete("/v1/lexicons/{name}", response_model=None)
async def delete_lexicon(name: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    account_id = _account(principal)
    check_name(name)

    def work() -> None:
        with session_for(services) as session:
            repo.delete_lexicon(session=session, account_id=account_id, name=name)

    await services.offload(work)
    return Response(status_code=204)
