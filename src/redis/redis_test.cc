// Tests of the Redis Cluster client: key slots and URLs (no server), then against local
// clusters started by scripts/redis-cluster (redis.h, testing/local_cluster.h).
#include "redis/redis.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "redis/testing/local_cluster.h"

namespace harvest::redis {
namespace {

using std::chrono::milliseconds;
using testing::LocalCluster;

TEST(KeySlotTest, SpecVectors) {
  EXPECT_EQ(KeySlot("123456789"), 12739);  // the spec's CRC16 check value 0x31C3 mod 16384
  EXPECT_EQ(KeySlot("foo"), 12182);        // CLUSTER KEYSLOT foo
  EXPECT_EQ(KeySlot(""), 0);
}

TEST(KeySlotTest, HashTags) {
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  // An empty tag: the whole key is hashed.
  EXPECT_NE(KeySlot("foo{}{bar}"), KeySlot("bar"));
  EXPECT_EQ(KeySlot("foo{}{bar}"), KeySlot(std::string_view("foo{}{bar}")));
  // The first '{' and the first '}' after it.
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
  EXPECT_EQ(KeySlot("no close {brace"), KeySlot(std::string("no close {brace")));
  EXPECT_NE(KeySlot("no close {brace"), KeySlot("brace"));
}

TEST(ParseRedisUrlTest, Good) {
  Result<ClusterOptions> o = ParseRedisUrl("redis://127.0.0.1:7000,127.0.0.1:7001");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->seeds, (std::vector<std::string>{"127.0.0.1:7000", "127.0.0.1:7001"}));
  EXPECT_EQ(o->retry_for, milliseconds(20000));

  o = ParseRedisUrl("localhost:6379");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->seeds, std::vector<std::string>{"localhost:6379"});

  o = ParseRedisUrl("REDIS://[::1]:7000,redis.internal:65535/");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->seeds, (std::vector<std::string>{"[::1]:7000", "redis.internal:65535"}));
}

TEST(ParseRedisUrlTest, Bad) {
  for (const char* url : {"",
                          "redis://",
                          "redis:///",
                          "rediss://h:1",
                          "http://h:1",
                          "redis://h",
                          "redis://h:",
                          "redis://:7000",
                          "redis://h:0",
                          "redis://h:70000",
                          "redis://h:12x",
                          "redis://h:1,,h:2",
                          "redis://h:1,",
                          "redis://user:pw@h:1",
                          "redis://h:1/0",
                          "redis://h:1?timeout=3",
                          "::1:7000",
                          "[::1]7000",
                          "[]:7000",
                          " h:1",
                          "h h:1"}) {
    Result<ClusterOptions> o = ParseRedisUrl(url);
    EXPECT_FALSE(o.ok()) << "accepted '" << url << "'";
    if (!o.ok()) {
      EXPECT_EQ(o.status().code(), Status::Code::kInvalidArgument) << url;
      EXPECT_NE(o.status().message().find("redis URL"), std::string::npos) << url;
    }
  }
  EXPECT_NE(ParseRedisUrl("rediss://h:1").status().message().find("TLS"), std::string::npos);
}

TEST(ScriptTest, Sha1AndEvalRequest) {
  Script s("return 1");
  EXPECT_EQ(s.sha1, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  Request r = Eval(s, {"k1", "k2"}, {"a"});
  EXPECT_EQ(r.argv, (Argv{"EVALSHA", s.sha1, "2", "k1", "k2", "a"}));
  EXPECT_EQ(r.key, 3);
  EXPECT_EQ(Eval(s, {}, {"a"}).key, -1);
}

TEST(ClusterConnectTest, NoSeedOrUnreachable) {
  EXPECT_EQ(Cluster::Connect(ClusterOptions{}).status().code(), Status::Code::kInvalidArgument);
  ClusterOptions options;
  options.seeds = {"127.0.0.1:1"};  // nothing listens on port 1
  Result<std::unique_ptr<Cluster>> c = Cluster::Connect(options);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(c.status().message().find("127.0.0.1:1"), std::string::npos) << c.status().ToString();
}

// One 3-master cluster for the tests below (each connects its own client).
class ClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<std::unique_ptr<LocalCluster>> local = LocalCluster::Start(3, 0);
    if (!local.ok()) {
      start_error_ = new std::string(local.status().ToString());
      return;
    }
    local_ = std::move(local).value().release();
  }
  static void TearDownTestSuite() {
    delete local_;
    local_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(local_, nullptr) << *start_error_;
    Result<ClusterOptions> options = ParseRedisUrl("redis://" + local_->seeds());
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    Result<std::unique_ptr<Cluster>> c = Cluster::Connect(*options);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
  }

  // A command on a node that must succeed; returns the reply.
  Reply Admin(const std::string& node, const Argv& argv) {
    Result<Reply> r = cluster_->RunOnNode(node, argv);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return Reply{};
    EXPECT_FALSE(r->is_error()) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << " on "
                                << node << ": " << r->str;
    return *r;
  }

  static LocalCluster* local_;
  static std::string* start_error_;
  std::unique_ptr<Cluster> cluster_;
};

