-- wrk script: POST a 1 KB JSON body.
wrk.method = "POST"
wrk.body = '{"data":"' .. string.rep("x", 1012) .. '"}'
wrk.headers["Content-Type"] = "application/json"
