-- wrk script: etcd's JSON gateway driven directly, as metabench drives
-- metad (scripts/bench-etcd.sh): puts or linearizable gets of 100-byte
-- values over KEYS keys under the prefix "direct/k/", one request in
-- flight per connection.  OP=put|get|txn, KEYS (1000); SERIAL=1:
-- serializable gets (answered by the member from its own state, no
-- quorum).  txn: the shape of metad's txn for a plain put, done directly:
-- one compare (on the key's mod_revision, always true here; metad's is on
-- its slot), a put of a slot key "direct/s/N" and the put of the key with
-- prev_kv.
local op = os.getenv("OP") or "put"
local nkeys = tonumber(os.getenv("KEYS") or "1000")
local chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

local function b64(s)
	local out, i = {}, 1
	while i <= #s do
		local a, b, c = s:byte(i, i + 2)
		local n = a * 65536 + (b or 0) * 256 + (c or 0)
		local q = {}
		for j = 3, 0, -1 do
			local v = math.floor(n / 64 ^ j) % 64
			q[#q + 1] = chars:sub(v + 1, v + 1)
		end
		if not b then q[3] = "=" end
		if not c then q[4] = "=" end
		out[#out + 1] = table.concat(q)
		i = i + 3
	end
	return table.concat(out)
end

local bodies = {}
local paths = { put = "/v3/kv/put", txn = "/v3/kv/txn", get = "/v3/kv/range" }
local path = paths[op] or "/v3/kv/range"
local value = b64(string.rep("v", 100))
local headers = { ["Content-Type"] = "application/json" }

function init(args)
	math.randomseed(os.time() + math.floor(os.clock() * 1e6))
	for k = 0, nkeys - 1 do
		local key = b64("direct/k/key" .. k)
		if op == "put" then
			bodies[k] = '{"key":"' .. key .. '","value":"' .. value .. '"}'
		elseif op == "txn" then
			bodies[k] = '{"compare":[{"target":"MOD","key":"' .. key ..
			    '","mod_revision":"999999999999","result":"LESS"}],' ..
			    '"success":[{"request_put":{"key":"' ..
			    b64("direct/s/" .. k) .. '","value":"' ..
			    b64("metad 0123456789abcdef " .. k) .. '"}},' ..
			    '{"request_put":{"key":"' .. key .. '","value":"' ..
			    value .. '","prev_kv":true}}]}'
		else
			bodies[k] = '{"key":"' .. key .. '"' ..
			    (os.getenv("SERIAL") == "1" and ',"serializable":true' or '') .. '}'
		end
	end
end

function request()
	return wrk.format("POST", path, headers, bodies[math.random(0, nkeys - 1)])
end
