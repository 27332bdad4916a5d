-- wrk script for emulate's GET rows. emulate 0.12.2 allows 5,000 requests per token per hour and
-- then answers 403 (a limiter hard-coded in its server: no flag, setting or variable). Its Stripe
-- service takes any non-empty Bearer token (as a fallback user), and the limiter counts per token,
-- so each request's token changes every 1,000 requests: the limiter still runs, but never trips.
local n = 0
function request()
  n = n + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer sk_test_bench_" .. math.floor(n / 1000) })
end
