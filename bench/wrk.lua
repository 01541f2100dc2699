-- The wrk script of bench/run.mjs (and bench/callbacks.mjs); WRK_THREADS must equal wrk's -t.
--   WRK_BODIES=FILE: POST one pre-signed body per request, one JSON body a line. Each signed
--   body carries its own nonce, so no body may be sent twice to the product: thread k of n takes
--   lines k, k+n, k+2n, ... and done() reports whether any thread ran past its share (its later
--   requests would repeat bodies, refused as replays; bench/wrk.mjs rejects such a run).
--   Without it: the plain request of the command line (the GETs).
--   WRK_DELAY_MS=MEAN: each connection waits before each of its requests, for a random time of
--   that mean (exponential, whole milliseconds as wrk takes them): an offered load below what
--   the server can do at most, for its latency there (bench/run.mjs, the paced create order).
-- Either way done() prints one line "WRKJSON {...}": wrk's figures, and the CPU time (every
-- thread of wrk, from /proc/self/stat) the run took, for the client's CPU share.
local threads = {}
local count = 0

-- utime + stime of this process in clock ticks (fields 14 and 15 of /proc/self/stat).
function cpuNow()
  local f = io.open("/proc/self/stat", "r")
  local stat = f:read("*l")
  f:close()
  local fields = {}
  for x in stat:sub(stat:find(") ", 1, true) + 2):gmatch("%S+") do fields[#fields + 1] = x end
  return tonumber(fields[12]) + tonumber(fields[13])
end

function setup(thread)
  thread:set("tid", count)
  count = count + 1
  table.insert(threads, thread)
end

local bodies = os.getenv("WRK_BODIES")

function init(args)
  local n = tonumber(os.getenv("WRK_THREADS"))
  if bodies then
    requests = {}
    local i = 0
    for line in io.lines(bodies) do
      if i % n == tid then
        requests[#requests + 1] = wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, line)
      end
      i = i + 1
    end
    size = #requests
    sent = 0
  end
  -- wrk runs every thread's init before the run starts: the last one marks where the run's CPU
  -- time starts (loading the bodies is not part of it).
  if tid == n - 1 then cpu0 = cpuNow() end
  math.randomseed(os.time() * 16 + tid)
end

local meanDelay = tonumber(os.getenv("WRK_DELAY_MS") or "")
if meanDelay then
  function delay()
    return math.floor(-math.log(1 - math.random()) * meanDelay + 0.5)
  end
end

-- Defined only with bodies: without request(), wrk sends its one fixed request, faster.
if bodies then
  function request()
    sent = sent + 1
    return requests[(sent - 1) % size + 1]
  end
end

function done(summary, latency, requests)
  local exhausted = false
  local pool = 0
  local cpu0 = 0
  for _, t in ipairs(threads) do
    local s, z = t:get("sent"), t:get("size")
    if s and z then
      pool = pool + z
      if s > z then exhausted = true end
    end
    cpu0 = math.max(cpu0, t:get("cpu0") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"durationUs":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f,"pool":%d,"exhausted":%s,"cpuTicks":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    pool, tostring(exhausted), cpuNow() - cpu0))
end
