-- wrk script: create a Stripe customer, form-encoded as the stripe package sends it.
wrk.method = "POST"
wrk.body = "email=grace%40example.com&name=Grace"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
