-- wrk script: create a hello greeting (JSON), as the hello twin's SDK-free clients do.
wrk.method = "POST"
wrk.body = '{"name":"Grace"}'
wrk.headers["Content-Type"] = "application/json"
