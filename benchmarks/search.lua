-- wrk's script for benchmarks/run.py: JSON-RPC `search` calls, one body a line of the file
-- named by GRASBOT_BODIES, in order (GRASBOT_MODE=new: every call a question not asked before)
-- or drawn at random (GRASBOT_MODE=repeated). A call counts as answered when it gets a 200
-- whose body holds a result.
local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("id", #threads)
end

function init(args)
  bodies = {}
  for line in io.lines(os.getenv("GRASBOT_BODIES")) do bodies[#bodies + 1] = line end
  random = os.getenv("GRASBOT_MODE") == "repeated"
  math.randomseed(id)
  sent, answered, errors, exhausted = 0, 0, 0, 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  sent = sent + 1
  local i = sent
  if random then
    i = math.random(#bodies)
  elseif i > #bodies then
    exhausted = 1
    i = (i - 1) % #bodies + 1
  end
  return wrk.format(nil, nil, nil, bodies[i])
end

function response(status, headers, body)
  if status == 200 and body:find('"result"', 1, true) then
    answered = answered + 1
  else
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local answered_all, errors_all, exhausted_all = 0, 0, 0
  for _, thread in ipairs(threads) do
    answered_all = answered_all + thread:get("answered")
    errors_all = errors_all + thread:get("errors")
    exhausted_all = exhausted_all + thread:get("exhausted")
  end
  io.write(string.format(
    'GRASBOT {"calls": %d, "errors": %d, "socket_errors": %d, "elapsed": %f, "exhausted": %d}\n',
    answered_all, errors_all,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6, exhausted_all))
end
