-- SPDX-License-Identifier: Apache-2.0
-- wrk script for tests/bench/http.sh: tools/call over Streamable HTTP in
-- one session, "allowed" (run_command "true") or "denied" (a tool the
-- policy denies). Every response is checked; done() prints how many were
-- the expected result and the latency percentiles in microseconds.
--   wrk ... -s http.lua URL -- TOKEN SESSION allowed|denied

local threads = {}
local nthreads = 0

function setup(thread)
	thread:set("tid", nthreads)
	nthreads = nthreads + 1
	table.insert(threads, thread)
end

local kind, want
local n = 0
ok = 0
bad = 0
first_bad = ""

function init(args)
	kind = args[3]
	wrk.method = "POST"
	wrk.headers["Authorization"] = "Bearer " .. args[1]
	wrk.headers["Mcp-Session-Id"] = args[2]
	wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Accept"] = "application/json, text/event-stream"
	want = kind == "denied" and '"isError":true' or '"isError":false'
end

function request()
	-- ids unique within the session across wrk's threads
	n = n + 1
	local id = tid * 1000000000 + n
	local call
	if kind == "denied" then
		call = '{"name":"write_file","arguments":{"path":"/tmp/x"}}'
	else
		call = '{"name":"run_command","arguments":{"command":"true"}}'
	end
	return wrk.format(nil, nil, nil,
		'{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":' .. call .. '}')
end

function response(status, headers, body)
	if status == 200 and body:find(want, 1, true) then
		ok = ok + 1
	else
		bad = bad + 1
		if first_bad == "" then
			first_bad = status .. " " .. body:sub(1, 200)
		end
	end
end

function done(summary, latency, requests)
	local o, b, fb = 0, 0, ""
	for _, t in ipairs(threads) do
		o = o + t:get("ok")
		b = b + t:get("bad")
		if fb == "" then fb = t:get("first_bad") end
	end
	io.write(string.format("checked_ok %d\nchecked_bad %d\n", o, b))
	if fb ~= "" then io.write("first_bad " .. fb:gsub("\n", " ") .. "\n") end
	io.write(string.format("rps %.0f\np50_us %d\np99_us %d\n",
		summary.requests / (summary.duration / 1e6),
		latency:percentile(50), latency:percentile(99)))
end
