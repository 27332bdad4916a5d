-- wrk script for emulate's create row: a Stripe customer, form-encoded as the stripe package sends
-- it (the same body as post-stripe.lua), with the token changed every 1,000 requests to keep
-- emulate's 5,000-per-token-per-hour limiter from tripping (see emulate-get.lua).
local n = 0
function request()
  n = n + 1
  return wrk.format("POST", nil, {
    ["Authorization"] = "Bearer sk_test_bench_" .. math.floor(n / 1000),
    ["Content-Type"] = "application/x-www-form-urlencoded",
  }, "email=grace%40example.com&name=Grace")
end
