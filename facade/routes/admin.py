"""The admin API: usage reports, accounts and keys, behind ``LECTOR_ADMIN_TOKEN``.

Separate from customer keys: the admin bearer is compared (as SHA-256 digests, in constant time)
with the configured token, never looked up in ``api_keys``. No token configured means no admin
API: every admin route answers 403 ``access forbidden``, before any header is read. Errors are
plain text like the rest of the API, from the one table in ``facade.errors`` (an unknown key
prefix is the store's ``KeyNotFound``, 404, not a login's 401).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from facade import errors as e
from facade.deps import Services, ServicesDep, bearer_key, session_for
from facade.parts import Part
from facade.report_query import instant as _instant
from facade.report_query import report_window
from facade.report_query import wants_csv as _wants_csv
from facade.validation import parse_json_body
from store.db import accounts as account_repo
from store.db import keys as key_repo
from store.db.reports import report_csv, report_document, usage_report

T = TypeVar("T")
ACCOUNT_FIELDS = frozenset(
    {"name", "subscriptionValidUntil", "allowedModels", "allowedEndpoints", "wsConnectionsPerMinute", "status"}
)


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()


def require_admin(request: Request, services: ServicesDep) -> None:
    """403 when no admin token is configured; the vendor API contract's 401s for a missing or wrong bearer."""
    if not services.access.admin_token:
        raise e.ApiError(403, e.FORBIDDEN)
    key = bearer_key(request.headers)
    if not hmac.compare_digest(_digest(key), _digest(services.access.admin_token)):
        raise e.ApiError(401, e.INVALID_KEY)


router = APIRouter(prefix="/admin", dependencies=[Depends(require_admin)])
NEEDS: Final = frozenset({Part.DATABASE})  # facade.parts: checked before serving


async def _in_session(services: Services, work: Callable[[Any], T]) -> T:
    """Run ``work(session)`` in one committed transaction, off the event loop."""

    def run() -> T:
        with session_for(services) as session:
            return work(session)

    return await services.offload(run)


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


# ---------------------------------------------------------------------------------------- usage


@router.get("/usage", response_model=None)
async def usage(request: Request, services: ServicesDep) -> Response:
    """``?account=NAME&from=DATE&to=DATE (from defaults to the start of this UTC month, to to now)&groupBy=day|month|model|speaker|transport|key`` (several
    comma-separated also: ``account,model``). JSON, or CSV for ``Accept: text/csv``."""
    query = request.query_params
    start, end, group_by = report_window(query, services.now())
    name = query.get("account") or None

    def work(session: Any) -> list[Any]:
        account_id: uuid.UUID | None = None
        if name is not None:
            account_id = account_repo.get_account_by_name(session=session, name=name).id
        return usage_report(session=session, account_id=account_id, start=start, end=end, group_by=group_by)

    rows = await _in_session(services, work)
    if _wants_csv(request.headers.get("accept")):
        return Response(report_csv(rows, group_by), media_type="text/csv; charset=utf-8")
    return JSONResponse(report_document(rows, account=name, start=start, end=end, group_by=group_by))


# ------------------------------------------------------------------------------------- accounts


def account_view(account: Any, *, with_secret: bool = False) -> dict[str, Any]:
    view = {
        "id": str(account.id),
        "name": account.name,
        "status": account.status,
        "subscriptionValidUntil": _iso(account.subscription_valid_until),
        "allowedModels": account.allowed_models,
        "allowedEndpoints": account.allowed_endpoints,
        "wsConnectionsPerMinute": account.ws_connections_per_minute,
        "createdAt": _iso(account.created_at),
    }
    if with_secret:  # the customer needs it to verify webhook signatures
        view["webhookSecret"] = account.webhook_secret
    return view


def _string_list(payload: dict[str, Any], name: str) -> list[str] | None:
    value = payload[name]
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise e.ApiError(400, f"{name} must be a list of strings or null")
    return list(value)