LocalCluster* ClusterTest::local_ = nullptr;
std::string* ClusterTest::start_error_ = nullptr;

TEST_F(ClusterTest, SlotMapHasThreeMasters) {
  std::vector<std::string> masters = cluster_->Masters();
  EXPECT_EQ(masters.size(), 3u);
  EXPECT_EQ(cluster_->MasterForSlot(0), masters[0]);
  for (uint16_t slot : {0, 5000, 10000, 16383}) EXPECT_FALSE(cluster_->MasterForSlot(slot).empty());
}

TEST_F(ClusterTest, KeySlotAgreesWithServer) {
  std::string master = cluster_->Masters()[0];
  for (const std::string& key : std::vector<std::string>{"123456789", "foo", "{user1000}.following",
                                                         "foo{}{bar}", "foo{{bar}}zap", "a{b}c", "",
                                                         "}{", std::string("\x00\xff{\x01}", 5)}) {
    Reply r = Admin(master, {"CLUSTER", "KEYSLOT", key});
    EXPECT_EQ(r.integer, KeySlot(key)) << key;
  }
  for (int i = 0; i < 200; ++i) {
    std::string key = "k" + std::to_string(i * 7919);
    EXPECT_EQ(Admin(master, {"CLUSTER", "KEYSLOT", key}).integer, KeySlot(key)) << key;
  }
}

TEST_F(ClusterTest, SetGetThousandKeysPipelined) {
  std::vector<Request> sets, gets;
  std::map<std::string, int> per_master;
  for (int i = 0; i < 1000; ++i) {
    std::string key = "key:" + std::to_string(i);
    sets.push_back({{"SET", key, "value:" + std::to_string(i)}});
    gets.push_back({{"GET", key}});
    ++per_master[cluster_->MasterForSlot(KeySlot(key))];
  }
  EXPECT_EQ(per_master.size(), 3u);  // spread over every master

  Cluster::Stats before = cluster_->stats();
  Result<std::vector<Reply>> r = cluster_->RunAll(sets);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1000u);
  for (const Reply& reply : *r) {
    ASSERT_EQ(reply.type, Reply::Type::kStatus) << reply.DebugString();
    EXPECT_EQ(reply.str, "OK");
  }
  Cluster::Stats after = cluster_->stats();
  EXPECT_EQ(after.requests - before.requests, 1000u);
  EXPECT_EQ(after.round_trips - before.round_trips, 3u);  // one batch per master
  EXPECT_GT(after.bytes_out - before.bytes_out, 1000u * 20);
  EXPECT_EQ(after.bytes_in - before.bytes_in, 1000u * 5);  // "+OK\r\n"
  EXPECT_EQ(after.redirects, before.redirects);

  r = cluster_->RunAll(gets);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ((*r)[i].type, Reply::Type::kString) << i << ": " << (*r)[i].DebugString();
    EXPECT_EQ((*r)[i].str, "value:" + std::to_string(i));
  }
  EXPECT_EQ(cluster_->stats().round_trips - after.round_trips, 3u);
}

