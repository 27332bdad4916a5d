-- wrk script: create a Stripe PaymentIntent and confirm it with a test card in one request,
-- form-encoded as the stripe package sends it (a charge, a balance transaction, three events).
wrk.method = "POST"
wrk.body = "amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
