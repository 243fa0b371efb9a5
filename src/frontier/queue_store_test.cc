#include "frontier/queue_store.h"

#include <gtest/gtest.h>

namespace harvest::frontier {
namespace {

UrlItem Item(const std::string& url, int priority) {
  UrlItem item;
  item.url = url;
  item.host = "a.test";
  item.priority = priority;
  return item;
}

TEST(MemoryQueueStore, PriorityThenFifoThenFront) {
  auto store = NewMemoryQueueStore(4);
  store->RegisterHost(0, "a.test");
  store->RegisterHost(1, "b.test");
  EXPECT_FALSE(store->Pop(0).has_value());
  store->Push(0, Item("low", 3), false);
  store->Push(0, Item("one", 1), false);
  store->Push(0, Item("two", 1), false);
  store->Push(0, Item("front", 1), true);
  store->Push(0, Item("top", 0), false);
  store->Push(1, Item("other", 0), false);
  EXPECT_EQ(store->Size(0), 5u);
  EXPECT_EQ(store->Size(1), 1u);
  std::vector<std::string> order;
  while (auto item = store->Pop(0)) order.push_back(item->url);
  EXPECT_EQ(order, (std::vector<std::string>{"top", "front", "one", "two", "low"}));
  EXPECT_EQ(store->Size(0), 0u);
  EXPECT_EQ(store->Size(1), 1u);
}

TEST(MemoryQueueStore, Drain) {
  auto store = NewMemoryQueueStore(2);
  store->RegisterHost(0, "a.test");
  store->Push(0, Item("b", 1), false);
  store->Push(0, Item("a", 0), false);
  auto items = store->Drain(0);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].url, "a");
  EXPECT_EQ(store->Size(0), 0u);
  store->Push(0, Item("c", 1), false);  // usable after a drain
  EXPECT_EQ(store->Pop(0)->url, "c");
}

}  // namespace
}  // namespace harvest::frontier
