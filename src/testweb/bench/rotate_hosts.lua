-- wrk script: GET pages of the test web, rotating the Host header over N hosts so that every
-- request names a different virtual host (h0000.test ... h{N-1}.test) and page.
-- Usage: wrk -t2 -c64 -d10s -s rotate_hosts.lua http://127.0.0.1:PORT/ -- [hosts] [pages]
local hosts = 1000
local pages = 50
local counter = 0

function init(args)
  if args[1] then hosts = tonumber(args[1]) end
  if args[2] then pages = tonumber(args[2]) end
  -- Different threads start at different offsets.
  counter = math.random(0, hosts * pages)
end

function request()
  counter = counter + 1
  local host = string.format("h%04d.test", counter % hosts)
  local page = math.floor(counter / hosts) % pages
  local path = page == 0 and "/" or ("/p/" .. page)
  return wrk.format("GET", path, { ["Host"] = host }, nil)
end
