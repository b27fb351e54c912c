"""`rateLimit`: the asking client's budget of cost points (`kernelindex.core.budgets`), as GitHub's
`rateLimit` and Shopify's `throttleStatus` tell theirs."""

from __future__ import annotations

import strawberry

from kernelindex.core.budgets import Account

__all__ = ["RateLimit"]


@strawberry.type(
    description="Your budget of cost points on this server, after this query was charged. A query is charged its "
    "estimated cost (`extensions.cost.requested`, at least 1) before it runs; an answer from the server's cache costs "
    "1 point; a page, feed, badge or MCP request 5. A query your budget cannot pay is refused with the code "
    "THROTTLED (HTTP 429, `Retry-After`), and nothing runs. The budget refills continuously at `restoreRate`. The "
    "`RateLimit` header of every answer says the same."
)
class RateLimit:
    cost: int = strawberry.field(description="Points this query was charged (cost points; at least 1).")
    limit: int = strawberry.field(description="The most points your budget holds (cost points): what it refills to.")
    remaining: int = strawberry.field(description="Points left after this query (cost points, rounded down).")
    restore_rate: float = strawberry.field(description="Points your budget regains each second, up to `limit`.")
    full_in_seconds: int = strawberry.field(
        description="Seconds until your budget is full again (0 when it is full), at `restoreRate`."
    )

    @classmethod
    def of(cls, account: Account) -> RateLimit:
        status = account.status()
        return cls(
            cost=account.charged,
            limit=account.policy.capacity,
            remaining=int(status.available),
            restore_rate=account.policy.rate,
            full_in_seconds=status.full_in,
        )
