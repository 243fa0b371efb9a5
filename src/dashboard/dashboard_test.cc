#include "dashboard/dashboard.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace harvest::dashboard {
namespace {

std::filesystem::path AssetDir() {
  const char* root = std::getenv("HARVEST_SOURCE_DIR");
  EXPECT_NE(root, nullptr) << "run through ctest (HARVEST_SOURCE_DIR)";
  return std::filesystem::path(root != nullptr ? root : ".") / "src" / "dashboard" / "assets";
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in) << p;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The values of `attr="..."` in `html`, in order.
std::vector<std::string> AttributeValues(const std::string& html, const std::string& attr) {
  std::vector<std::string> out;
  const std::string key = " " + attr + "=\"";
  for (size_t at = html.find(key); at != std::string::npos; at = html.find(key, at + 1)) {
    size_t start = at + key.size();
    out.push_back(html.substr(start, html.find('"', start) - start));
  }
  return out;
}

// The arguments of `byId('...')` in app.js.
std::set<std::string> IdsUsedByScript(const std::string& js) {
  std::set<std::string> out;
  const std::string key = "byId('";
  for (size_t at = js.find(key); at != std::string::npos; at = js.find(key, at + 1)) {
    size_t start = at + key.size();
    out.insert(js.substr(start, js.find('\'', start) - start));
  }
  return out;
}

TEST(Dashboard, EveryAssetIsEmbeddedAsItIsInTheSourceTree) {
  std::set<std::string> on_disk;
  for (const auto& e : std::filesystem::directory_iterator(AssetDir())) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    on_disk.insert(name);
    const Asset* a = Find("/" + name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ(a->path, "/" + name);
    EXPECT_EQ(a->body, ReadFile(e.path())) << name << " differs from the embedded copy";
  }
  EXPECT_TRUE(on_disk.count("index.html") && on_disk.count("app.js") && on_disk.count("style.css"));
  std::set<std::string> embedded;
  for (const Asset& a : All()) embedded.insert(std::string(a.path.substr(1)));
  EXPECT_EQ(embedded, on_disk);
}

TEST(Dashboard, ContentTypes) {
  ASSERT_NE(Find("/index.html"), nullptr);
  EXPECT_EQ(Find("/index.html")->content_type, "text/html; charset=utf-8");
  ASSERT_NE(Find("/app.js"), nullptr);
  EXPECT_EQ(Find("/app.js")->content_type, "text/javascript; charset=utf-8");
  ASSERT_NE(Find("/style.css"), nullptr);
  EXPECT_EQ(Find("/style.css")->content_type, "text/css; charset=utf-8");
}

TEST(Dashboard, FindByRequestPath) {
  const Asset* index = Find("/index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(Find("/"), index);
  EXPECT_EQ(Find("/?token=x"), index);
  EXPECT_EQ(Find("/app.js?v=2"), Find("/app.js"));
  EXPECT_EQ(Find(""), nullptr);
  EXPECT_EQ(Find("index.html"), nullptr);
  EXPECT_EQ(Find("/missing.js"), nullptr);
  EXPECT_EQ(Find("/../CMakeLists.txt"), nullptr);
  EXPECT_EQ(Find("/assets/app.js"), nullptr);
  EXPECT_EQ(Find("/APP.JS"), nullptr);
}

TEST(Dashboard, PageReferencesOnlyEmbeddedFiles) {
  const Asset* index = Find("/");
  ASSERT_NE(index, nullptr);
  const std::string html(index->body);
  std::vector<std::string> refs = AttributeValues(html, "src");
  for (const std::string& href : AttributeValues(html, "href")) refs.push_back(href);
  EXPECT_NE(std::find(refs.begin(), refs.end(), "app.js"), refs.end());
  EXPECT_NE(std::find(refs.begin(), refs.end(), "style.css"), refs.end());
  for (const std::string& ref : refs) {
    // No external resources (the machine may have no network): relative names only.
    EXPECT_EQ(ref.find("//"), std::string::npos) << ref;
    EXPECT_NE(Find("/" + ref), nullptr) << ref << " is referenced but not embedded";
  }
}

// Stable element ids for browser tests, and every id the script looks up exists.
TEST(Dashboard, ElementIdsOfPageAndScriptAgree) {
  const Asset* index = Find("/");
  const Asset* app = Find("/app.js");
  ASSERT_NE(index, nullptr);
  ASSERT_NE(app, nullptr);
  std::vector<std::string> ids = AttributeValues(std::string(index->body), "id");
  std::set<std::string> id_set(ids.begin(), ids.end());
  EXPECT_EQ(id_set.size(), ids.size()) << "duplicate id in index.html";
  for (const char* id :
       {"chart-pages", "chart-queue", "chart-errors", "state", "host-search", "policy-form",
        "policy-delay", "policy-concurrent", "policy-weight", "policy-submit", "policy-result",
        "pause", "resume", "block", "unblock", "token", "busiest-section"}) {
    EXPECT_TRUE(id_set.count(id)) << "index.html lacks #" << id;
  }
  for (const std::string& id : IdsUsedByScript(std::string(app->body))) {
    EXPECT_TRUE(id_set.count(id)) << "app.js looks up #" << id << ", which index.html lacks";
  }
  // Charts expose how many points they drew.
  EXPECT_NE(index->body.find("id=\"chart-pages\" data-points=\"0\""), std::string_view::npos);
  EXPECT_NE(app->body.find("dataset.points"), std::string_view::npos);
}

}  // namespace
}  // namespace harvest::dashboard
