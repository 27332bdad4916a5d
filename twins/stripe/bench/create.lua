-- POST /v1/customers as the stripe SDK sends it (form body).
wrk.method = "POST"
wrk.body = "email=bench%40example.com&name=Bench+Customer&metadata[plan]=pro"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