TEST_F(ClusterTest, SameKeyKeepsOrderAndAnyMaster) {
  Result<std::vector<Reply>> r = cluster_->RunAll({{{"DEL", "counter"}},
                                                   {{"INCR", "counter"}},
                                                   {{"INCRBY", "counter", "10"}},
                                                   {{"PING"}, -1},
                                                   {{"GET", "counter"}},
                                                   {{"GET", "missing-key"}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[1].integer, 1);
  EXPECT_EQ((*r)[2].integer, 11);
  EXPECT_EQ((*r)[3].str, "PONG");
  EXPECT_EQ((*r)[4].str, "11");
  EXPECT_TRUE((*r)[5].is_nil());
}

TEST_F(ClusterTest, ErrorReplyIsData) {
  Result<std::vector<Reply>> r = cluster_->RunAll({{{"SET", "a-string", "x"}},
                                                   {{"LPUSH", "a-string", "y"}},
                                                   {{"GET", "a-string"}},
                                                   {{"NOSUCHCOMMAND", "k"}},
                                                   {{"MGET", "{a}1", "{b}2"}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].str, "OK");
  ASSERT_TRUE((*r)[1].is_error());
  EXPECT_EQ((*r)[1].str.rfind("WRONGTYPE", 0), 0u) << (*r)[1].str;
  EXPECT_EQ((*r)[2].str, "x");
  ASSERT_TRUE((*r)[3].is_error());
  EXPECT_NE((*r)[3].str.find("unknown command"), std::string::npos) << (*r)[3].str;
  ASSERT_TRUE((*r)[4].is_error());
  EXPECT_EQ((*r)[4].str.rfind("CROSSSLOT", 0), 0u) << (*r)[4].str;
}

TEST_F(ClusterTest, MalformedRequestsAreRefused) {
  EXPECT_EQ(cluster_->Run(Request{}).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(cluster_->Run({{"GET", "k"}, 2}).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(cluster_->Run({{"GET", "k"}, -2}).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(ClusterTest, EvalLoadsScriptOnNoscript) {
  // A body unique to this test: the servers have not seen it.
  Script script(
      "redis.call('SET', KEYS[1], ARGV[1]); "
      "return redis.call('APPEND', KEYS[2], ARGV[1]) -- EvalLoadsScriptOnNoscript");
  std::string node = cluster_->MasterForSlot(KeySlot("{s}a"));
  Reply exists = Admin(node, {"SCRIPT", "EXISTS", script.sha1});
  ASSERT_EQ(exists.elements.size(), 1u);
  EXPECT_EQ(exists.elements[0].integer, 0);

  Cluster::Stats before = cluster_->stats();
  Result<Reply> r = cluster_->Run(cluster_->Eval(script, {"{s}a", "{s}b"}, {"xy"}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->type, Reply::Type::kInteger) << r->DebugString();
  EXPECT_EQ(r->integer, 2);
  // NOSCRIPT, then SCRIPT LOAD + EVALSHA in one pipeline.
  EXPECT_EQ(cluster_->stats().round_trips - before.round_trips, 2u);
  EXPECT_EQ(Admin(node, {"SCRIPT", "EXISTS", script.sha1}).elements[0].integer, 1);

  before = cluster_->stats();
  r = cluster_->Run(cluster_->Eval(script, {"{s}a", "{s}b"}, {"z"}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->integer, 3);  // "xyz"
  EXPECT_EQ(cluster_->stats().round_trips - before.round_trips, 1u);

  // Many evaluations across every master, some loading the script, pipelined together.
  std::vector<Request> evals;
  for (int i = 0; i < 100; ++i) {
    std::string tag = "{e" + std::to_string(i) + "}";
    evals.push_back(cluster_->Eval(script, {tag + "a", tag + "b"}, {"q"}));
  }
  before = cluster_->stats();
  Result<std::vector<Reply>> all = cluster_->RunAll(evals);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  for (const Reply& reply : *all) EXPECT_EQ(reply.type, Reply::Type::kInteger);
  // 3 batches; the 2 masters without the script: one batch more each, one SCRIPT LOAD each.
  EXPECT_EQ(cluster_->stats().round_trips - before.round_trips, 5u);
  for (const std::string& m : cluster_->Masters()) {
    EXPECT_EQ(Admin(m, {"SCRIPT", "EXISTS", script.sha1}).elements[0].integer, 1) << m;
  }

  // A script error is a kError reply.
  Script failing("return redis.call('INCR', KEYS[1]) -- EvalLoadsScriptOnNoscript");
  ASSERT_TRUE(cluster_->Run({{"SET", "not-a-number", "abc"}}).ok());
  r = cluster_->Run(cluster_->Eval(failing, {"not-a-number"}, {}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->is_error()) << r->DebugString();

  // The free Eval does not register the body: NOSCRIPT comes back as data.
  Script unknown("return 'never loaded' -- EvalLoadsScriptOnNoscript");
  r = cluster_->Run(Eval(unknown, {"k"}, {}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->is_error());
  EXPECT_EQ(r->str.rfind("NOSCRIPT", 0), 0u) << r->str;
  cluster_->RegisterScript(unknown);
  r = cluster_->Run(Eval(unknown, {"k"}, {}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->str, "never loaded");
}

// Moves one slot from its master to another one the way redis-cli --cluster reshard does
// (IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE), checking ASK during the move and MOVED after.
TEST_F(ClusterTest, AskDuringMigrationMovedAfter) {
  const std::string key = "{moving}key";
  const uint16_t slot = KeySlot(key);
  Result<Reply> set = cluster_->Run({{"SET", key, "v1"}});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const std::string from = cluster_->MasterForSlot(slot);
  std::string to;
  for (const std::string& m : cluster_->Masters()) {
    if (m != from) to = m;
  }
  ASSERT_FALSE(to.empty());
  const std::string from_id = Admin(from, {"CLUSTER", "MYID"}).str;
  const std::string to_id = Admin(to, {"CLUSTER", "MYID"}).str;
  const std::string s = std::to_string(slot);
  Admin(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id});
  Admin(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id});
  const std::string to_port = to.substr(to.rfind(':') + 1);
  Admin(from, {"MIGRATE", "127.0.0.1", to_port, "", "0", "5000", "KEYS", key});

  // The key has left `from`: it answers ASK; the client asks `to` without changing its map.
  Cluster::Stats before = cluster_->stats();
  Result<Reply> get = cluster_->Run({{"GET", key}});
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->str, "v1");
  EXPECT_EQ(cluster_->stats().redirects - before.redirects, 1u);
  EXPECT_EQ(cluster_->MasterForSlot(slot), from);
  // A new key of the migrating slot goes to `to` as well.
  Result<Reply> set2 = cluster_->Run({{"SET", "{moving}new", "v2"}});
  ASSERT_TRUE(set2.ok()) << set2.status().ToString();
  EXPECT_EQ(set2->str, "OK");

  for (const std::string& m : cluster_->Masters()) {
    Admin(m, {"CLUSTER", "SETSLOT", s, "NODE", to_id});
  }
  // `from` now answers MOVED: the client refreshes its map and asks `to`.
  before = cluster_->stats();
  Result<std::vector<Reply>> gets =
      cluster_->RunAll({{{"GET", key}}, {{"GET", "{moving}new"}}, {{"PING"}, -1}});
  ASSERT_TRUE(gets.ok()) << gets.status().ToString();
  EXPECT_EQ((*gets)[0].str, "v1");
  EXPECT_EQ((*gets)[1].str, "v2");
  EXPECT_EQ(cluster_->stats().redirects - before.redirects, 2u);
  EXPECT_EQ(cluster_->MasterForSlot(slot), to);

  before = cluster_->stats();
  get = cluster_->Run({{"GET", key}});
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->str, "v1");
  EXPECT_EQ(cluster_->stats().redirects, before.redirects);
  EXPECT_EQ(cluster_->stats().round_trips - before.round_trips, 1u);
}

// The servers close the client's connections (CLIENT KILL): the next requests reconnect and
// are answered. The first request is large (several writes per socket): writing on after the
// peer's reset fails with EPIPE, which must not raise SIGPIPE (the default action kills).
TEST_F(ClusterTest, ReconnectsAfterTheServerClosesTheConnection) {
  std::vector<Request> sets, gets;
  for (const std::string& m : cluster_->Masters()) {
    for (int i = 0;; ++i) {
      std::string key = "big:" + std::to_string(i);
      if (cluster_->MasterForSlot(KeySlot(key)) != m) continue;
      sets.push_back({{"SET", key, std::string(8 << 20, 'x')}});
      gets.push_back({{"STRLEN", key}});
      break;
    }
  }
  ASSERT_TRUE(cluster_->RunAll(gets).ok());
  Result<std::unique_ptr<Cluster>> killer =
      Cluster::Connect(*ParseRedisUrl("redis://" + local_->seeds()));
  ASSERT_TRUE(killer.ok()) << killer.status().ToString();
  for (const std::string& m : cluster_->Masters()) {
    Result<Reply> killed =
        (*killer)->RunOnNode(m, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    ASSERT_TRUE(killed.ok()) << killed.status().ToString();
    EXPECT_GE(killed->integer, 1) << m;
  }
  Cluster::Stats before = cluster_->stats();
  Result<std::vector<Reply>> r = cluster_->RunAll(sets);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Reply& reply : *r) EXPECT_EQ(reply.str, "OK");
  EXPECT_EQ(cluster_->stats().reconnects - before.reconnects, 3u);
  r = cluster_->RunAll(gets);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Reply& reply : *r) EXPECT_EQ(reply.integer, 8 << 20);
}

TEST_F(ClusterTest, RunOnEveryMaster) {
  for (const std::string& m : cluster_->Masters()) {
    Result<Reply> info = cluster_->RunOnNode(m, {"INFO", "server"});
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_NE(info->str.find("redis_version:"), std::string::npos);
  }
  Result<Reply> dead = cluster_->RunOnNode("127.0.0.1:1", {"PING"});
  ASSERT_FALSE(dead.ok());
  EXPECT_NE(dead.status().message().find("127.0.0.1:1"), std::string::npos);
}

// 3 masters with one replica each: a master is killed; requests for its slots fail fast with
// a short retry_for, and succeed with the default one once its replica has taken over.
TEST(ClusterFailoverTest, KillMasterThenRequestsSucceed) {
  Result<std::unique_ptr<LocalCluster>> local = LocalCluster::Start(3, 1);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  Result<ClusterOptions> options = ParseRedisUrl((*local)->seeds());
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  Result<std::unique_ptr<Cluster>> c = Cluster::Connect(*options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Cluster& cluster = **c;
  options->retry_for = milliseconds(300);
  Result<std::unique_ptr<Cluster>> impatient = Cluster::Connect(*options);
  ASSERT_TRUE(impatient.ok()) << impatient.status().ToString();

  const std::string victim = cluster.MasterForSlot(0);
  std::vector<Request> sets, gets;
  for (int i = 0; sets.size() < 200; ++i) {
    std::string key = "fo:" + std::to_string(i);
    if (cluster.MasterForSlot(KeySlot(key)) != victim) continue;
    sets.push_back({{"SET", key, "v" + std::to_string(i)}});
    gets.push_back({{"GET", key}});
  }
  Result<std::vector<Reply>> r = cluster.RunAll(sets);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Make sure the replica has the writes before the master dies.
  Result<Reply> waited = cluster.RunOnNode(victim, {"WAIT", "1", "5000"});
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  ASSERT_EQ(waited->integer, 1) << waited->DebugString();

  ASSERT_TRUE((*local)->KillMaster(0).ok());
  EXPECT_EQ(victim, "127.0.0.1:" + std::to_string((*local)->last_killed_port()));

  // Failover takes at least cluster-node-timeout (2 s): 300 ms of retries are not enough.
  auto t0 = std::chrono::steady_clock::now();
  Result<Reply> fast = (*impatient)->Run(gets[0]);
  auto fast_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(fast.status().message().find(victim), std::string::npos) << fast.status().ToString();
  EXPECT_LT(fast_ms, 3000);

  t0 = std::chrono::steady_clock::now();
  r = cluster.RunAll(gets);
  auto failover_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (size_t i = 0; i < gets.size(); ++i) {
    EXPECT_EQ((*r)[i].str, sets[i].argv[2]) << gets[i].argv[1] << ": " << (*r)[i].DebugString();
  }
  EXPECT_NE(cluster.MasterForSlot(0), victim);
  EXPECT_EQ(cluster.Masters().size(), 3u);
  std::cout << "failover: reads served again after " << failover_ms << " ms\n";

  // Writes to those slots go to the new master.
  r = cluster.RunAll(sets);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const Reply& reply : *r) EXPECT_EQ(reply.str, "OK");
}

}  // namespace
}  // namespace harvest::redis
