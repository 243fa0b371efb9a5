// The Lua scripts: each is one atomic step on one partition's shard (docs/distributed.md).
// Every write is idempotent or guarded, because the client resends a request whose answer
// was lost (a reconnect, a failover).
#include "cluster/internal.h"

namespace harvest::cluster::internal {
namespace {

// KEYS: seen, pending, ready, lease, then the queue of each item. ARGV: fp, host, item per
// item. Returns {how many were new, the lease holder's token or false} (the caller wakes
// the holder when it is another worker).
constexpr const char* kAdmit = R"lua(
local added = 0
for i = 1, #KEYS - 4 do
  if redis.call('SADD', KEYS[1], ARGV[3*i-2]) == 1 then
    if redis.call('RPUSH', KEYS[4+i], ARGV[3*i]) == 1 then
      redis.call('RPUSH', KEYS[3], ARGV[3*i-1])
    end
    added = added + 1
  end
end
if added > 0 then redis.call('INCRBY', KEYS[2], added) end
return {added, redis.call('GET', KEYS[4])}
)lua";

// KEYS: lease, ready, taken, due, recs, pending. ARGV: token, max items, items per host,
// queue key prefix, the caller's wall ms. First the recrawls due by then go back into their
// host queues; then round robin over the hosts with queued URLs, each URL taken recorded in
// `taken`. Returns {items, the seen record of each ('' for none: a URL never fetched)}.
constexpr const char* kTake = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('LEASE not held') end
local out = {}
local recs = {}
local maxn = tonumber(ARGV[2])
local k = tonumber(ARGV[3])
local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[5], 'LIMIT', 0, maxn)
for _, fp in ipairs(due) do
  redis.call('ZREM', KEYS[4], fp)
  local it = redis.call('HGET', KEYS[5], 'i:' .. fp)
  local host = it and string.match(it, '^[^\t]*\t([^\t]*)')
  if host then
    if redis.call('RPUSH', ARGV[4] .. host, it) == 1 then redis.call('RPUSH', KEYS[2], host) end
    redis.call('INCR', KEYS[6])
  end
end
local hosts = redis.call('LLEN', KEYS[2])
for h = 1, hosts do
  if #out >= maxn then break end
  local host = redis.call('LPOP', KEYS[2])
  if not host then break end
  local q = ARGV[4] .. host
  local items = redis.call('LPOP', q, math.min(k, maxn - #out))
  if items then
    for _, it in ipairs(items) do
      local fp = string.sub(it, 1, 16)
      redis.call('HSET', KEYS[3], fp, it)
      out[#out + 1] = it
      recs[#recs + 1] = redis.call('HGET', KEYS[5], 's:' .. fp) or ''
    end
  end
  if redis.call('LLEN', q) > 0 then redis.call('RPUSH', KEYS[2], host) end
end
return {out, recs}
)lua";

// KEYS: taken, pending, done, lease, hosts, due, recs. ARGV: lease token, count of
// fingerprints, the fingerprints (hex), count of recrawl schedules, per schedule (fingerprint,
// due wall ms or 0, seen record, item), then field, value pairs of host records. Returns how
// many were taken. Schedules and host records are written only under the caller's lease (a
// late write from a worker that lost the partition must not replace what the new owner
// saved; the URL it had is fetched again by the new owner anyway).
constexpr const char* kDone = R"lua(
local nf = tonumber(ARGV[2])
local n = 0
for i = 3, 2 + nf do n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
if n > 0 then
  redis.call('DECRBY', KEYS[2], n)
  redis.call('INCRBY', KEYS[3], n)
end
local nr = tonumber(ARGV[3 + nf])
local first_host = 4 + nf + 4 * nr
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return n end
for i = 4 + nf, first_host - 1, 4 do
  local fp = ARGV[i]
  redis.call('HSET', KEYS[7], 's:' .. fp, ARGV[i + 2], 'i:' .. fp, ARGV[i + 3])
  if tonumber(ARGV[i + 1]) > 0 then
    redis.call('ZADD', KEYS[6], ARGV[i + 1], fp)
  else
    redis.call('ZREM', KEYS[6], fp)
  end
end
for i = first_host, #ARGV - 1, 2 do redis.call('HSET', KEYS[5], ARGV[i], ARGV[i + 1]) end
return n
)lua";

// KEYS: lease, epoch, taken, ready, released, quiet, hosts. ARGV: worker ("id#nonce"), ttl
// ms, queue key prefix. A free partition: a new epoch, the lease set, every URL a previous
// owner had taken back at the front of its queue. Returns false when held, else {token,
// given up on purpose (1|0), quiet wall ms, URLs put back, the hosts of those URLs, the host
// records (field, value, ...)}: every politeness, breaker and (by host name) http->https
// upgrade record, and the robots.txt records of the hosts with URLs queued (the others fetch theirs
// again if they get URLs).
constexpr const char* kAcquire = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local e = redis.call('INCR', KEYS[2])
local token = ARGV[1] .. ' ' .. e
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
local all = redis.call('HGETALL', KEYS[3])
local moved = 0
local inhand = {}
local inhand_list = {}
for i = 1, #all, 2 do
  local it = all[i + 1]
  local host = string.match(it, '^[^\t]*\t([^\t]*)')
  if host then
    if redis.call('LPUSH', ARGV[3] .. host, it) == 1 then redis.call('RPUSH', KEYS[4], host) end
    moved = moved + 1
    if not inhand[host] then
      inhand[host] = true
      inhand_list[#inhand_list + 1] = host
    end
  end
end
redis.call('DEL', KEYS[3])
local queued = {}
for _, h in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do queued[h] = true end
local records = {}
local saved = redis.call('HGETALL', KEYS[7])
for i = 1, #saved, 2 do
  local f = saved[i]
  if string.sub(f, 1, 2) ~= 'r:' or queued[string.sub(f, 3)] then
    records[#records + 1] = f
    records[#records + 1] = saved[i + 1]
  end
end
local released = tonumber(redis.call('GET', KEYS[5]) or '0')
local quiet = tonumber(redis.call('GET', KEYS[6]) or '0')
local graceful = 0
if released == e - 1 then graceful = 1 end
return {token, graceful, quiet, moved, inhand_list, records}
)lua";

// KEYS: lease. ARGV: token, ttl ms. 1: renewed; 0: not held any more.
constexpr const char* kRenew = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
)lua";

// KEYS: lease, released, quiet. ARGV: token, epoch, quiet wall ms. Gives the lease up.
constexpr const char* kRelease = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('SET', KEYS[3], ARGV[3])
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
)lua";

// KEYS: workers. ARGV: worker, ttl ms, "1" to leave. Returns the live workers with their
// expiry (server time, ms).
constexpr const char* kHeartbeat = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
)lua";

// KEYS: config. ARGV: this worker's partitioning. Stores it if none is; returns the stored one.
constexpr const char* kConfig = R"lua(
local c = redis.call('GET', KEYS[1])
if not c then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return c
)lua";

}  // namespace

Scripts::Scripts()
    : admit(kAdmit),
      take(kTake),
      done(kDone),
      acquire(kAcquire),
      renew(kRenew),
      release(kRelease),
      heartbeat(kHeartbeat),
      config(kConfig) {}

const Scripts& LuaScripts() {
  static const Scripts* scripts = new Scripts();
  return *scripts;
}

}  // namespace harvest::cluster::internal
