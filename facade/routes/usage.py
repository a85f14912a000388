"""``GET /v1/usage``: the caller's own usage, for the console's Usage page and for scripts.

The same report as the admin's ``/admin/usage`` (the same store function, the same query
parameters, the same JSON and CSV), scoped to the account of the key that asks. There is no
``account`` parameter: one given is refused rather than ignored, so nobody can believe they are
reading another account's figures.
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from facade import errors as e
from facade.deps import PrincipalDep, ServicesDep, session_for
from facade.parts import Part
from facade.report_query import report_window, wants_csv
from store.db.reports import report_csv, report_document, usage_report

router = APIRouter()
NEEDS: Final = frozenset({Part.AUTHENTICATOR, Part.DATABASE})  # facade.parts: checked before serving


@router.get("/v1/usage", response_model=None)
async def own_usage(request: Request, services: ServicesDep, principal: PrincipalDep) -> Response:
    """``?from=DATE&to=DATE&groupBy=day|month|model|speaker|transport|key|lang`` (comma-separated
    for several). JSON, or CSV for ``Accept: text/csv``."""
    query = request.query_params
    if "account" in query:
        raise e.ApiError(400, "account is not a parameter here: a key reads its own account's usage")
    start, end, group_by = report_window(query, services.now())

    def work() -> list[Any]:
        with session_for(services) as session:
            return usage_report(
                session=session, account_id=principal.account_id, start=start, end=end, group_by=group_by
            )

    rows = await services.offload(work)
    if wants_csv(request.headers.get("accept")):
        return Response(report_csv(rows, group_by), media_type="text/csv; charset=utf-8")
    document = report_document(rows, account=principal.account_name, start=start, end=end, group_by=group_by)
    return JSONResponse(document)
