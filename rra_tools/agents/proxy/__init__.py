"""The metering proxy: a cell's one way out, which forwards its model calls to the real upstreams
with the real keys and measures what they cost from the upstreams' own answers.

The agent in the sandbox is given ``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL`` (ending in ``/v1``)
and ``GOOGLE_GEMINI_BASE_URL`` pointing at the proxy, and dummy keys. The proxy:

- routes each request by its path (:mod:`.routes`) and refuses the others (404);
- replaces the dummy key with the operator's real one (never written anywhere);
- strips provider-side tools that would reach the network (:mod:`.tools`);
- forwards the call, retrying an upstream's 429 and 5xx with backoff;
- reads the usage from the answer, streamed or not (:mod:`.usage`), normalised as
  :class:`~rra_tools.model.cell.MeteredUsage` describes; prices it with a dated table
  (:mod:`.prices`): ``cost = (input * p_in + output * p_out + cache_read * p_cr +
  cache_write * p_cw) / 1e6``, where input excludes what was read from or written to the cache
  and output includes reasoning;
- writes one JSON line per call to the call log (:mod:`.calllog`), outside the sandbox;
- refuses every call once a budget is spent (:mod:`.budget`) and sets :attr:`MeteringProxy.limit_event`.

>>> prices = load_price_table(None)
>>> round(prices.cost("claude-sonnet-4-5-20250929", 1_000, 200, 10_000, 0), 6)
0.009
"""

from __future__ import annotations

from .budget import Budgets
from .errors import ProxyError
from .prices import PriceTable, load_price_table
from .server import DEFAULT_UPSTREAMS, KEY_VARIABLES, MeteringProxy, ProxySettings, parse_upstreams

__all__ = ["DEFAULT_UPSTREAMS", "KEY_VARIABLES", "Budgets", "MeteringProxy", "PriceTable", "ProxyError",
           "ProxySettings", "load_price_table", "parse_upstreams"]