def _rate(payload: dict[str, Any]) -> int:
    value = payload["wsConnectionsPerMinute"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise e.ApiError(400, "wsConnectionsPerMinute must be a non-negative integer")
    return value


def _valid_until(payload: dict[str, Any]) -> datetime | None:
    value = payload["subscriptionValidUntil"]
    return None if value is None else _instant(value, "subscriptionValidUntil")


def _check_fields(payload: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(payload) - allowed)
    if unknown:
        raise e.ApiError(400, f"unknown field: {unknown[0]}")


@router.post("/accounts", status_code=201)
async def create_account(request: Request, services: ServicesDep) -> JSONResponse:
    payload = parse_json_body(await request.body())
    _check_fields(payload, ACCOUNT_FIELDS - {"status"})
    name = payload.get("name")
    if not isinstance(name, str) or not name.strip():
        raise e.ApiError(400, "name is required")
    kwargs: dict[str, Any] = {"name": name}
    if "subscriptionValidUntil" in payload:
        kwargs["subscription_valid_until"] = _valid_until(payload)
    if "allowedModels" in payload:
        kwargs["allowed_models"] = _string_list(payload, "allowedModels")
    if "allowedEndpoints" in payload:
        kwargs["allowed_endpoints"] = _string_list(payload, "allowedEndpoints")
    if "wsConnectionsPerMinute" in payload:
        kwargs["ws_connections_per_minute"] = _rate(payload)
    view = await _in_session(
        services, lambda s: account_view(account_repo.create_account(session=s, **kwargs), with_secret=True)
    )
    return JSONResponse(view, status_code=201)


@router.get("/accounts")
async def list_accounts(services: ServicesDep) -> JSONResponse:
    views = await _in_session(
        services, lambda s: [account_view(a) for a in account_repo.list_accounts(session=s)]
    )
    return JSONResponse({"accounts": views})


@router.get("/accounts/{name}")
async def get_account(name: str, services: ServicesDep) -> JSONResponse:
    view = await _in_session(
        services, lambda s: account_view(account_repo.get_account_by_name(session=s, name=name), with_secret=True)
    )
    return JSONResponse(view)


@router.patch("/accounts/{name}")
async def update_account(name: str, request: Request, services: ServicesDep) -> JSONResponse:
    """Change only the fields given: subscription (null: no end), limits (null list: all allowed),
    the WebSocket rate, and ``status`` (``active`` or ``disabled``)."""
    payload = parse_json_body(await request.body())
    _check_fields(payload, ACCOUNT_FIELDS - {"name"})
    status = payload.get("status")
    if "status" in payload and status not in ("active", "disabled"):
        raise e.ApiError(400, "status must be active or disabled")
    valid_until = _valid_until(payload) if "subscriptionValidUntil" in payload else None
    models = _string_list(payload, "allowedModels") if "allowedModels" in payload else None
    endpoints = _string_list(payload, "allowedEndpoints") if "allowedEndpoints" in payload else None
    rate = _rate(payload) if "wsConnectionsPerMinute" in payload else None

    def work(session: Any) -> dict[str, Any]:
        account = account_repo.get_account_by_name(session=session, name=name)
        if "subscriptionValidUntil" in payload:
            account_repo.set_subscription(session=session, name=name, valid_until=valid_until)
        if payload.keys() & {"allowedModels", "allowedEndpoints", "wsConnectionsPerMinute"}:
            account_repo.set_limits(
                session=session,
                name=name,
                allowed_models=models if "allowedModels" in payload else account.allowed_models,
                allowed_endpoints=endpoints if "allowedEndpoints" in payload else account.allowed_endpoints,
                ws_connections_per_minute=rate if rate is not None else account.ws_connections_per_minute,
            )
        if status == "disabled":
            account_repo.disable_account(session=session, name=name)
        elif status == "active":
            account_repo.enable_account(session=session, name=name)
        return account_view(account)

    return JSONResponse(await _in_session(services, work))


# ----------------------------------------------------------------------------------------- keys


def key_view(api_key: Any) -> dict[str, Any]:
    return {
        "prefix": api_key.prefix,
        "name": api_key.name,
        "createdAt": _iso(api_key.created_at),
        "lastUsedAt": _iso(api_key.last_used_at),
        "revokedAt": _iso(api_key.revoked_at),
    }


@router.post("/accounts/{name}/keys", status_code=201)
async def create_key(name: str, request: Request, services: ServicesDep) -> JSONResponse:
    """Issue a key. Its plaintext is in this response only (sent after the commit), never again."""
    raw = await request.body()
    payload = parse_json_body(raw) if raw.strip() else {}
    _check_fields(payload, frozenset({"name"}))
    label = payload.get("name")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise e.ApiError(400, "name must be a non-empty string")

    def work(session: Any) -> dict[str, Any]:
        owner = account_repo.get_account_by_name(session=session, name=name)
        api_key, plaintext = key_repo.create_key(session=session, account_id=owner.id, name=label)
        session.refresh(api_key)  # created_at comes from the server
        return {**key_view(api_key), "account": owner.name, "key": plaintext}

    return JSONResponse(await _in_session(services, work), status_code=201)


@router.get("/accounts/{name}/keys")
async def list_keys(name: str, services: ServicesDep) -> JSONResponse:
    def work(session: Any) -> list[dict[str, Any]]:
        owner = account_repo.get_account_by_name(session=session, name=name)
        return [key_view(k) for k in key_repo.list_keys(session=session, account_id=owner.id)]

    return JSONResponse({"keys": await _in_session(services, work)})


@router.delete("/keys/{prefix}")
async def revoke_key(prefix: str, services: ServicesDep) -> JSONResponse:
    """Revoke by visible prefix (or the whole key); it stops authenticating at once. Idempotent."""
    visible = prefix[: key_repo.VISIBLE_PREFIX_CHARS]
    return JSONResponse(
        await _in_session(services, lambda s: key_view(key_repo.revoke_key(session=s, prefix=visible)))
    )
